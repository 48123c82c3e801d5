"""The ``KafkaReplicated`` condition: is the Kafka cluster under the app whole?

A replicated cluster (replication factor 3, ``min.insync.replicas`` 2) keeps serving with
a broker down: the app keeps processing, so nothing in ``Balanced`` or ``Degraded``
changes, and calling the app broken would be false. Yet a platform team must hear that
the next broker lost stops the app's writes. This condition says it apart from the app's
own state, from the partitions of the app's topics (:class:`~.model.Replication`, read
by the shell from the cluster's metadata each look): which replicas are out of their
ISR, on which brokers, and which partitions have no leader at all (their tasks cannot
run). :mod:`.core` adds it to the assessment and posts an event when it changes.
"""

from __future__ import annotations

from dataclasses import replace

from .model import Condition, Event, Plan, Replication, World

TYPE = "KafkaReplicated"
KAFKA_UNAVAILABLE = "KafkaUnavailable"
"""The reason, in ``Degraded`` and here, while the shell cannot read the app's topics
(brokers down, a wrong password): nothing is decided and the autoscaling signal is
unknown (:mod:`segue.operator.metricsapi` reads it back from the status)."""
NAMED = 5  # partitions named in a message; the rest counted
TOPICS = "the app's input and changelog topics"  # the ones the look reads


def _named(parts: list[tuple[str, int]]) -> str:
    shown = ", ".join(f"{t}-{p}" for t, p in parts[:NAMED])
    return shown + (f" and {len(parts) - NAMED} more" if len(parts) > NAMED else "")


def replication_condition(seen: Replication | None) -> Condition:
    if seen is None:
        return Condition(TYPE, "Unknown", "NotObserved", "the app's topics were not read yet")
    brokers = ", ".join(str(b) for b in seen.brokers) or "none"
    if seen.offline:
        offline = sorted(seen.offline)
        return Condition(
            TYPE,
            "False",
            "PartitionsOffline",
            f"{len(offline)} partition(s) of {TOPICS} have no leader, so their tasks cannot "
            f"run until a broker holding them is back: {_named(offline)} (brokers up: "
            f"{brokers})",
        )
    if seen.under_replicated:
        lagging = sorted(seen.under_replicated)
        out = sorted({b for r in seen.under_replicated.values() for b in r})
        return Condition(
            TYPE,
            "False",
            "UnderReplicated",
            f"{len(lagging)} of {seen.partitions} partition(s) of {TOPICS} have replicas out "
            f"of sync, on broker(s) {', '.join(map(str, out))} (brokers up: {brokers}): the "
            f"app keeps processing while each keeps min.insync.replicas in sync; one more "
            f"broker lost can stop its writes: {_named(lagging)}",
        )
    return Condition(
        TYPE,
        "True",
        "AllInSync",
        f"all {seen.partitions} partition(s) of {TOPICS} have every replica in sync "
        f"(brokers up: {brokers})",
    )


def replication_unreadable(why: str) -> Condition:
    """While the cluster cannot be read at all, nothing is known of its replicas: a
    ``True`` left from the last look would say all is well through an outage."""
    return Condition(TYPE, "Unknown", KAFKA_UNAVAILABLE, f"the cluster cannot be read: {why}")


def replication_unread(plan: Plan, why: str) -> Plan:
    """``plan`` with ``KafkaReplicated`` Unknown: Kafka stopped answering after the step's
    look (its input offsets could not be sampled), so the look's ``True`` is no longer
    known to hold; the metrics API already answers unknown (issue 26)."""
    kept = tuple(c for c in plan.assessment.conditions if c.type != TYPE)
    said = (*kept, replication_unreadable(why))
    return replace(plan, assessment=replace(plan.assessment, conditions=said))


def replication_events(world: World, now: Condition) -> list[Event]:
    """A Warning when the condition turns False (or its reason changes), a Normal when
    it is True again; nothing while it stays as it was, or before the first reading."""
    before = world.conditions.get(TYPE)
    if now.status == "Unknown" or (before is not None and before.reason == now.reason):
        return []
    if now.status == "False":
        return [Event("Warning", now.reason, now.message)]
    if before is not None and before.status == "False":
        return [Event("Normal", "KafkaReplicasInSync", now.message)]
    return []
