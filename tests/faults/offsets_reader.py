"""A child process that prints an app's committed input offsets, one JSON line per
sample: ``[monotonic time, {"topic:partition": offset}]``.

Why a process: after a broker restart librdkafka's ``Consumer.committed`` was seen to
hang for good, and the admin API's ``list_consumer_group_offsets`` to crash the
interpreter (SIGSEGV) while the broker was away (confluentinc/confluent-kafka-python
#1982). ``progress.Progress`` reads these lines and, when they stop, kills this
process and starts another, so neither can take the test down.

Usage: ``python -m tests.faults.offsets_reader BOOTSTRAP GROUP PARTITIONS TOPIC...``
"""

from __future__ import annotations

import json
import sys
import time

from confluent_kafka import Consumer, KafkaException, TopicPartition


def main(argv: list[str]) -> None:
    bootstrap, group, count, *topics = argv
    partitions = [TopicPartition(t, p) for t in topics for p in range(int(count))]
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "enable.auto.commit": False,
            # The offsets of completed transactions, which is what "a task commits"
            # means. read_committed would ask for stable offsets (KIP-447): after a
            # broker restart the group coordinator was seen to answer no such read
            # for 15 s and more while plain reads saw every offset advance.
            "isolation.level": "read_uncommitted",
        }
    )
    while True:
        try:
            found = consumer.committed(partitions, timeout=2)
        except KafkaException:
            found = None  # the broker is away: no sample
        if found is not None:
            sample = {f"{tp.topic}:{tp.partition}": tp.offset for tp in found}
            print(json.dumps([time.monotonic(), sample]), flush=True)
        time.sleep(0.25)


if __name__ == "__main__":
    if len(sys.argv) < 5 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2)
    main(sys.argv[1:])
