"""Reproduce the hanging transaction Kafka makes in a single broker's controlled shutdown.

Kafka 4.3 records a transaction that commits in the first moments of its only
broker's controlled shutdown as complete (COMPLETE_COMMIT in ``__transaction_state``)
yet writes no commit marker on the partitions that were leaderless at that instant:
the transaction marker sender takes a partition without a leader for a deleted one
and skips it. Those partitions stay open for good (docs/reliability.md, "A
transaction committed while the only broker stops").

This starts a broker of its own, runs ``--committers`` transactional producers
shaped like tasks (a record to a sink and to a changelog partition, the input
offset, commit) as fast as they go, stops the broker (SIGTERM) under them, starts it
again, fences every transactional id (as new owners would: what was merely open is
aborted then) and reports what is still open: changelog and sink partitions whose
last stable offset is below the high watermark, and input offsets whose stable fetch
does not answer. It repeats until something hangs or ``--attempts`` run out; the
race is narrow, so runs differ (from the first attempt to none in 12).

    .venv/bin/python -m bench.hanging.run [--committers 24] [--attempts 12]
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
import uuid
from pathlib import Path

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from segue.stack import KafkaBroker
from segue.stack.paths import Binaries
from segue.worker.kafka import Admin, committed_offsets, input_consumer_config, producer_config
from tests.faults.lso import ends
from tests.worker.harness import create_topics


def commit_until(stop: threading.Event, bootstrap: str, app: str, i: int) -> None:
    """Task ``i``'s transactions, until ``stop`` or its broker goes away."""
    config = {**producer_config(bootstrap, f"{app}-{i}", {}), "linger.ms": 1, "log_level": 0}
    producer = Producer(config)
    group = Consumer(input_consumer_config(bootstrap, app, {"log_level": 0}))
    offset = int(time.time())
    try:
        producer.init_transactions(30)
        while not stop.is_set():
            producer.begin_transaction()
            producer.produce(f"{app}-out", b"x", partition=i % 2)
            producer.produce(f"{app}-cl", b"v", key=b"k", partition=i)
            offset += 1
            tp = TopicPartition(f"{app}-in", i, offset)
            producer.send_offsets_to_transaction([tp], group.consumer_group_metadata(), 3)
            producer.commit_transaction(3)
    except KafkaException:
        pass  # abandoned, as by a crash


def fence(bootstrap: str, app: str, n: int) -> None:
    producers = [
        Producer({**producer_config(bootstrap, f"{app}-{i}", {}), "log_level": 0}) for i in range(n)
    ]
    threads = [threading.Thread(target=p.init_transactions, args=(30,)) for p in producers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def still_open(bootstrap: str, app: str, n: int) -> list[str]:
    admin = Admin(bootstrap, {})
    parts = [(f"{app}-cl", i) for i in range(n)] + [(f"{app}-out", p) for p in range(2)]
    found = [
        f"{t}[{p}] last stable {lso} < high watermark {high}"
        for (t, p), (lso, high) in ends(admin, parts).items()
        if lso < high
    ]
    consumer = Consumer(input_consumer_config(bootstrap, app, {"log_level": 0}))
    for i in range(n):
        try:
            committed_offsets(consumer, [(f"{app}-in", i)], timeout=3.0)
        except KafkaException:
            found.append(f"{app}-in[{i}] committed offsets held")
    consumer.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--committers", type=int, default=24)
    parser.add_argument("--attempts", type=int, default=12)
    args = parser.parse_args()
    n = args.committers
    with tempfile.TemporaryDirectory(prefix="segue-hanging-") as work:
        broker = KafkaBroker(Path(work), Binaries.locate())
        broker.start()
        try:
            bootstrap, app = broker.bootstrap_servers, f"hang-{uuid.uuid4().hex[:6]}"
            create_topics(bootstrap, {f"{app}-in": n, f"{app}-out": 2, f"{app}-cl": n})
            for attempt in range(1, args.attempts + 1):
                stop = threading.Event()
                for i in range(n):
                    threading.Thread(
                        target=commit_until, args=(stop, bootstrap, app, i), daemon=True
                    ).start()
                time.sleep(3)
                broker.stop()  # SIGTERM: the controlled shutdown
                stop.set()
                broker.start()
                fence(bootstrap, app, n)
                found = still_open(bootstrap, app, n)
                print(f"attempt {attempt}: {'; '.join(found) or 'nothing hangs'}", flush=True)
                if found:
                    print(f"broker log: {Path(work) / 'server.log'} (kept until exit)")
                    return
        finally:
            broker.stop()


if __name__ == "__main__":
    main()
