"""Tasks a member cannot run, as its worker reports them, and the Degraded reasons they give.

A worker that cannot run a task it was given (its output topic is missing, its store
cannot open, ...) keeps it, retries it with back-off and reports it as
``segue_task_error{task, reason, message}`` (segue.protocol.reports). The machine
surfaces each reason as a Degraded reason naming the members and tasks, shows the
faults per member in the status, and does not wait on a learner that is not restoring
(``placement``); once the cause is fixed the worker's retry succeeds, the report goes
away and so does the reason. A pod that cannot start at all (an init container fails)
gives a reason of its own, naming the pods (:func:`start_degradations`).
"""

from __future__ import annotations

from collections.abc import Mapping

from segue.assignor.ids import member_sort_key
from segue.protocol.reports import TaskErrorReason
from segue.protocol.tasks import task_sort_key

from .inventory import Degradation
from .model import Roles, TaskFault, World
from .rollout import current

LISTED = 8  # tasks named per member before "and N more"


def member_faults(world: World, members: Mapping[str, Roles]) -> dict[str, dict[str, TaskFault]]:
    """Per member, the tasks of the generation in force that it reports it cannot run."""
    out: dict[str, dict[str, TaskFault]] = {}
    for m, held in members.items():
        pod = world.pods.get(m)
        if pod is not None and pod.reporting:
            mine = {t: why for t, why in pod.faults.items() if t in held.tasks()}
            if mine:
                out[m] = mine
    return out


def fault_degradations(faults: Mapping[str, Mapping[str, TaskFault]]) -> list[Degradation]:
    """One Degraded reason per fault reason, naming each member's tasks and the message."""
    by_reason: dict[str, dict[str, list[str]]] = {}
    messages: dict[str, str] = {}
    for m, mine in faults.items():
        for task, why in mine.items():
            by_reason.setdefault(why.reason, {}).setdefault(m, []).append(task)
            messages.setdefault(why.reason, why.message)
    out = []
    for reason in sorted(by_reason):
        parts = []
        for m in sorted(by_reason[reason], key=member_sort_key):
            tasks = sorted(by_reason[reason][m], key=task_sort_key)
            shown = ", ".join(tasks[:LISTED])
            more = f" and {len(tasks) - LISTED} more" if len(tasks) > LISTED else ""
            parts.append(f"{m} ({shown}{more})")
        then = (
            "Segue publishes them again so their owner starts them afresh"
            if reason == TaskErrorReason.FENCED
            else "the workers retry them and they resume once the cause is fixed"
        )
        out.append(
            Degradation(
                reason, f"tasks cannot run on {'; '.join(parts)}: {messages[reason]}; {then}"
            )
        )
    return out


def start_degradations(world: World) -> list[Degradation]:
    """One Degraded reason per reason pods cannot start for (an init container fails:
    ``PodObs.start_fault``), naming the pods. Only pods of the current template count: an
    older one is replaced (:mod:`.roster`), and it may have failed for what was fixed."""
    by_reason: dict[str, list[str]] = {}
    messages: dict[str, str] = {}
    for name in sorted(world.pods, key=member_sort_key):
        pod = world.pods[name]
        if pod.start_fault is not None and not pod.terminating and current(world, pod):
            by_reason.setdefault(pod.start_fault.reason, []).append(name)
            messages.setdefault(pod.start_fault.reason, pod.start_fault.message)
    return [
        Degradation(reason, f"{', '.join(names)} cannot start: {messages[reason]}")
        for reason, names in sorted(by_reason.items())
    ]
