"""Who is in a consumer group right now, as its coordinator says (DescribeConsumerGroups).

A Kafka Streams group waits at each rebalance for every member its coordinator knows, so
a member whose process went away without leaving (killed, or an app that closes without
leaving) holds every rebalance until its session ends (``session.timeout.ms``, 45 s by
default), and under exactly-once the live members commit nothing meanwhile. The
operator's status says so (``segue.operator.kstreams.waits``); this module only asks.
"""

from __future__ import annotations

from dataclasses import dataclass

from confluent_kafka import ConsumerGroupState, KafkaException

from segue.operator.observe.kafka import KafkaObserveError, KafkaView

# ConsumerGroupState's names, as Kafka's own tools print a classic group's state
STATES = {
    ConsumerGroupState.STABLE: "Stable",
    ConsumerGroupState.PREPARING_REBALANCING: "PreparingRebalance",
    ConsumerGroupState.COMPLETING_REBALANCING: "CompletingRebalance",
    ConsumerGroupState.EMPTY: "Empty",
    ConsumerGroupState.DEAD: "Dead",
}
STABLE = "Stable"
# states in which the group waits for nobody: settled, or no member at all (a suspended
# app, every pod restarting)
SETTLED = frozenset({STABLE, "Empty", "Dead"})


@dataclass(frozen=True)
class GroupMembers:
    """A consumer group as its coordinator describes it: its state and each member's
    client id (for a Kafka Streams app, one per stream thread's main consumer)."""

    state: str
    clients: tuple[str, ...]


def describe_group(view: KafkaView, group: str) -> GroupMembers:
    """One DescribeConsumerGroups call for ``group``; raises :class:`KafkaObserveError`."""
    try:
        future = view.admin.describe_consumer_groups([group], request_timeout=view.timeout)[group]
        described = future.result(timeout=view.timeout)
    except KafkaException as exc:
        raise KafkaObserveError(f"members of group {group}: {exc.args[0]}") from exc
    except TimeoutError as exc:
        raise KafkaObserveError(f"members of group {group}: no answer in {view.timeout}s") from exc
    return GroupMembers(
        state=STATES.get(described.state, "Unknown"),
        clients=tuple(sorted(m.client_id for m in described.members)),
    )
