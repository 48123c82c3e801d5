"""A Kafka Streams group that waits, as the status says it: observed by the operator
(``segue.operator.kstreams.waits``), worded here for the ``Scaling`` and ``Balanced``
conditions. While it waits the app is not settled: under exactly-once no member commits
during a rebalance, and a rebalance waits for every member the group's coordinator
knows, a gone one until its session ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

GROUP_WAITING: Final = "GroupWaiting"  # the Scaling and Balanced reason while it waits


@dataclass(frozen=True)
class GoneMember:
    """A member of the group that no running pod of the app claims."""

    client: str  # its consumer's client id
    pod: str | None  # the pod that last claimed it, if the operator saw one
    seconds: float  # how long it has been in the group without a pod


@dataclass(frozen=True)
class GroupWait:
    state: str  # the coordinator's word: Stable, PreparingRebalance, ...
    rebalancing_for: float  # seconds the group has not been Stable; 0 when not news yet
    gone: tuple[GoneMember, ...] = ()

    @property
    def waiting(self) -> bool:
        return bool(self.gone) or self.rebalancing_for > 0

    def message(self) -> str:
        """What the group waits for, in a person's words ("" when it does not)."""
        parts = []
        if self.rebalancing_for > 0:
            parts.append(
                f"the group has been in a rebalance ({self.state}) for "
                f"{self.rebalancing_for:.0f} s, and its members commit nothing until it ends"
            )
        if self.gone:
            named = ", ".join(_gone(g) for g in self.gone[:3])
            more = f" and {len(self.gone) - 3} more" if len(self.gone) > 3 else ""
            parts.append(
                f"{len(self.gone)} member(s) of the group have no running pod: {named}{more}; "
                "the group waits for each until its session ends (session.timeout.ms)"
            )
        return "; ".join(parts)


def _gone(g: GoneMember) -> str:
    of = f" (pod {g.pod})" if g.pod else ""
    return f"{g.client}{of} for {g.seconds:.0f} s"
