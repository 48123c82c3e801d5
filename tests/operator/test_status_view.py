"""``segue status``'s pure parts on literal inputs: a StreamApp's status, its events and
its pods' metrics pages in, the screen (its JSON and its text) out; rates and ETAs
between two reads. No cluster: tests/operator/test_e2e_status.py runs the command on one.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from segue.cli import build_parser, main
from segue.operator.api.status import StreamAppStatus
from segue.operator.observe.scrape import WorkerReport, parse_worker_metrics
from segue.operator.scaling.hold import STALL_SECONDS
from segue.operator.status.build import Pod, Read, handovers, restores, screen
from segue.operator.status.model import SCHEMA, EventRow
from segue.operator.status.progress import Rates, duration, eta
from segue.operator.status.render import render
from segue.operator.status.waiting import waiting

T0 = 1_789_992_002.0  # 2026-09-21T12:00:02Z: two seconds after the status's progress
ROOT = Path(__file__).resolve().parents[2]


def page(restored: int, lag: int) -> str:
    """wc-2's /metrics: active on 0_0, learning 0_1 with ``restored`` of 1,000 records."""
    return f"""
segue_assignment_generation 7
segue_worker_ready 1
segue_task_role{{task="0_0",role="active"}} 1
segue_task_role{{task="0_1",role="learning"}} 1
segue_task_state{{task="0_0",state="running"}} 1
segue_task_state{{task="0_1",state="standby"}} 1
segue_task_restored_offset{{task="0_0",store="counts"}} 500
segue_task_changelog_end_offset{{task="0_0",store="counts"}} 500
segue_task_restored_offset{{task="0_1",store="counts"}} {restored}
segue_task_changelog_end_offset{{task="0_1",store="counts"}} 1000
segue_task_lag{{task="0_1"}} {lag}
"""


def condition(type_: str, status: str, message: str) -> dict[str, str]:
    return {
        "type": type_, "status": status, "reason": "R", "message": message,
        "lastTransitionTime": "2026-09-21T12:00:00Z",
    }  # fmt: skip


def member(name: str, role: str, active: int, learning: int = 0) -> dict[str, Any]:
    return {
        "name": name, "role": role, "active": active, "standby": 0, "learning": learning,
        "ready": True,
    }  # fmt: skip


STATUS: dict[str, Any] = {
    "phase": "Scaling",
    "assignmentGeneration": 7,
    "members": [
        member("wc-0", "member", 4),
        member("wc-1", "member", 3),
        member("wc-2", "joining", 1, learning=1),
        member("wc-3", "joining", 0, learning=1),
    ],
    "conditions": [
        condition("Balanced", "False", "2 tasks not on their target"),
        condition("Scaling", "True", "waiting for 2 learners to catch up"),
        condition("Degraded", "False", "nothing in the way"),
    ],
    "scaling": {
        "handovers": {"0_5": {"to": "wc-3", "since": "2026-09-21T12:00:01Z"}},
        "held": {
            "moves": {"0_1": "wc-2", "0_3": "wc-3"},
            "progress": {
                "0_1": {"member": "wc-2", "lag": 900, "since": "2026-09-21T12:00:00Z"},
                "0_3": {
                    "member": "wc-3",
                    "lag": 400,
                    "since": "2026-09-21T12:00:00Z",
                    "startLag": 2400,
                    "startedAt": "2026-09-21T11:59:50Z",
                },
            },
        },
    },
}
HANDED = "generation 7: 0_4 wc-0 -> wc-2, 1_5 wc-1 -> wc-3 (1,200 behind) and 3 more"
EVENTS = [
    EventRow("Normal", "LearnersAssigned", "generation 6: wc-2 learns 0_1", 1, "2026-09-21T11:59"),
    EventRow("Normal", "TaskHandedOver", HANDED, 2, "2026-09-21T12:00:01Z"),
]
PODS = [Pod("wc-0", True, False), Pod("wc-1", True, False), Pod("wc-2", False, False)]


def read(reports: dict[str, WorkerReport | str]) -> Read:
    obj = {"spec": {"replicas": 4}, "status": STATUS}
    return Read("wc", "shop", obj, PODS, EVENTS, reports)


