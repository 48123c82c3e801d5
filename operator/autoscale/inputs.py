"""Which of an app's topics are its *input*, and what its members did with them.

An app's input is the source topics it does not own: a repartition topic is written
and read by the app itself, so its records are work in the middle of the app, not
input, and counting them would make the processing rate of WordCount twice its input
rate. An *input task* is a task of a sub-topology with at least one input topic; the
processing rate is the ``segue_task_records_processed`` counters of input tasks only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from segue.protocol.tasks import TaskId
from segue.protocol.topology import SubTopologyDescription


def input_topics(subtopologies: Iterable[SubTopologyDescription]) -> dict[int, tuple[str, ...]]:
    """Sub-topology id -> its input topics, for the sub-topologies that have any."""
    out: dict[int, tuple[str, ...]] = {}
    for sub in subtopologies:
        topics = tuple(t for t in sub.source_topics if t not in sub.repartition_sources)
        if topics:
            out[sub.id] = topics
    return out


def is_input_task(task: str, inputs: Mapping[int, object]) -> bool:
    try:
        return TaskId.parse(task).subtopology in inputs
    except ValueError:
        return False


def processed(counters: Mapping[str, int], inputs: Mapping[int, object]) -> int:
    """One member's records processed from input: its input tasks' counters, summed."""
    return sum(n for task, n in counters.items() if is_input_task(task, inputs))


def runs_input(roles: Mapping[str, str], inputs: Mapping[int, object]) -> bool:
    """The member runs at least one input task as active (a learner does not)."""
    return any(role == "active" and is_input_task(t, inputs) for t, role in roles.items())


def input_tasks(assigned: Iterable[str], inputs: Mapping[int, object]) -> int:
    """Distinct input tasks among ``assigned`` (the published generation's tasks)."""
    return len({t for t in assigned if is_input_task(t, inputs)})
