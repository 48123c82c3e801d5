"""Whether a Kafka Streams group waits, and for whom: the coordinator's members against the
consumers each pod's agent names, remembered across looks so the status can say for how
long (``segue.operator.scaling.group_wait`` words it).

A member no running pod claims is one whose process is gone without leaving the group:
killed, or an app without the client supplier's ``Leaving``. The coordinator keeps it
until its session ends (``session.timeout.ms``), and every rebalance meanwhile waits for
it. A group that has not been ``Stable`` for a while waits for something too. Either is
news after ``REBALANCE_NEWS``: a shorter rebalance is the group's ordinary business (a
follow-up, a handover), and a new pod's consumer joins a moment before its agent's page
names it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from segue.operator.observe import KafkaObserveError, KafkaView
from segue.operator.observe.agent import AgentReport
from segue.operator.observe.consumer_group import SETTLED, GroupMembers, describe_group
from segue.operator.scaling.group_wait import GoneMember, GroupWait

log = logging.getLogger("segue.operator.observe")
REBALANCE_NEWS: Final = 2.0  # seconds a rebalance lasts before the status says so


@dataclass
class WaitClock:
    """One app's memory of its group: since when it rebalances, since when each member
    no pod claims has been so, and which pod last claimed each client."""

    rebalancing_since: float | None = None
    unclaimed_since: dict[str, float] = field(default_factory=dict)
    claimed_by: dict[str, str] = field(default_factory=dict)

    def look(
        self, members: GroupMembers, agents: Mapping[str, AgentReport], now: float
    ) -> GroupWait:
        """``agents``: the pages of the app's running pods, by pod name."""
        claims = {c: pod for pod, page in agents.items() for c in page.consumers}
        in_group = set(members.clients)
        self.claimed_by = {
            c: pod for c, pod in {**self.claimed_by, **claims}.items() if c in in_group
        }
        unclaimed = sorted(c for c in in_group if c not in claims)
        self.unclaimed_since = {c: self.unclaimed_since.get(c, now) for c in unclaimed}
        if members.state in SETTLED:
            self.rebalancing_since = None
        elif self.rebalancing_since is None:
            self.rebalancing_since = now
        rebalancing = 0.0 if self.rebalancing_since is None else now - self.rebalancing_since
        return GroupWait(
            state=members.state,
            rebalancing_for=rebalancing if rebalancing >= REBALANCE_NEWS else 0.0,
            gone=tuple(
                GoneMember(c, self.claimed_by.get(c), now - since)
                for c, since in sorted(self.unclaimed_since.items())
                if now - since >= REBALANCE_NEWS  # a joiner its agent names a look later
            ),
        )


def look_at_group(
    clock: WaitClock,
    view: KafkaView,
    group: str,
    agents: Mapping[str, AgentReport],
    now: float,
) -> GroupWait | None:
    """The group's wait this look; None when its coordinator did not answer (said at
    debug: the status then claims nothing about the group)."""
    try:
        members = describe_group(view, group)
    except KafkaObserveError as exc:
        log.debug("group %s not described: %s", group, exc)
        return None
    return clock.look(members, agents, now)