def test_a_learner_read_twice_has_a_rate_and_an_eta_from_its_restored_offsets() -> None:
    rates = Rates()
    unread = "pod proxy: HTTP 400 address not allowed"
    first = screen(read({"wc-2": parse_worker_metrics(page(100, 900)), "wc-0": unread}), rates, T0)
    again = {"wc-2": parse_worker_metrics(page(400, 600)), "wc-0": unread}
    second = screen(read(again), rates, T0 + 2)
    by_member = {r.member: r for r in first.learners}
    assert by_member["wc-2"].rate is None  # one read: no speed yet
    assert by_member["wc-2"].source == "metrics"
    # ... but the operator's account of wc-3 has one: 2,000 records in 10 s
    assert by_member["wc-3"].rate == pytest.approx(200.0)
    assert by_member["wc-3"].eta_seconds == pytest.approx(2.0)
    learner = next(r for r in second.learners if r.member == "wc-2")
    assert (learner.task, learner.lag, learner.restored, learner.end) == ("0_1", 600, 400, 1000)
    assert learner.rate == pytest.approx(150.0)  # 300 records in 2 s
    assert learner.eta_seconds == pytest.approx(4.0)  # 600 left at 150/s
    # wc-3's metrics were not read: the operator's held progress speaks for it (lag only).
    other = next(r for r in second.learners if r.member == "wc-3")
    assert (other.task, other.lag, other.restored, other.source) == ("0_3", 400, None, "status")
    assert other.rate == 0.0  # no drop between reads ...
    assert other.eta_seconds is None  # ... no promise


def test_a_learner_whose_best_lag_is_old_gets_no_eta_from_its_past_average() -> None:
    stalled = screen(read({}), Rates(), T0 - 2 + STALL_SECONDS)  # its best is 30 s old
    row = next(r for r in stalled.learners if r.member == "wc-3")
    assert (row.lag, row.rate, row.eta_seconds) == (400, None, None)


def test_pods_take_counts_from_metrics_when_read_and_from_the_status_otherwise() -> None:
    reports: dict[str, WorkerReport | str] = {
        "wc-2": parse_worker_metrics(page(100, 900)),
        "wc-0": "pod proxy: HTTP 400 address not allowed",
    }
    shown = screen(read(reports), Rates(), T0)
    rows = {p.name: p for p in shown.pods}
    assert [p.name for p in shown.pods] == ["wc-0", "wc-1", "wc-2", "wc-3"]  # wc-3: no pod
    assert (rows["wc-2"].active, rows["wc-2"].learning, rows["wc-2"].max_lag) == (1, 1, 900)
    assert rows["wc-2"].tasks == {"0_0": "active", "0_1": "learning"}
    assert rows["wc-2"].metrics_error is None
    assert rows["wc-2"].counts_from == "metrics"
    assert (rows["wc-0"].role, rows["wc-0"].active, rows["wc-0"].counts_from) == (
        "member", 4, "status",
    )  # fmt: skip
    assert rows["wc-0"].metrics_error == "pod proxy: HTTP 400 address not allowed"
    assert rows["wc-1"].metrics_error == "not read"
    assert (rows["wc-3"].role, rows["wc-3"].ready, rows["wc-3"].metrics_error) == (
        "joining", False, "no pod",
    )  # fmt: skip
    assert shown.pods_ready == 2


AGENT_PAGE = """
segue_kstreams_consumer_client{client_id="wordcount-1a2b-StreamThread-1-consumer"} 1
segue_kstreams_restore_lag{topic="wordcount-counts-changelog",partition="3"} 250
segue_kstreams_fallbacks_total 0
"""


