"""The per-scenario work of ``segue simulate``: input rows x policies -> result or error rows.

One pure function does it for Spark and for a single process alike: Spark maps
:func:`evaluate_unit` over its partitions (``segue.pipeline.spark``), and
:func:`evaluate_all` is the same work in a plain loop, so the two can be compared and
timed on identical code. A *unit* is what one task replays: one scenario row, or every
recorded HistoryRecord row of one app (they become one scenario together). Nothing
here raises for bad input: a row that fails its schema becomes one :class:`Failure`
naming the row and the field (``subtopologies.0.partitions``); a run that fails under
one policy becomes a Failure for that policy, and the other policies' results stand.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from importlib.machinery import EXTENSION_SUFFIXES

from pydantic import ValidationError

from segue.protocol.history import HistoryRecord

from .catalog import PolicySpec
from .metrics import Outcome
from .recorded import to_scenario
from .rows import Failure, Result, ScenarioRow, app_class, total_state, total_tasks
from .scenario import Scenario
from .simulate import simulate

Evaluated = Result | Failure


def unit_key(row: ScenarioRow) -> str:
    """Rows with one key are replayed together: an app's history rows share one."""
    try:
        data = json.loads(row.text)
    except ValueError:
        data = None
    if isinstance(data, dict) and "spec_replicas" in data:  # a Scenario has no such field
        return f"history:{data.get('namespace', '')}/{data.get('app', '')}"
    return f"row:{row.source}:{row.unit}:{row.row}"


def build() -> str:
    """``compiled`` where the simulator was imported from mypyc's extension modules
    (``SEGUE_MYPYC=1``, setup.py), else ``interpreted``: a benchmark says which it timed."""
    origin = getattr(sys.modules[simulate.__module__], "__file__", None) or ""
    return "compiled" if origin.endswith(tuple(EXTENSION_SUFFIXES)) else "interpreted"


def evaluate_all(rows: Iterable[ScenarioRow], policies: Sequence[PolicySpec]) -> list[Evaluated]:
    """Every unit of ``rows`` under every policy, in a plain loop: what Spark does, in order."""
    units: dict[str, list[ScenarioRow]] = {}
    for row in rows:
        units.setdefault(unit_key(row), []).append(row)
    return [out for unit in units.values() for out in evaluate_unit(unit, policies)]


def evaluate_unit(rows: Sequence[ScenarioRow], policies: Sequence[PolicySpec]) -> list[Evaluated]:
    """One unit (rows of one :func:`unit_key`) under every policy."""
    rows = sorted(rows, key=lambda r: (r.source, r.row))
    if unit_key(rows[0]).startswith("history:"):
        return _recorded(rows, policies)
    return [out for row in rows for out in evaluate(row, policies)]


def evaluate(row: ScenarioRow, policies: Sequence[PolicySpec]) -> list[Evaluated]:
    """One scenario row under every policy: a Result per policy, or one Failure for the row."""
    try:
        scenario = Scenario.model_validate_json(row.text)
    except ValidationError as exc:
        return [invalid(row, exc)]
    return replay(scenario, row, policies)


def replay(scenario: Scenario, row: ScenarioRow, policies: Sequence[PolicySpec]) -> list[Evaluated]:
    out: list[Evaluated] = []
    for spec in policies:
        try:
            outcome = simulate(scenario, spec.controller())
        except Exception as exc:  # a simulator bug on one scenario must not end the run
            message = f"simulating failed: {type(exc).__name__}: {exc}"
            out.append(
                Failure(row.source, row.row, row.where, scenario.name, spec.name, "", message)
            )
            continue
        out.append(result(row, scenario, spec, outcome))
    return out


def invalid(row: ScenarioRow, exc: ValidationError, scenario: str = "") -> Failure:
    """The row's schema errors; ``field`` is the first one's dotted path."""
    errors = exc.errors(include_url=False)
    paths = [".".join(str(part) for part in e["loc"]) for e in errors]
    message = "; ".join(
        f"{p}: {e['msg']}" if p else e["msg"] for p, e in zip(paths, errors, strict=True)
    )
    return Failure(row.source, row.row, row.where, scenario, "", paths[0] if paths else "", message)


def result(row: ScenarioRow, s: Scenario, spec: PolicySpec, o: Outcome) -> Result:
    p = spec.policy
    return Result(
        source=row.source,
        row=row.row,
        scenario=s.name,
        app=s.app,
        app_class=app_class(s),
        tasks=total_tasks(s),
        state_bytes=total_state(s),
        policy=spec.name,
        policy_kind=spec.kind,
        acceptable_recovery_lag=p.acceptable_recovery_lag if p else None,
        max_warmup_replicas=p.max_warmup_replicas if p else None,
        num_standby_replicas=p.num_standby_replicas if p else None,
        learner_promotion=p.learner_promotion if p else None,
        params=json.dumps(spec.params(), sort_keys=True),
        time_to_balance=o.time_to_balance,
        unbalanced=o.unbalanced,
        balance_times=list(o.balance_times),
        task_seconds_unavailable=o.task_seconds_unavailable,
        records_processed_late=o.records_processed_late,
        records_processed=o.records_processed,
        state_bytes_restored=o.state_bytes_restored,
        generations_published=o.generations_published,
        handovers=o.handovers,
        peak_active_skew=o.peak_active_skew,
        peak_stateful_skew=o.peak_stateful_skew,
        peak_subtopology_skew=o.peak_subtopology_skew,
        final_active_skew=o.final_active_skew,
        pod_hours=o.pod_hours,
    )


def _recorded(rows: Sequence[ScenarioRow], policies: Sequence[PolicySpec]) -> list[Evaluated]:
    """One app's HistoryRecord rows -> its scenario (:func:`.recorded.to_scenario`) -> runs.

    A bad row fails the app (its history would have a hole); the results name the app's
    first row as their source.
    """
    records: list[HistoryRecord] = []
    failures: list[Evaluated] = []
    for row in rows:
        try:
            records.append(HistoryRecord.model_validate_json(row.text))
        except ValidationError as exc:
            failures.append(invalid(row, exc))
    if failures:
        return failures
    first = rows[0]
    try:
        scenario = to_scenario(records)
    except (ValueError, ArithmeticError, LookupError) as exc:  # no scenario in these rows
        message = f"recorded history of {records[0].app}: no scenario: {exc}"
        return [Failure(first.source, first.row, first.where, "", "", "", message)]
    return replay(scenario, first, policies)
