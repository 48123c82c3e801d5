"""What the generation in force places that does not run as placed yet (:mod:`.assessment`).

Placed is not running. ``Balanced`` is ``True`` only once every member runs each active
task the generation gives it (:meth:`~.model.PodObs.runs`: the previous owner fenced, the
stores caught up, processing) and holds each of its standbys. Until then the condition is
``False`` and names what does not, under the first of these reasons that applies:

- ``ActiveRestoring``: an active its member restores before it processes, with its lag
  (after a handover, the tail its learner had left; after a failover or a forced
  handover, its whole store);
- ``HandingOver``: a task handed over that its new owner does not run yet (it waits to
  fence the previous owner, or has not taken the generation up);
- ``Starting``: any other active its member does not run yet (starting, failed, not
  taken up), or a standby it does not hold yet.

Each reason's tasks are named, the first :data:`SHOWN` of them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from segue.assignor.ids import member_sort_key, parse_task_id

from .model import Condition, PodObs, Roles

RESTORING, HANDING_OVER, STARTING = "ActiveRestoring", "HandingOver", "Starting"
ORDER = (RESTORING, HANDING_OVER, STARTING)
SHOWN = 5  # tasks named per reason
_LEADS = {
    RESTORING: "{} active task(s) restore their state before they process",
    HANDING_OVER: "{} task(s) handed over do not run on their new owner yet",
    STARTING: "{} task(s) do not run as the generation places them yet",
}


@dataclass(frozen=True)
class NotRunning:
    reason: str  # one of ORDER
    task: str
    member: str
    what: str  # how far it is, said in brackets after it


def not_running(
    members: Mapping[str, Roles],
    pods: Mapping[str, PodObs],
    lags: Mapping[str, Mapping[str, int]],
    handing_over: Collection[str],
) -> list[NotRunning]:
    """Each task of ``members`` (the generation in force) its member does not run or hold
    as placed; ``handing_over``: the tasks of the handovers in flight."""
    out = []
    for m, held in members.items():
        pod = pods.get(m)
        for t in held.active:
            if pod is not None and pod.runs(t):
                continue
            if pod is not None and pod.reporting and t in pod.restoring:
                behind = lags.get(m, {}).get(t, 0)
                out.append(NotRunning(RESTORING, t, m, f"{behind:,} records behind"))
            else:
                reason = HANDING_OVER if t in handing_over else STARTING
                out.append(NotRunning(reason, t, m, _why(pod, t, "active")))
        for t in held.standby:
            if pod is None or not pod.reporting or pod.roles.get(t) != "standby":
                out.append(NotRunning(STARTING, t, m, f"standby, {_why(pod, t, 'standby')}"))
    return sorted(
        out,
        key=lambda n: (ORDER.index(n.reason), parse_task_id(n.task), member_sort_key(n.member)),
    )


def _why(pod: PodObs | None, task: str, role: str) -> str:
    if pod is None or not pod.reporting:
        return "its pod does not report"
    fault = pod.faults.get(task)
    if fault is not None:
        return f"failed: {fault.reason}"
    held = pod.roles.get(task)
    if held is None:
        return "not taken up yet"
    if held != role:
        return f"still {held}"
    return "starting"  # held active, not processing: it waits to fence the previous owner


def condition(waiting: list[NotRunning]) -> Condition:
    """``Balanced`` ``False`` for ``waiting`` (not empty), as :func:`not_running` found it."""
    parts = []
    for reason in ORDER:
        group = [f"{n.task} on {n.member} ({n.what})" for n in waiting if n.reason == reason]
        if group:
            parts.append(f"{_LEADS[reason].format(len(group))}: {listing(group)}")
    return Condition(
        "Balanced",
        "False",
        waiting[0].reason,
        f"every task is on its target member, but {'; '.join(parts)}",
    )


def listing(items: list[str]) -> str:
    """The first :data:`SHOWN` of ``items``, and how many more."""
    more = f" and {len(items) - SHOWN} more" if len(items) > SHOWN else ""
    return f"{', '.join(items[:SHOWN])}{more}"
