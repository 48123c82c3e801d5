"""Resuming a paused changelog partition: librdkafka's ``resume()`` alone against
``resume()`` and a ``seek()`` to the position (what ``segue.worker.state.restore`` does).

The restorer pauses a learner's changelog between the budgets of
``--standby-restore-rate`` and resumes it for the next one, or to promote the learner. Each
round: a read_committed consumer (the restorer's configuration) reads a batch, pauses
the partition, waits ``--pause`` s, resumes it; the figure is the time from the resume
to the next batch. Both modes alternate on one broker; medians and their ratio.

    .venv/bin/python -m bench.worker.resume [--rounds 10] [--bootstrap HOST:PORT]
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from bench.host import describe
from segue.worker.state.restore import restore_consumer_config

BATCH = 500


def changelog(bootstrap: str, records: int) -> str:
    """A one-partition topic of ``records`` committed records."""
    topic = f"resume-bench-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept until the topic is made
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result()
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": topic})
    producer.init_transactions()
    producer.begin_transaction()
    for i in range(records):
        producer.produce(topic, key=str(i).encode(), value=b"x")
    producer.commit_transaction()
    return topic


def waits(bootstrap: str, rounds: int, pause: float, seek: bool) -> list[float]:
    """Seconds from each resume to the batch after it."""
    topic = changelog(bootstrap, BATCH * (rounds + 1))
    consumer = Consumer(restore_consumer_config(bootstrap, topic, {}))
    partition = TopicPartition(topic, 0)
    consumer.assign([TopicPartition(topic, 0, 0)])
    position, resumed, out = 0, None, []
    try:
        while len(out) < rounds:
            got = [m for m in consumer.consume(BATCH, 0.05) if m.error() is None]
            if not got:
                continue
            if resumed is not None:
                out.append(time.monotonic() - resumed)
            position = int(got[-1].offset() or 0) + 1
            consumer.pause([partition])
            time.sleep(pause)
            consumer.resume([partition])
            if seek:
                consumer.seek(TopicPartition(topic, 0, position))
            resumed = time.monotonic()
    finally:
        consumer.close()
    return out


def main(bootstrap: str, rounds: int, pause: float) -> str:
    plain, seeking = [], []
    for _ in range(2):  # alternate: a slow stretch of the host hits both
        plain += waits(bootstrap, rounds // 2, pause, seek=False)
        seeking += waits(bootstrap, rounds // 2, pause, seek=True)
    a, b = statistics.median(plain), statistics.median(seeking)
    return "\n".join(
        [
            describe(),
            f"{len(plain)} resumes each after a {pause} s pause, batches of {BATCH}; medians",
            "",
            "| after resume() | s to the next batch | max |",
            "|---|---|---|",
            f"| nothing more (librdkafka) | {a:.3f} | {max(plain):.3f} |",
            f"| seek() to the position (segue.worker) | {b:.3f} | {max(seeking):.3f} |",
            "",
            f"ratio {a / b:.0f}x",
        ]
    )


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", help="an existing broker; default: start one")
    parser.add_argument("--rounds", type=int, default=10, help="resumes per mode (default 10)")
    parser.add_argument("--pause", type=float, default=0.2, help="seconds paused (default 0.2)")
    args = parser.parse_args()
    if args.bootstrap:
        print(main(args.bootstrap, args.rounds, args.pause))
        return
    from bench.worker.stack import local_stack

    with local_stack(kube=False) as (broker, _):
        print(main(broker.bootstrap_servers, args.rounds, args.pause))


if __name__ == "__main__":
    cli()
