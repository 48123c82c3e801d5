"""segue.assignor: the pure placement engine of Segue's decision core.

It answers one question for the operator, the simulator and ``segue assign``: given the
tasks, the members, who runs what and how far behind every local copy is, where should every
task end up (the *target*: balanced, moving the least state) and what should run *now* on the
way there (the *assignment*: KIP-441 handovers plus learners). No I/O, no clock, no randomness.

    from segue.assignor import AssignRequest, assign
    decision = assign(AssignRequest.model_validate_json(text))

Neighbours: :func:`pick_leaving` chooses the members a scale-down removes, and
:func:`expand_partitions` maps a source topic's grown partitions back onto fixed tasks.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .errors import AssignorError, ExpansionRefused, InvalidRequest
    from .expansion import SourceTopic, expand_partitions
    from .leaving import pick_leaving
    from .model import (
        AssignedTasks,
        AssignmentConfig,
        AssignRequest,
        Decision,
        MemberSpec,
        MemberTasks,
        Stats,
        TargetTasks,
        TaskSpec,
    )
    from .solve import assign
else:
    from segue.protocol.lazy import exports

    # Each name loads its module on first use (PEP 562): ``segue assign`` imports
    # ``segue.assignor.cli``, and ``segue --help`` must not load the solver (numpy,
    # OR-tools) or the models (pydantic) with it.
    _PARTS = {
        "errors": ("AssignorError", "ExpansionRefused", "InvalidRequest"),
        "expansion": ("SourceTopic", "expand_partitions"),
        "leaving": ("pick_leaving",),
        "model": (
            "AssignedTasks", "AssignmentConfig", "AssignRequest", "Decision", "MemberSpec",
            "MemberTasks", "Stats", "TargetTasks", "TaskSpec",
        ),
        "solve": ("assign",),
    }  # fmt: skip
    __getattr__ = exports(__name__, _PARTS)


__all__ = [
    "AssignRequest",
    "AssignedTasks",
    "AssignmentConfig",
    "AssignorError",
    "Decision",
    "ExpansionRefused",
    "InvalidRequest",
    "MemberSpec",
    "MemberTasks",
    "SourceTopic",
    "Stats",
    "TargetTasks",
    "TaskSpec",
    "assign",
    "expand_partitions",
    "pick_leaving",
]
