"""The operator's own Prometheus metrics (prometheus-client), in a registry of its own.

Labelled by namespace and app, so one operator's page covers every StreamApp it runs.
The handover duration is measured from publishing the generation that moves a task to
seeing the new owner report it active: the pause as the control plane sees it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

LABELS = ("namespace", "app")
# Events an alert counts (charts/segue/templates/prometheusrule.yaml): their series start
# at 0 with the app, so the first one is an increase Prometheus sees (as do the
# generations and handovers the dashboard rates).
ALERTED_EVENTS = (("Warning", "ScaleDownTimeout"),)
Metric = Gauge | Counter | Histogram

# The autoscaling signal (segue.operator.autoscale.AppSignal field -> gauge, help);
# docs/autoscaling.md has the maths, docs/operator.md the table.
SIGNAL_GAUGES: dict[str, tuple[str, str]] = {
    "lag_records": (
        "segue_app_input_lag_records",
        "records in the input topics not yet committed by the app (log end - committed)",
    ),
    "input_rate": (
        "segue_app_input_records_per_second",
        "records/s written to the input topics (log end's increase over the window)",
    ),
    "processing_rate": (
        "segue_app_processed_records_per_second",
        "records/s the members processed from the input (their counters' increase)",
    ),
    "seconds_to_catch_up": (
        "segue_app_seconds_to_catch_up",
        "lag / (processing - input rate); +Inf while falling behind",
    ),
    "projected_seconds_to_catch_up": (
        "segue_app_projected_seconds_to_catch_up",
        "the same with the capacity of spec.replicas members (once handovers land)",
    ),
    "replicas_needed": (
        "segue_app_replicas_needed",
        "members to absorb the input and drain the lag within the catch-up time "
        "(target it with an HPA: AverageValue 1)",
    ),
    "capacity_per_member": (
        "segue_app_member_capacity_records_per_second",
        "records/s one active member processes while behind; 0 until measured",
    ),
    "active_members": (
        "segue_app_active_members",
        "members running an input task as active (learners are not)",
    ),
    "time": (
        "segue_app_signal_timestamp_seconds",
        "when the signal was observed; stops moving while Kafka cannot be read",
    ),
}


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
            "from publishing a handover to the new owner running the task",
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
        self.kstreams_rebalances = Counter(
            "segue_operator_kstreams_rebalances",
            "rebalances of a Kafka Streams app's group (new group reports seen)",
            LABELS,
            registry=r,
        )
        self.kstreams_rejoin_asks = Counter(
            "segue_operator_kstreams_rejoin_asks",
            "answers that ask a Kafka Streams group to rebalance now (kafka_streams.rejoin: "
            "a generation decided while the group runs one it took up)",
            LABELS,
            registry=r,
        )
        self.kstreams_answer_seconds = Histogram(
            "segue_operator_kstreams_answer_seconds",
            "from a Kafka Streams group leader's report to the operator's answer written "
            "(the group waits in its rebalance meanwhile; the leader's clock against the "
            "operator's)",
            LABELS,
            buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10),
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
        self.steps_queued = Gauge(
            "segue_operator_steps_queued",
            "reconcile steps waiting for a thread of the step pool, by urgency (urgent: an "
            "app woken or with something in flight; routine: a settled app's look)",
            ("urgency",),
            registry=r,
        )
        self.signal = {
            field: Gauge(name, help_, LABELS, registry=r)
            for field, (name, help_) in SIGNAL_GAUGES.items()
        }
        self.history_records = Counter(
            "segue_operator_history_records",
            "history records the app's Kafka cluster acknowledged",
            LABELS,
            registry=r,
        )
        self.history_failures = Counter(
            "segue_operator_history_failures",
            "history records not delivered (dropped: the step goes on)",
            LABELS,
            registry=r,
        )
        self.events = Counter(
            "segue_operator_events",
            "Kubernetes Events posted about an app, by type and reason (the chart's alerts "
            "count ScaleDownTimeout)",
            (*LABELS, "type", "reason"),
            registry=r,
        )
        # The app's state as its status says it, for alerts and dashboards: every series
        # of an app is set afresh on each look (:meth:`show_state`), stale ones removed.
        self.condition = Gauge(
            "segue_app_condition",
            "1 for each condition of the app's status, labelled with its status and reason "
            "(kube-state-metrics' shape)",
            (*LABELS, "type", "status", "reason"),
            registry=r,
        )
        self.learner_lag = Gauge(
            "segue_app_learner_lag_records",
            "each learner's lowest changelog lag so far, records (it only drops while the "
            "learner makes progress)",
            (*LABELS, "task", "member"),
            registry=r,
        )
        self.members = Gauge(
            "segue_app_members",
            "the app's members by role (member, joining, leaving, absent, rolling)",
            (*LABELS, "role"),
            registry=r,
        )
        self.task_errors = Gauge(
            "segue_app_task_errors",
            "tasks a member was given and cannot run now, by the worker's reason",
            (*LABELS, "reason"),
            registry=r,
        )
        self._shown: dict[
            tuple[str, str], dict[Gauge | Counter | Histogram, set[tuple[str, ...]]]
        ] = {}
        self.reconcile_seconds = Histogram(
            "segue_operator_reconcile_duration_seconds",
            "one observe-decide-act step",
            LABELS,
            registry=r,
        )

    def watch_steps(self, queued: Callable[[], tuple[int, int]]) -> None:
        """Read the step pool's queues (urgent, routine) at each scrape."""
        self.steps_queued.labels("urgent").set_function(lambda: queued()[0])
        self.steps_queued.labels("routine").set_function(lambda: queued()[1])

    def show_signal(self, namespace: str, app: str, values: dict[str, float]) -> None:
        """Set the signal's gauges from its fields (``dataclasses.asdict`` of it)."""
        for field, gauge in self.signal.items():
            gauge.labels(namespace, app).set(float(values[field]))

    def forget_signal(self, namespace: str, app: str) -> None:
        for gauge in self.signal.values():
            with contextlib.suppress(KeyError):
                gauge.remove(namespace, app)

    def show_state(
        self,
        namespace: str,
        app: str,
        conditions: Iterable[tuple[str, str, str]],
        *,
        learners: Mapping[str, tuple[str, int]] | None = None,
        errors: Mapping[str, int] | None = None,
        members: Mapping[str, int] | None = None,
    ) -> None:
        """The app's conditions as (type, status, reason); ``learners``: task -> (member,
        lowest lag); ``errors``: reason -> tasks; ``members``: role -> members. None
        leaves that part as last shown."""
        for type_, reason in ALERTED_EVENTS:
            self._remember(namespace, app, self.events, (type_, reason))
        for counted in (self.generations, self.handovers, self.handover_seconds):
            self._remember(namespace, app, counted, ())
        self._show(namespace, app, self.condition, {(*c,): 1 for c in conditions})
        if learners is not None:
            lags: dict[tuple[str, ...], float] = {
                (t, m): float(lag) for t, (m, lag) in learners.items()
            }
            self._show(namespace, app, self.learner_lag, lags)
        if errors is not None:
            self._show(namespace, app, self.task_errors, {(r,): n for r, n in errors.items()})
        if members is not None:
            self._show(namespace, app, self.members, {(r,): n for r, n in members.items()})

    def _show(
        self, namespace: str, app: str, gauge: Gauge, values: Mapping[tuple[str, ...], float]
    ) -> None:
        """Set ``gauge``'s series of the app to ``values``, removing those not in it."""
        shown = self._shown.setdefault((namespace, app), {})
        for gone in shown.get(gauge, set()) - set(values):
            with contextlib.suppress(KeyError):
                gauge.remove(namespace, app, *gone)
        for labels, value in values.items():
            gauge.labels(namespace, app, *labels).set(value)
        shown[gauge] = set(values)

    def count_event(self, namespace: str, app: str, type_: str, reason: str) -> None:
        self._remember(namespace, app, self.events, (type_, reason))
        self.events.labels(namespace, app, type_, reason).inc()

    def _remember(
        self, namespace: str, app: str, counted: Counter | Histogram, labels: tuple[str, ...]
    ) -> None:
        """Start ``counted``'s series of the app at 0 (its first increase is then one
        Prometheus sees: seen first at 4, four handovers would never show in a rate),
        and drop it with the app."""
        self._shown.setdefault((namespace, app), {}).setdefault(counted, set()).add(labels)
        counted.labels(namespace, app, *labels)

    def forget_state(self, namespace: str, app: str) -> None:
        """The app is gone: drop every series :meth:`show_state` and
        :meth:`count_event` made for it."""
        for metric, shown in self._shown.pop((namespace, app), {}).items():
            for labels in shown:
                with contextlib.suppress(KeyError):
                    metric.remove(namespace, app, *labels)