def test_a_kafka_streams_pods_counts_are_the_status_since_its_agent_names_no_task() -> None:
    """A Kafka Streams pod serves the plugin's agent page, not the worker's task families:
    read, it says nothing of the pod's tasks, so the row's counts (and the learners) are
    the status's, and the row says so."""
    members = [
        {**member("wordcount-0", "member", 4), "standby": 1},
        member("wordcount-1", "member", 4),
        {**member("wordcount-2", "joining", 4, learning=1), "maxLag": 250},
    ]
    progress = {"member": "wordcount-2", "lag": 250, "since": "2026-09-21T12:00:00Z"}
    status = {
        "phase": "Scaling", "assignmentGeneration": 3, "members": members,
        "scaling": {"held": {"moves": {"1_3": "wordcount-2"}, "progress": {"1_3": progress}}},
    }  # fmt: skip
    obj = {"spec": {"replicas": 3, "runtime": "kafka-streams"}, "status": status}
    pods = [Pod(f"wordcount-{i}", True, False) for i in range(3)]
    agent = parse_worker_metrics(AGENT_PAGE)
    reports: dict[str, WorkerReport | str] = {"wordcount-0": agent, "wordcount-1": agent}
    reports["wordcount-2"] = "pod proxy: HTTP 503 unavailable"
    shown = screen(Read("wordcount", "shop", obj, pods, [], reports), Rates(), T0)
    rows = {p.name: (p.active, p.standby, p.learning, p.max_lag) for p in shown.pods}
    assert rows == {
        "wordcount-0": (4, 1, 0, None),
        "wordcount-1": (4, 0, 0, None),
        "wordcount-2": (4, 0, 1, 250),
    }
    assert [(p.metrics_error, p.counts_from, p.tasks) for p in shown.pods[:2]] == [
        (None, "status", {}),
        (None, "status", {}),
    ]
    assert shown.pods[2].metrics_error == "pod proxy: HTTP 503 unavailable"
    (learner,) = shown.learners
    assert (learner.task, learner.member, learner.lag, learner.source) == (
        "1_3", "wordcount-2", 250, "status",
    )  # fmt: skip
    line = next(x for x in render(shown).splitlines() if x.startswith("wordcount-0 "))
    assert line.split() == [
        "wordcount-0", "member", "yes", "4", "1", "0", "-", "read;", "counts", "from", "status",
    ]  # fmt: skip


def test_handovers_in_flight_then_those_the_latest_event_names() -> None:
    status = StreamAppStatus.model_validate(STATUS)
    rows = handovers(status, EVENTS)
    assert [(h.task, h.from_, h.to, h.state) for h in rows] == [
        ("0_5", None, "wc-3", "in-flight"),
        ("0_4", "wc-0", "wc-2", "done"),
        ("1_5", "wc-1", "wc-3", "done"),  # a stateful task's lag said after it
    ]


def test_what_the_operator_waits_for_is_its_first_condition_in_the_way() -> None:
    assert waiting(StreamAppStatus.model_validate(STATUS)) == (
        "Scaling: waiting for 2 learners to catch up"
    )
    settled = {"conditions": [condition("Balanced", "True", "4 members")]}
    assert waiting(StreamAppStatus.model_validate(settled)) == "Balanced=True: 4 members"
    assert waiting(StreamAppStatus()) == "no status yet"


def test_the_json_document_has_a_stable_shape() -> None:
    shown = screen(read({"wc-2": parse_worker_metrics(page(100, 900))}), Rates(), T0)
    doc = json.loads(json.dumps(shown.to_json()))
    assert doc["schema"] == SCHEMA
    assert set(doc) == {
        "schema", "app", "namespace", "at", "phase", "replicas", "pods_ready", "generation",
        "waiting_for", "conditions", "pods", "learners", "handovers", "events",
        "replicas_needed",
    }  # fmt: skip
    assert set(doc["pods"][0]) == {
        "name", "role", "ready", "deleting", "active", "standby", "learning", "max_lag",
        "tasks", "errors", "metrics_error", "counts_from",
    }  # fmt: skip
    assert set(doc["learners"][0]) == {
        "task", "member", "lag", "restored", "end", "rate", "eta_seconds", "source",
    }  # fmt: skip
    assert set(doc["handovers"][0]) == {"task", "from", "to", "state", "at"}
    assert (doc["app"], doc["namespace"], doc["replicas"], doc["generation"]) == (
        "wc",
        "shop",
        4,
        7,
    )
    assert doc["at"] == "2026-09-21T12:00:02Z"


def test_the_text_screen_names_every_part() -> None:
    rates = Rates()
    screen(read({"wc-2": parse_worker_metrics(page(100, 900))}), rates, T0)
    text = render(screen(read({"wc-2": parse_worker_metrics(page(400, 600))}), rates, T0 + 2))
    lines = text.splitlines()
    assert lines[0].startswith("wc  namespace shop  phase Scaling  replicas 4 (2 ready)")
    assert lines[1] == "operator waits for: Scaling: waiting for 2 learners to catch up"
    learner = next(line for line in lines if line.startswith("wc-2 ") and "0_1" in line)
    assert learner.split() == ["wc-2", "0_1", "600", "400/1,000", "(40%)", "150/s", "4s", "metrics"]
    assert any(line.startswith("0_4 ") and "wc-0" in line and "done" in line for line in lines)
    assert "RECENT EVENTS" in text


