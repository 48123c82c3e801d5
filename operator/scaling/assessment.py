"""The StreamApp's status as the machine assesses it: member summaries, conditions, phase.

Four conditions, as Kubernetes conventions expect (each always present, True or False):
``Balanced`` (every task on its target owner, nothing learning, nobody joining, leaving
or away, no handover in flight, and every member running each of its active tasks and
holding its standbys: an active still fencing, restoring or not taken up is named,
:mod:`.running`), ``Scaling`` (a scale action or rebalance is in flight, with why),
``Degraded`` (something needs a human: refused partition expansion, a missing topic, an
assignment too large, a forced scale-down, a member away) and ``Progressing`` (a
template change is still rolling through the pods, :mod:`.rollout`). The phase is
``Running`` only when ``Balanced`` is. :mod:`.facts` supplies the facts; the shell adds
``lastTransitionTime``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from segue.assignor.ids import member_sort_key

from .group_wait import GROUP_WAITING
from .inventory import Degradation
from .model import Assessment, Condition, MemberRole, MemberSummary, Phase, PodObs, Roles
from .running import NotRunning, condition, not_running


@dataclass(frozen=True)
class Facts:
    suspended: bool  # spec.replicas is 0
    rolling: tuple[str, ...]  # members restarting onto the current template
    outdated: int  # members whose pod runs an older template
    updated: int  # pods built from the current template
    members: Mapping[str, Roles]  # what runs (the generation in force after this step)
    roles: Mapping[str, MemberRole]
    lags: Mapping[str, Mapping[str, int]]
    pods: Mapping[str, PodObs]
    generation: int
    pending: int  # tasks not yet on their target owner
    degradations: tuple[Degradation, ...]
    scaling_reason: str | None
    scaling_message: str
    handing_over: frozenset[str] = frozenset()  # tasks of the handovers still in flight


def _balanced(
    f: Facts,
    suspended: bool,
    balanced: bool,
    *,
    waiting: list[NotRunning],
    learning: int,
    scaling: str | None,
) -> Condition:
    if suspended:
        return Condition(
            "Balanced",
            "True",
            "Suspended",
            "replicas is 0: every task was handed off and no pod runs",
        )
    if waiting:
        return condition(waiting)
    if f.scaling_reason == GROUP_WAITING:  # everything placed runs, but the group waits
        return Condition("Balanced", "False", GROUP_WAITING, f.scaling_message)
    if balanced:
        return Condition("Balanced", "True", "Balanced", "every task is on its target member")
    if f.generation == 0:  # nothing placed yet: say what the first assignment waits for
        why = scaling or (
            "; ".join(d.message for d in f.degradations)
            or "waiting for the app's pods to describe its topology (a Kafka Streams app's"
            " plugin does at the group's first rebalance)"
        )
        return Condition("Balanced", "False", "Unassigned", f"no assignment published yet: {why}")
    return Condition(
        "Balanced",
        "False",
        "NotBalanced",
        f"{f.pending} task(s) not yet on their target member, {learning} learning",
    )


def assess(f: Facts) -> Assessment:
    summaries = []
    for name in sorted(f.roles, key=member_sort_key):
        held = f.members.get(name, Roles())
        copies = [f.lags.get(name, {}).get(t) for t in (*held.standby, *held.learning)]
        known = [lag for lag in copies if lag is not None]
        unknown = len(known) < len(copies)
        pod = f.pods.get(name)
        faults = {t: why for t, why in (pod.faults if pod else {}).items() if t in held.tasks()}
        summaries.append(
            MemberSummary(
                name=name,
                role=f.roles[name],
                active=len(held.active),
                standby=len(held.standby),
                learning=len(held.learning),
                max_lag=None if unknown else max(known, default=0),
                ready=bool(pod and pod.ready and not pod.terminating),
                faults=faults,
            )
        )
    present = [s for s in summaries if s.name in f.pods and not f.pods[s.name].terminating]
    learning = sum(s.learning for s in summaries)
    degraded = bool(f.degradations)
    reason, message = f.scaling_reason, f.scaling_message
    live = sorted(n for n, p in f.pods.items() if not p.terminating)
    if f.suspended and reason is None and live:  # released, but pods not gone yet
        reason, message = "Suspending", f"{len(live)} pod(s) still to go: {', '.join(live)}"
    scaling = reason is not None
    suspended = f.suspended and not scaling and not degraded and not f.members
    # every task on its target member, and nothing in flight but handovers
    placed = f.generation > 0 and f.pending == 0 and not learning
    placed = placed and (not scaling or (reason == "Rebalancing" and bool(f.handing_over)))
    waiting = not_running(f.members, f.pods, f.lags, f.handing_over) if placed else []
    balanced = suspended or (placed and not degraded and not scaling and not waiting)
    conditions = (
        _balanced(
            f,
            suspended,
            balanced,
            waiting=waiting,
            learning=learning,
            scaling=message if scaling else None,
        ),
        Condition(
            "Scaling",
            "True" if scaling else "False",
            reason or "Idle",
            message if scaling else "no scale action in flight",
        ),
        Condition(
            "Degraded",
            "True" if degraded else "False",
            f.degradations[0].reason if degraded else "AsExpected",
            "; ".join(p.message for p in f.degradations) if degraded else "no degradations",
        ),
        _progressing(f),
    )
    phase: Phase = (
        "Suspended"
        if suspended
        else "Degraded"
        if degraded
        else "Pending"
        if f.generation == 0
        else "Scaling"
        if scaling or f.pending or waiting  # moving, or not running where placed yet
        else "Running"
    )
    return Assessment(
        phase=phase,
        # as a Deployment counts: every pod of the app that is not terminating, admitted or
        # not (an HPA reads this through /scale as the current count)
        replicas=sum(1 for p in f.pods.values() if not p.terminating),
        ready_replicas=sum(1 for s in present if s.ready),
        generation=f.generation,
        max_lag=max((s.max_lag or 0 for s in summaries), default=0),
        members=tuple(summaries),
        conditions=conditions,
        updated_replicas=f.updated,
    )


def _progressing(f: Facts) -> Condition:
    """A Deployment-style rollout condition: is a template change still reaching pods?"""
    if f.rolling or f.outdated:
        doing = f"{', '.join(f.rolling)} restarting; " if f.rolling else ""
        return Condition(
            "Progressing",
            "True",
            "RollingUpdate",
            f"{doing}{f.updated} pod(s) on the current template, {f.outdated} outdated",
        )
    return Condition("Progressing", "False", "UpToDate", "every pod runs the current template")
