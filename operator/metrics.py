"""The operator's own Prometheus metrics (prometheus-client), in a registry of its own.

Labelled by namespace and app, so one operator's page covers every StreamApp it runs.
The handover duration is measured from publishing the generation that moves a task to
seeing the new owner report it active: the pause as the control plane sees it.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

LABELS = ("namespace", "app")


class OperatorMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.generations = Counter(
            "segue_operator_generations_published",
            "assignment generations published",
            LABELS,
            registry=r,
        )
        self.handovers = Counter(
            "segue_operator_handovers", "tasks handed to a new owner", LABELS, registry=r
        )
        self.handover_seconds = Histogram(
            "segue_operator_handover_duration_seconds",
            "from publishing a handover to the new owner reporting the task active",
            LABELS,
            buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60),
            registry=r,
        )
        self.learners = Gauge(
            "segue_operator_learners",
            "learner copies restoring in the published generation",
            LABELS,
            registry=r,
        )
        self.generation = Gauge(
            "segue_operator_assignment_generation",
            "the last published generation",
            LABELS,
            registry=r,
        )
        self.errors = Counter(
            "segue_operator_reconcile_errors",
            "reconcile steps that failed",
            (*LABELS, "stage"),
            registry=r,
        )
        self.conflicts = Counter(
            "segue_operator_publish_conflicts",
            "generations not published because the assignment moved since it was read "
            "(the step decides again at once)",
            LABELS,
            registry=r,
        )
        self.leader = Gauge(
            "segue_operator_leader",
            "1 while this replica holds the leader lease and acts (1 without leader "
            "election), 0 while it stands by",
            registry=r,
        )
        self.reconcile_seconds = Histogram(
            "segue_operator_reconcile_duration_seconds",
            "one observe-decide-act step",
            LABELS,
            registry=r,
        )
