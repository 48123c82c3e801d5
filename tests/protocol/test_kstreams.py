"""The Kafka Streams plugin's contract (``segue.protocol.kstreams``), on the fixtures in
``tests/contracts/kstreams`` that the Java side's tests parse too (``kstreams/``)."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from segue.protocol import AssignmentDocument, decode, encode
from segue.protocol.kstreams import (
    APPLIED_KEY,
    REPORT_KEY,
    Applied,
    GroupReport,
    ReportError,
    decode_applied,
    decode_report,
    decode_report_configmap,
    encode_report,
)
from segue.protocol.kstreams_answer import (
    answers_newer,
    answers_next,
    check_answer,
    followup_for,
    taken_up,
)
from segue.protocol.names import group_configmap

FIXTURES = Path(__file__).resolve().parents[1] / "contracts" / "kstreams"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def test_the_report_fixture_round_trips_byte_for_byte() -> None:
    report = GroupReport.model_validate(fixture("report.json"))
    blob = encode_report(report)
    assert decode_report(blob) == report
    assert encode_report(decode_report(blob)) == blob
    binary = {REPORT_KEY: base64.b64encode(blob).decode()}
    assert decode_report_configmap(binary) == report
    assert decode_report_configmap({}) is None
    assert group_configmap("wc") == "wc-group"


def test_the_answer_fixture_is_an_assignment_document_the_report_accepts() -> None:
    report = GroupReport.model_validate(fixture("report.json"))
    document = AssignmentDocument.model_validate(fixture("answer.json"))
    assert decode(encode(document)) == document
    assert check_answer(report, document.members, document.kafka_streams) == []


def test_a_document_without_an_answer_encodes_as_before() -> None:
    raw = fixture("answer.json")
    del raw["kafka_streams"]
    text = json.loads(gzip.decompress(encode(AssignmentDocument.model_validate(raw))))
    assert set(text) == {"version", "application_id", "generation", "members"}


@pytest.mark.parametrize("case", fixture("refused.json"), ids=lambda c: c["name"])
def test_each_refused_answer_is_refused_naming_why(case: dict[str, Any]) -> None:
    report = GroupReport.model_validate(fixture("report.json"))
    raw = fixture("answer.json")
    raw["members"].update(case.get("members", {}))
    raw["kafka_streams"]["clients"].update(case.get("clients", {}))
    raw["kafka_streams"]["answers"] = case.get("answers", raw["kafka_streams"]["answers"])
    document = AssignmentDocument.model_validate(raw)
    assert case["error"] in check_answer(report, document.members, document.kafka_streams)


TAKEN_UP = [("next", c) for c in fixture("next.json")] + [
    ("newer", c) for c in fixture("newer.json")
]


@pytest.mark.parametrize(
    ("rule", "case"), TAKEN_UP, ids=lambda c: c if isinstance(c, str) else c["name"]
)
def test_an_answer_for_an_earlier_report_is_taken_up_only_by_its_rule(
    rule: str, case: dict[str, Any]
) -> None:
    """A revoking answer decided for an earlier report is taken up without the operator
    by the leader that returned it, for the next report (``answers_next``: the rebalance
    where the new owner gets the task), or when it was decided after the generation the
    leader took up last, for the same report (``answers_newer``), with its own follow-up
    while it still revokes a task from the report's owners. The operator leaves exactly
    those reports unanswered, so it must judge them as the plugin does."""
    raw_report = fixture("report.json") | {"last_applied": case["last_applied"]}
    raw_report["takes_newer"] = case.get("takes_newer", True)
    report = GroupReport.model_validate(raw_report)
    raw = fixture("answer.json")
    raw["members"].update(case.get("members", {}))
    raw["kafka_streams"]["answers"] = "7f3c2a10-0000"
    raw["kafka_streams"]["then_followup_after_ms"] = case["then_followup_after_ms"]
    raw["kafka_streams"]["clients"].pop(case.get("unmap", ""), None)
    document = AssignmentDocument.model_validate(raw)
    answer = document.kafka_streams
    assert answer is not None
    generation = document.generation
    errors = check_answer(report, document.members, answer, generation)
    if "error" in case:
        assert case["error"] in errors
        assert not taken_up(report, answer, generation)
        return
    assert errors == []
    assert answers_next(report, answer, generation) == (rule == "next")
    assert answers_newer(report, answer, generation) == (rule == "newer")
    now = case.get("now_ms", 1795640001000)
    assert followup_for(report, document.members, answer, generation, now) == case["followup_at_ms"]
    # without the document's generation nothing answers a report but its own
    assert check_answer(report, document.members, answer) != []


def test_no_answer_at_all_is_refused() -> None:
    report = GroupReport.model_validate(fixture("report.json"))
    assert check_answer(report, {}, None) == ["the document has no kafka_streams answer"]


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (lambda r: r["tasks"].append(r["tasks"][0]), "a task is listed twice in tasks"),
        (lambda r: r["clients"][0]["lags"].update({"9_9": 1}), "names task 9_9, not in tasks"),
        (lambda r: r["tasks"][0].update({"id": "zero"}), "malformed task id 'zero'"),
        (lambda r: r.update({"version": 2}), "group report version 2 is not supported"),
    ],
)
def test_a_bad_report_names_the_offending_item(change: Any, error: str) -> None:
    raw = fixture("report.json")
    change(raw)
    blob = gzip.compress(json.dumps(raw).encode())
    with pytest.raises(ReportError, match=error.replace("(", r"\(")):
        decode_report(blob)


def test_the_applied_records_the_java_side_writes_are_decoded() -> None:
    """``ContractTest.theAppliedRecordsAreTheFixturesThePythonSideDecodes`` builds the
    two valid records of ``applied.json``; a record naming both outcomes is refused."""
    cases = fixture("applied.json")
    answered = decode_applied({APPLIED_KEY: json.dumps(cases["generation"])})
    assert answered == Applied(report="7f3c2a10-0001", generation=4)
    fell_back = decode_applied({APPLIED_KEY: json.dumps(cases["fallback"])})
    assert fell_back is not None
    assert (fell_back.generation, fell_back.fallback) == (None, cases["fallback"]["fallback"])
    assert decode_applied({"report": "7f3c2a10-0001"}) is None
    with pytest.raises(ReportError, match="exactly one"):
        decode_applied({APPLIED_KEY: json.dumps(cases["both"])})


def test_the_names_the_java_side_spells_are_the_protocols() -> None:
    """``names.json`` is what ``ContractTest.theNamesAreTheProtocolsOwn`` compares the Java
    constants with; this holds it to the Python definitions, the one home of each."""
    from segue.protocol import DOCUMENT_KEY
    from segue.protocol.kstreams import CLIENT_SUPPLIER_CLASS, REPORT_ID_KEY, TASK_ASSIGNOR_CLASS
    from segue.protocol.names import (
        ENV_METRICS_PORT,
        ENV_POD_IP,
        ENV_POD_NAME,
        ENV_POD_NAMESPACE,
        ENV_STREAMAPP,
        HEALTH_PATH,
        METRICS_PATH,
        assignment_configmap,
    )
    from segue.protocol.reports import (
        KSTREAMS_CONSUMER_CLIENT,
        KSTREAMS_FALLBACKS,
        KSTREAMS_RESTORE_LAG,
    )

    assert fixture("names.json") == {
        "report_key": REPORT_KEY,
        "report_id_key": REPORT_ID_KEY,
        "applied_key": APPLIED_KEY,
        "document_key": DOCUMENT_KEY,
        "group_configmap": group_configmap("wc"),
        "assignment_configmap": assignment_configmap("wc"),
        "env_streamapp": ENV_STREAMAPP,
        "env_pod_namespace": ENV_POD_NAMESPACE,
        "env_pod_name": ENV_POD_NAME,
        "metric_consumer_client": KSTREAMS_CONSUMER_CLIENT,
        "metric_restore_lag": KSTREAMS_RESTORE_LAG,
        "metric_fallbacks": KSTREAMS_FALLBACKS,
        "env_metrics_port": ENV_METRICS_PORT,
        "env_pod_ip": ENV_POD_IP,
        "metrics_path": METRICS_PATH,
        "health_path": HEALTH_PATH,
        "task_assignor_class": TASK_ASSIGNOR_CLASS,
        "client_supplier_class": CLIENT_SUPPLIER_CLASS,
    }
    # ... and the config lines the adoption guide has the user paste name those classes
    guide = (Path(__file__).resolve().parents[2] / "docs" / "kafka-streams.md").read_text()
    assert f"\ntask.assignor.class={TASK_ASSIGNOR_CLASS}\n" in guide
    assert f"\ndefault.client.supplier={CLIENT_SUPPLIER_CLASS}\n" in guide


def test_the_reports_tasks_give_the_topology_a_worker_would_serve() -> None:
    from segue.protocol.kstreams import topology_of
    from segue.protocol.topology import parse_topology

    report = GroupReport.model_validate(fixture("report.json"))
    shape = topology_of(report)
    assert shape == parse_topology(
        {
            "applicationId": "wc",
            "subTopologies": [
                {"id": 0, "sourceTopics": ["text"]},
                {"id": 1, "sourceTopics": ["wc-counts-repartition"], "stores": ["counts"]},
            ],
        }
    )
    assert shape.subtopologies[1].changelog_topics == ("wc-counts-changelog",)
    assert shape.subtopologies[1].repartition_sources == ("wc-counts-repartition",)
    raw = fixture("report.json")
    for task in raw["tasks"]:
        task["stores"] = [*task["stores"], "cache"] if task["stateful"] else []
    unlogged = topology_of(GroupReport.model_validate(raw))
    assert unlogged.subtopologies[1].stores == ("counts",)  # no changelog: nothing to restore


def test_each_client_is_the_member_whose_pod_runs_its_consumers() -> None:
    from segue.protocol.kstreams import answer_for

    report = GroupReport.model_validate(fixture("report.json"))
    consumers = {
        "wc-0": ["wc-a-StreamThread-1-consumer"],
        "wc-1": ["wc-b-StreamThread-1-consumer"],
        "wc-2": ["wc-c-StreamThread-1-consumer"],
    }
    answer = answer_for(report, consumers, followup_at_ms=5)
    expected = fixture("answer.json")["kafka_streams"] | {"followup_at_ms": 5}
    assert answer.model_dump() == expected
    # a consumer no pod claims, or a member two clients claim, maps nothing
    unclaimed = answer_for(report, {"wc-0": consumers["wc-0"], "wc-1": consumers["wc-1"]})
    assert set(unclaimed.clients.values()) == {"wc-0", "wc-1"}
    ghost = answer_for(
        report, {"wc-0": [*consumers["wc-0"], *consumers["wc-1"]], "wc-2": consumers["wc-2"]}
    )
    assert ghost.clients == {"00000000-0000-0000-0000-00000000000c": "wc-2"}


def test_a_static_member_is_the_pod_whose_client_ids_carry_its_process_id() -> None:
    """With ``group.instance.id`` a member id starts with the instance id (seen on a real
    app: ``static-pod-7-1-<uuid>``), not the client id; Kafka Streams' default client id
    carries the process id, and that maps it."""
    from segue.protocol.kstreams import answer_for

    raw = fixture("report.json")
    pids = [c["process_id"] for c in raw["clients"]]
    for i, client in enumerate(raw["clients"]):
        client["consumer_client_ids"] = [f"kwc-{i}-1-4c708de5-97ab-4313-b733-095c3db54f66"]
    report = GroupReport.model_validate(raw)
    consumers = {f"kwc-{i}": [f"wc-{pid}-StreamThread-1-consumer"] for i, pid in enumerate(pids)}
    answer = answer_for(report, consumers)
    assert answer.clients == {pid: f"kwc-{i}" for i, pid in enumerate(pids)}
    # a client id the user set carries no process id: nothing maps
    named = {f"kwc-{i}": [f"mine-{i}-StreamThread-1-consumer"] for i in range(len(pids))}
    assert answer_for(report, named).clients == {}
