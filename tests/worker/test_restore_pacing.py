"""A learner paced by ``--standby-restore-rate`` on the real broker: it restores at the rate
set, and once promoted, the tail its fence left (an abort marker) is read at once.

librdkafka starts fetching a resumed partition only about a second after ``resume()``;
the restorer pauses a paced learner's changelog between budgets and resumes it to
promote the learner, so without its seek on resume every batch added a second (a rate
of 390 records/s set to 500) and every promotion of a paced learner waited a second
before its task ran."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer

from segue.worker.serdes import INT64, STRING
from segue.worker.state.engine import Engine
from segue.worker.state.restore import Restorer, restore_consumer_config
from segue.worker.state.store import TaskStore
from segue.worker.topology import StoreSpec

from .harness import create_topics

pytestmark = pytest.mark.worker

RATE = 500.0  # records/s
RECORDS = 1500
SPEC = StoreSpec("counts", STRING, INT64)


def committed(bootstrap: str, topic: str, transactional_id: str) -> Producer:
    """``RECORDS`` records in one committed transaction, then one more in a transaction
    left open: a learner follows up to it, the promotion's fence aborts it."""
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id})
    producer.init_transactions()
    producer.begin_transaction()
    for i in range(RECORDS):
        producer.produce(topic, key=f"w{i}", value=(1).to_bytes(8, "big"))
    producer.commit_transaction()
    producer.begin_transaction()
    producer.produce(topic, key="open", value=(1).to_bytes(8, "big"))
    producer.flush()
    return producer


def test_a_paced_learner_keeps_its_rate_and_runs_at_once_when_promoted(
    kafka: Any, tmp_path: Path, topic_name: str
) -> None:
    bootstrap, changelog = kafka.bootstrap_servers, f"{topic_name}-changelog"
    create_topics(bootstrap, {changelog: 1})
    committed(bootstrap, changelog, f"{topic_name}-1_0")
    consumer = Consumer(restore_consumer_config(bootstrap, topic_name, {}))
    restorer = Restorer(consumer, standby_rate=RATE)
    store = TaskStore(SPEC, changelog, 0, Engine(tmp_path / "store"))
    try:
        began = time.monotonic()
        restorer.add("1_0", store, target=None, end=RECORDS + 1)
        while store.offset < RECORDS + 1 and time.monotonic() - began < 30:
            restorer.poll(0.05)
        paced = time.monotonic() - began
        assert store.offset == RECORDS + 1, store.offset  # up to the open transaction
        rate = RECORDS / paced
        # the first budget is read at once, each later one waits its share of the rate
        assert rate <= RATE * 1.25, f"{rate:.0f} records/s against {RATE:.0f} set"
        assert rate >= RATE * 0.8, f"{rate:.0f} records/s against {RATE:.0f} set"

        fence = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"{topic_name}-1_0"})
        fence.init_transactions()  # the promotion's fence: the open transaction aborted
        _, end = consumer.get_watermark_offsets(consumer.assignment()[0], timeout=10, cached=False)
        assert end == RECORDS + 3  # the open record and its abort marker
        promoted = time.monotonic()
        assert restorer.retarget("1_0", "counts", end)
        done: list[str] = []
        while not done and time.monotonic() - promoted < 10:
            done = restorer.poll(0.0)
        took = time.monotonic() - promoted
        assert done == ["1_0"], f"the tail not read within 10 s (at {store.offset} of {end})"
        assert store.offset == end
        assert took < 0.5, f"the promoted learner's tail took {took:.2f} s"
        print(f"paced {rate:.0f} records/s (set {RATE:.0f}); tail after promotion {took:.3f} s")
    finally:
        consumer.close()
        store.close()