def test_restores_skip_an_active_copy_that_caught_up() -> None:
    copies = restores(parse_worker_metrics(page(100, 900)))
    assert [(c.task, c.role, c.lag) for c in copies] == [("0_1", "learning", 900)]


@pytest.mark.parametrize(
    ("lag", "rate", "expected"),
    [(0, None, 0.0), (100, None, None), (100, 0.0, None), (100, 50.0, 2.0)],
)
def test_eta_promises_only_on_progress(
    lag: int, rate: float | None, expected: float | None
) -> None:
    assert eta(lag, rate) == expected


def test_a_rate_needs_time_to_pass_and_never_goes_negative() -> None:
    rates = Rates()
    assert rates.observe("k", 10.0, 100) is None
    assert rates.observe("k", 10.0, 200) is None  # no time passed
    assert rates.observe("k", 12.0, 100) == 0.0  # went back (a restore started afresh)
    assert rates.observe("k", 14.0, 300) == 100.0


def test_durations_read_like_kubectl_ages() -> None:
    assert [duration(s) for s in (None, 4.4, 185, 3720)] == ["-", "4s", "3m05s", "1h02m"]


def test_the_command_takes_kubectls_flags_and_the_plugin_is_the_same_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = build_parser().parse_args(["status", "wc", "-n", "shop", "-o", "json", "--watch"])
    assert (args.app, args.namespace, args.output, args.watch) == ("wc", "shop", "json", True)
    assert (args.kubeconfig, args.context, args.interval, args.sample) == (None, None, 2.0, 1.0)
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["kubectl-segue"] == "segue.cli:kubectl_main"
    with pytest.raises(SystemExit):
        main(["status", "--help"], prog="kubectl segue")
    assert capsys.readouterr().out.startswith("usage: kubectl segue status")


def test_a_learning_member_with_no_task_named_yet_has_a_row_from_its_count() -> None:
    """Before the operator holds a target (pods still joining), and with no metrics, the
    member list's learning count and largest lag are all there is."""
    early = {
        "phase": "Scaling",
        "members": [{**member("wc-2", "joining", 0, learning=2), "maxLag": 300}],
    }
    obj = {"spec": {"replicas": 4}, "status": early}
    rates = Rates()
    reports: dict[str, WorkerReport | str] = {"wc-2": "pod proxy: HTTP 400 address not allowed"}
    screen(Read("wc", "shop", obj, PODS, [], reports), rates, T0)
    early["members"][0]["maxLag"] = 200
    (row,) = screen(Read("wc", "shop", obj, PODS, [], reports), rates, T0 + 1).learners
    assert (row.task, row.member, row.lag, row.source) == (None, "wc-2", 200, "members")
    assert row.rate == 100.0
    assert row.eta_seconds == 2.0


def test_the_pods_needed_are_shown_only_while_the_signal_is_known() -> None:
    signal = {
        "observedAt": "2026-09-21T12:00:00Z", "replicasNeeded": 2.4, "lagRecords": 10,
        "inputRecordsPerSecond": 100.0, "processedRecordsPerSecond": 100.0,
    }  # fmt: skip
    known = Read(
        "wc",
        "shop",
        {"spec": {"replicas": 4}, "status": {**STATUS, "autoscaling": signal}},
        PODS,
        EVENTS,
        {},
    )
    assert screen(known, Rates(), T0).replicas_needed == 2.4
    assert "needs 2.4 pods" in render(screen(known, Rates(), T0))
    unknown = {**signal, "unknown": "measuring the input again after Kafka was unavailable"}
    obj = {"spec": {"replicas": 4}, "status": {**STATUS, "autoscaling": unknown}}
    shown = screen(Read("wc", "shop", obj, PODS, EVENTS, {}), Rates(), T0)
    assert shown.replicas_needed is None
    assert "needs" not in render(shown)
