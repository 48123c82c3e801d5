"""``KafkaReplicated``: a broker down under a replicated cluster is said apart from the
app's own state (issue 26): the app keeps processing, so it stays Running and Balanced,
not Degraded, while the condition names the replicas out of sync; partitions with no
leader are named as what stops their tasks; one event per change."""

from __future__ import annotations

from segue.operator.scaling import Replication, replication_unread

from .sim import Sim

WHOLE = Replication(brokers=(1, 2, 3), partitions=12)
BROKER_2_DOWN = Replication(
    brokers=(1, 3),
    partitions=12,
    under_replicated={("in", p): (2,) for p in range(6)},
)


def kafka(sim: Sim) -> tuple[str, str, str]:
    c = sim.plans[-1].assessment.condition("KafkaReplicated")
    return c.status, c.reason, c.message


def events(sim: Sim) -> list[tuple[str, str]]:
    return [(e.type, e.reason) for e in sim.plans[-1].events]


def test_not_read_yet_is_unknown_and_says_nothing() -> None:
    sim = Sim(replicas=2)
    sim.run()
    assert kafka(sim)[:2] == ("Unknown", "NotObserved")
    assert not any(
        r.startswith("Kafka") for p in sim.plans for _, r in [(0, e.reason) for e in p.events]
    )


def test_a_broker_down_is_said_without_calling_the_app_broken_and_back_in_sync() -> None:
    sim = Sim(replicas=2, replication=WHOLE)
    sim.run()
    assert kafka(sim)[:2] == ("True", "AllInSync")
    assert "all 12 partition(s)" in kafka(sim)[2]
    sim.replication = BROKER_2_DOWN
    sim.step()
    status, reason, message = kafka(sim)
    assert (status, reason) == ("False", "UnderReplicated")
    assert "6 of 12 partition(s)" in message
    assert "on broker(s) 2 (brokers up: 1, 3)" in message
    assert "in-0, in-1, in-2, in-3, in-4 and 1 more" in message
    assert ("Warning", "UnderReplicated") in events(sim)
    assessment = sim.plans[-1].assessment
    assert assessment.phase == "Running"
    assert assessment.condition("Balanced").status == "True"
    assert assessment.condition("Degraded").status == "False"
    sim.step()  # still so: said once
    assert ("Warning", "UnderReplicated") not in events(sim)
    sim.replication = WHOLE
    sim.step()
    assert kafka(sim)[:2] == ("True", "AllInSync")
    assert ("Normal", "KafkaReplicasInSync") in events(sim)


def test_partitions_without_a_leader_are_named_as_what_stops_their_tasks() -> None:
    sim = Sim(replicas=2, replication=WHOLE)
    sim.run()
    sim.replication = Replication(brokers=(1,), partitions=12, offline=(("in", 4),))
    sim.step()
    status, reason, message = kafka(sim)
    assert (status, reason) == ("False", "PartitionsOffline")
    assert "in-4" in message
    assert "cannot run" in message
    assert ("Warning", "PartitionsOffline") in events(sim)


def test_while_the_cluster_cannot_be_read_the_condition_is_unknown_and_says_why() -> None:
    from segue.operator.scaling import KAFKA_UNAVAILABLE, Condition, replication_unreadable

    said = replication_unreadable("KafkaError{code=_TRANSPORT}")
    assert said == Condition(
        "KafkaReplicated",
        "Unknown",
        KAFKA_UNAVAILABLE,
        "the cluster cannot be read: KafkaError{code=_TRANSPORT}",
    )


def test_kafka_gone_after_the_look_turns_the_looks_true_unknown() -> None:
    """The step read the cluster whole, then its input sample failed: the plan it
    carries out says Unknown with why, everything else of it as decided."""
    sim = Sim(replicas=2, replication=WHOLE)
    sim.run()
    plan = sim.plans[-1]
    assert kafka(sim)[0] == "True"
    unread = replication_unread(plan, "committed offsets of group g: broker transport failure")
    said = unread.assessment.condition("KafkaReplicated")
    assert (said.status, said.reason) == ("Unknown", "KafkaUnavailable")
    assert "broker transport failure" in said.message
    assert [c.type for c in unread.assessment.conditions if c.type != "KafkaReplicated"] == [
        c.type for c in plan.assessment.conditions if c.type != "KafkaReplicated"
    ]
    assert (unread.publish, unread.events) == (plan.publish, plan.events)
