"""What the decision core sees of one pod (:class:`~segue.operator.scaling.PodObs`): its
state as the API server gives it, and its worker's scrape (None: no page this step)."""

from __future__ import annotations

from segue.operator.api.names import TEMPLATE_HASH_LABEL
from segue.operator.observe.pods import PodState
from segue.operator.observe.scrape import WorkerReport
from segue.operator.scaling import PodObs, TaskFault
from segue.protocol.reports import TaskState


def pod_obs(state: PodState, report: WorkerReport | None) -> PodObs:
    states = report.states if report else {}  # an active processes once ``running``
    return PodObs(
        name=state.name,
        running=state.phase == "Running",
        terminating=state.terminating,
        failed=state.phase in ("Failed", "Succeeded"),
        ready=state.ready,
        reporting=report is not None,
        generation=report.generation if report else None,
        roles=dict(report.roles) if report else {},
        offsets=report.offsets() if report else {},
        state_bytes=dict(report.state_bytes) if report else {},
        changelog_bytes=dict(report.changelog_bytes) if report else {},
        faults={t: TaskFault(*why) for t, why in report.task_errors.items()} if report else {},
        restoring=frozenset(t for t, s in states.items() if s == TaskState.RESTORING),
        processing=frozenset(t for t, s in states.items() if s == TaskState.RUNNING),
        template_hash=state.labels.get(TEMPLATE_HASH_LABEL, ""),
    )
