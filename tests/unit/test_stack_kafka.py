"""Pure parts of the local Kafka broker."""

from __future__ import annotations


def test_kafka_cluster_ids_never_look_like_options() -> None:
    from segue.stack.kafka import new_cluster_id

    ids = [new_cluster_id() for _ in range(2000)]  # ~1 in 64 raw ids starts with '-'
    assert all(len(i) == 22 and not i.startswith("-") for i in ids)
    assert len(set(ids)) == len(ids)
