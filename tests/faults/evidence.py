"""What the broker holds for a word whose exact counts failed: every record of it in
its partition read uncommitted, each marked with whether a committed reader sees it
too. An aborted count, a count never written and a count committed twice look the
same in the committed read alone; side by side they say which it was, in CI's output
where the broker's log is gone."""

from __future__ import annotations

from confluent_kafka import Consumer, KafkaError, TopicPartition

from segue.worker.kafka import Admin


def _read(bootstrap: str, topic: str, partition: int, isolation: str) -> dict[int, bytes]:
    """offset -> value of every record in the partition up to its end, at ``isolation``."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"evidence-{isolation}",
            "isolation.level": isolation,
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    out: dict[int, bytes] = {}
    try:
        consumer.assign([TopicPartition(topic, partition, 0)])
        for _ in range(120):  # a partition of a test's size ends within seconds
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error() is not None:
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    break
                continue
            out[int(msg.offset() or 0)] = bytes(msg.key() or b"") + b"=" + bytes(msg.value() or b"")
    finally:
        consumer.close()
    return out


def word_records(bootstrap: str, topic: str, partition: int, word: str, limit: int = 40) -> str:
    """``word``'s counts in ``topic[partition]``, in offset order: ``count@offset``,
    with ``!`` after those a read_committed reader does not see (aborted or open)."""
    try:
        raw = _read(bootstrap, topic, partition, "read_uncommitted")
        seen = _read(bootstrap, topic, partition, "read_committed")
    except Exception as exc:  # evidence is best effort: never hide the failure itself
        return f"(could not read {topic}[{partition}]: {exc})"
    prefix = word.encode() + b"="
    marks = []
    for offset in sorted(raw):
        if raw[offset].startswith(prefix):
            count = int.from_bytes(raw[offset][len(prefix) :], "big", signed=True)
            marks.append(f"{count}@{offset}{'' if offset in seen else '!'}")
    aborted = [i for i, m in enumerate(marks) if m.endswith("!")]
    if aborted:  # the part that tells the story: from a little before the first abort
        marks = marks[max(0, aborted[0] - 3) :]
    return f"{word} in {topic}[{partition}] ('!': not committed): {' '.join(marks[:limit])}"


def shortfall(bootstrap: str, group: str, source: str, output: str) -> str:
    """Why a committed read of ``output`` came up short, once the broker serves: each
    output partition's last stable offset against its high watermark (a gap that
    stays is a transaction left open or hanging) and each input partition's offset
    committed by ``group`` against its end (a gap that stays is input not processed)."""
    try:
        admin = Admin(bootstrap, {})
        counts = admin.partition_counts()
        outs = [(output, p) for p in range(counts.get(output, 0))]
        ins = [(source, p) for p in range(counts.get(source, 0))]
        stable, high = admin.end_offsets(outs), admin.high_watermarks(outs + ins)
        reader = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
        try:
            found = reader.committed([TopicPartition(t, p) for t, p in ins], timeout=10)
        finally:
            reader.close()
        done = {(tp.topic, tp.partition): tp.offset for tp in found}
    except Exception as exc:  # evidence is best effort: never hide the failure itself
        return f"(could not read the ends: {exc})"
    lines = [f"{t}[{p}]: stable {stable.get((t, p))} of {high.get((t, p))}" for t, p in outs]
    lines += [f"{t}[{p}]: committed {done.get((t, p))} of {high.get((t, p))}" for t, p in ins]
    return "\n".join(lines)
