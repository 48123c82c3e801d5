"""Incremental apply: the pure diff between what a worker runs and a new generation.

``runtime`` asks :func:`diff` what to do and does exactly that: only tasks that
change start or stop; a standby or learner promoted to active keeps its restored
store (``promote``), a demoted active keeps restoring (``demote``); standby and
learning differ only in the metrics (``relabel``). Stops come first, then role
changes, then starts (docs/protocol.md, worker side, step 3).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from segue.protocol import Role


@dataclass(frozen=True)
class Diff:
    stop: list[str] = field(default_factory=list)
    demote: dict[str, Role] = field(default_factory=dict)  # active -> standby/learning
    relabel: dict[str, Role] = field(default_factory=dict)  # standby <-> learning
    promote: list[str] = field(default_factory=list)  # standby/learning -> active
    start: dict[str, Role] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.stop or self.demote or self.relabel or self.promote or self.start)


def diff(current: Mapping[str, Role], desired: Mapping[str, Role]) -> Diff:
    plan = Diff(
        stop=sorted(t for t in current if t not in desired),
        start={t: r for t, r in sorted(desired.items()) if t not in current},
    )
    for task in sorted(set(current) & set(desired)):
        old, new = current[task], desired[task]
        if old == new:
            continue
        if new == "active":
            plan.promote.append(task)
        elif old == "active":
            plan.demote[task] = new
        else:
            plan.relabel[task] = new
    return plan
