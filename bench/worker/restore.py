"""Restoration throughput against its limit, the raw consume rate.

Writes a changelog partition of N records transactionally (commit markers every
``txn`` records), then reads it back twice with the same read_committed consumer
settings: once only counting (the raw consume rate, the limit for a Python
worker), once through the worker's ``Restorer`` into a RocksDB store, up to the
last stable offset. Reports records/s and MB/s (keys + values) for both.

    .venv/bin/python -m bench.worker.restore [--records 1000000] [--bootstrap HOST:PORT]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import uuid
from pathlib import Path

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from segue.worker import BYTES
from segue.worker.state.engine import Engine
from segue.worker.state.restore import Restorer, restore_consumer_config
from segue.worker.state.store import TaskStore
from segue.worker.topology import StoreSpec


def fill(bootstrap: str, topic: str, *, records: int, keys: int, value_bytes: int, txn: int) -> int:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config={"cleanup.policy": "compact"})])[
        topic
    ].result(30)
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": topic,
            "linger.ms": 20,
            "batch.size": 1_000_000,
        }
    )
    producer.init_transactions(30)
    value = os.urandom(value_bytes)
    payload = 0
    for start in range(0, records, txn):
        producer.begin_transaction()
        for i in range(start, min(records, start + txn)):
            key = b"key-%012d" % (i % keys)
            while True:
                try:
                    producer.produce(topic, key=key, value=value, partition=0)
                    break
                except BufferError:
                    producer.poll(0.05)
            payload += len(key) + len(value)
        producer.commit_transaction(60)
    return payload


def raw_consume(bootstrap: str, topic: str, end: int) -> tuple[int, int, float]:
    config = restore_consumer_config(bootstrap, f"raw-{uuid.uuid4()}", {})
    consumer = Consumer(config)
    consumer.assign([TopicPartition(topic, 0, 0)])
    count = size = 0
    began = time.perf_counter()
    position = 0
    while position < end:
        for msg in consumer.consume(10_000, 1.0):
            err = msg.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    position = max(position, msg.offset())
                continue
            count += 1
            size += len(msg.key()) + len(msg.value())
            position = msg.offset() + 1
    elapsed = time.perf_counter() - began
    consumer.close()
    return count, size, elapsed


def restore(bootstrap: str, topic: str, end: int, store_dir: Path) -> tuple[int, float]:
    consumer = Consumer(restore_consumer_config(bootstrap, f"restore-{uuid.uuid4()}", {}))
    restorer = Restorer(consumer, batch_size=10_000)
    store = TaskStore(StoreSpec("s", BYTES, BYTES), topic, 0, Engine(store_dir))
    began = time.perf_counter()
    restorer.add("0_0", store, target=end, end=end)
    while not restorer.poll(1.0):
        pass
    elapsed = time.perf_counter() - began
    records = restorer.restored_total[("0_0", "s")]
    store.close()
    consumer.close()
    return records, elapsed


def main(bootstrap: str, records: int, keys: int, value_bytes: int, txn: int) -> str:
    topic = f"restore-bench-{uuid.uuid4().hex[:8]}"
    payload = fill(bootstrap, topic, records=records, keys=keys, value_bytes=value_bytes, txn=txn)
    probe = Consumer(restore_consumer_config(bootstrap, "probe", {}))
    end = probe.get_watermark_offsets(TopicPartition(topic, 0), timeout=10, cached=False)[1]
    probe.close()
    raw_n, raw_bytes, raw_s = raw_consume(bootstrap, topic, end)
    with tempfile.TemporaryDirectory(prefix="segue-restore-") as tmp:
        restored, restore_s = restore(bootstrap, topic, end, Path(tmp) / "store")
    assert raw_n == restored == records, (raw_n, restored, records)
    mb = payload / 1e6
    return "\n".join(
        [
            f"changelog: {records:,} records ({keys:,} keys, {value_bytes}-byte values, "
            f"{mb:.1f} MB of keys+values), a commit marker every {txn:,} records, "
            f"end offset {end:,}",
            "",
            "| read | records/s | MB/s | seconds |",
            "|---|---|---|---|",
            f"| raw consume (read_committed, count only) | {raw_n / raw_s:,.0f} | "
            f"{raw_bytes / 1e6 / raw_s:.1f} | {raw_s:.2f} |",
            f"| restore into RocksDB (Restorer) | {restored / restore_s:,.0f} | "
            f"{mb / restore_s:.1f} | {restore_s:.2f} |",
            f"| restore / raw | {(restored / restore_s) / (raw_n / raw_s):.0%} | | |",
        ]
    )


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bootstrap", help="an existing broker; default: start one")
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=200_000)
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--txn", type=int, default=10_000)
    args = parser.parse_args()
    if args.bootstrap:
        print(main(args.bootstrap, args.records, args.keys, args.value_bytes, args.txn))
        return
    from bench.worker.stack import local_stack

    with local_stack(kube=False) as (broker, _):
        print(main(broker.bootstrap_servers, args.records, args.keys, args.value_bytes, args.txn))


if __name__ == "__main__":
    cli()
