"""The rows ``segue simulate`` reads and writes: a scenario row in, a result or an error out.

Plain frozen dataclasses of plain values, so they pickle to and from Spark executors
unchanged and their fields are the columns: the Spark schema is derived from them
(``segue.pipeline.spark.schema``), so a column has one home. A :class:`ScenarioRow` is
one line of a file or one Kafka record, with where it came from, so every error names
its row. An app's *class* (:func:`app_class`) buckets it by total state and task count,
the two shape features the report recommends settings by. docs/pipeline.md, "Spark".
"""

from __future__ import annotations

from dataclasses import dataclass

from .scenario import Scenario

GB = 1_000_000_000
STATE_BUCKETS = ((1 * GB, "small-state"), (10 * GB, "medium-state"))  # below each bound
LARGE_STATE = "large-state"
FEW_TASKS = 32  # at most this many tasks: "few-tasks"


@dataclass(frozen=True)
class ScenarioRow:
    """One input row: a Scenario (or a recorded HistoryRecord) as JSON text.

    ``row`` counts from 1 within ``source`` (a file's line, a Parquet file's row); for a
    Kafka partition ``unit`` is ``offset`` and ``row`` the record's offset.
    """

    source: str
    row: int
    text: str
    unit: str = "row"

    @property
    def where(self) -> str:
        return f"{self.source} {self.unit} {self.row}"


@dataclass(frozen=True)
class Result:
    """One (scenario, policy) run: the policy, the scenario's shape and every Outcome metric."""

    source: str
    row: int
    scenario: str
    app: str
    app_class: str
    tasks: int
    state_bytes: int
    policy: str
    policy_kind: str
    # Segue's sweep axes (null for the baselines; their parameters are in ``params``)
    acceptable_recovery_lag: int | None
    max_warmup_replicas: int | None
    num_standby_replicas: int | None
    learner_promotion: str | None
    params: str  # JSON: every parameter of the policy
    time_to_balance: float | None
    unbalanced: str | None  # why some disturbance never balanced, at the run's end
    balance_times: list[float | None]
    task_seconds_unavailable: float
    records_processed_late: float
    records_processed: float
    state_bytes_restored: float
    generations_published: int
    handovers: int
    peak_active_skew: int
    peak_stateful_skew: int
    peak_subtopology_skew: int
    final_active_skew: int
    pod_hours: float


@dataclass(frozen=True)
class Failure:
    """A row that could not be replayed: where, which field, and what was wrong.

    ``policy`` is empty when the row itself is bad (it failed its schema), else the
    policy whose run failed (the other policies' results stand).
    """

    source: str
    row: int
    where: str
    scenario: str
    policy: str
    field: str
    message: str

    def __str__(self) -> str:
        under = f" under {self.policy}" if self.policy else ""
        return f"{self.where}{under}: {self.message}"


def app_class(s: Scenario) -> str:
    """``medium-state/many-tasks``: total state at t=0 by decade of GB, tasks by FEW_TASKS."""
    return f"{_state_bucket(total_state(s))}/{_task_bucket(total_tasks(s))}"


def total_state(s: Scenario) -> int:
    return sum(sum(t.state_bytes) for t in s.subtopologies)


def total_tasks(s: Scenario) -> int:
    return sum(t.partitions for t in s.subtopologies)


def _state_bucket(nbytes: int) -> str:
    return next((name for bound, name in STATE_BUCKETS if nbytes < bound), LARGE_STATE)


def _task_bucket(tasks: int) -> str:
    return "few-tasks" if tasks <= FEW_TASKS else "many-tasks"


# The metrics the summary aggregates per policy (median, p90, mean each) and the report shows.
SUMMARY_METRICS = (
    "time_to_balance",
    "task_seconds_unavailable",
    "records_processed_late",
    "state_bytes_restored",
    "generations_published",
    "peak_active_skew",
    "pod_hours",
)
SEGUE_AXES = (
    "acceptable_recovery_lag",
    "max_warmup_replicas",
    "num_standby_replicas",
    "learner_promotion",
)
