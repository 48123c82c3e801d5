"""``segue.worker.describe`` and ``segue.operator.observe.topology``: the shape of
an application, from the worker's ``/topology`` or the StreamApp spec.

``describe`` and ``parse_topology`` are pure and tested on literal documents; then
a real worker process serves ``/topology`` and ``/metrics`` and the operator's
observe functions read both, and Kafka, as the operator will."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from segue.operator.observe import KafkaView, ScrapeError, fetch_topology, offsets, scrape
from segue.protocol.topology import SubTopologyDescription, TopologyDescription, parse_topology
from segue.stack.process import free_port
from segue.worker import STRING, Topology
from segue.worker.apps import tally, wordcount
from segue.worker.describe import describe
from segue.worker.http import serve
from segue.worker.metrics import Snapshot, StoreReport, TaskReport, WorkerMetrics

# tests/ is on sys.path under pytest (tests/worker imports as `worker`)
from tests.worker.harness import WorkerProcess, assignment, create_topics, produce, publish


def noop(record: Any, ctx: Any) -> None:
    pass


def test_describe_wordcount_under_another_application_id() -> None:
    app = wordcount.topology(input="lines", output="counts")
    assert describe(app, "wc-prod").document() == {
        "applicationId": "wc-prod",
        "subTopologies": [
            {
                "id": 0,
                "sourceTopics": ["lines"],
                "stores": [],
                "changelogTopics": [],
                "repartitionSources": [],
                "partitions": None,
                "sinkTopics": ["wc-prod-counts-store-repartition"],
            },
            {
                "id": 1,
                "sourceTopics": ["wc-prod-counts-store-repartition"],
                "stores": ["counts-store"],
                "changelogTopics": ["wc-prod-counts-store-changelog"],
                "repartitionSources": ["wc-prod-counts-store-repartition"],
                "partitions": None,
                "sinkTopics": ["counts"],
            },
        ],
    }


def test_describe_explicit_repartition_sizes_and_several_sources() -> None:
    app = Topology("joins")
    orders = app.topic("orders", key=STRING, value=STRING)
    by_user = app.repartition("by-user", key=STRING, value=STRING, partitions=12)
    users = app.topic("users", key=STRING, value=STRING)
    a, b = app.store("a"), app.store("b")
    app.subtopology([orders], noop, sinks=[by_user])
    app.subtopology([by_user, users], noop, stores=[a, b])
    sub = describe(app, "joins").document()["subTopologies"][1]
    assert sub == {
        "id": 1,
        "sourceTopics": ["joins-by-user-repartition", "users"],
        "stores": ["a", "b"],
        "changelogTopics": ["joins-a-changelog", "joins-b-changelog"],
        "repartitionSources": ["joins-by-user-repartition"],
        "partitions": 12,
        "sinkTopics": [],
    }


def test_parse_what_describe_serves() -> None:
    doc = describe(tally.topology(input="in", output="out"), "tally-7").document()
    assert parse_topology(doc) == TopologyDescription(
        "tally-7",
        (
            SubTopologyDescription(
                0, ("in",), ("counts",), ("tally-7-counts-changelog",), (), None, ("out",)
            ),
        ),
    )
    assert parse_topology(doc, application_id="tally-7") == parse_topology(doc)


def test_parse_a_streamapp_spec() -> None:
    spec = {
        "subTopologies": [
            {"id": 1, "sourceTopics": ["wc-counts-store-repartition"], "stores": ["counts-store"]},
            {"id": 0, "sourceTopics": ["lines", "wc-side"]},
        ]
    }
    assert parse_topology(spec, application_id="wc") == TopologyDescription(
        "wc",
        (
            SubTopologyDescription(0, ("lines", "wc-side"), (), (), (), None),
            SubTopologyDescription(
                1,
                ("wc-counts-store-repartition",),
                ("counts-store",),
                ("wc-counts-store-changelog",),
                ("wc-counts-store-repartition",),
                None,
            ),
        ),
    )


def test_null_means_not_given() -> None:
    doc = {
        "subTopologies": [
            {
                "id": 0,
                "sourceTopics": ["in", "x-r-repartition"],
                "stores": None,
                "changelogTopics": None,
                "repartitionSources": None,
                "partitions": None,
            },
            {"id": 1, "sourceTopics": ["in2"], "stores": ["s"], "changelogTopics": None},
        ]
    }
    assert parse_topology(doc, application_id="x").subtopologies == (
        SubTopologyDescription(0, ("in", "x-r-repartition"), (), (), ("x-r-repartition",), None),
        SubTopologyDescription(1, ("in2",), ("s",), ("x-s-changelog",), (), None),
    )


def sub(**fields: Any) -> dict[str, Any]:
    return {"applicationId": "a", "subTopologies": [{"id": 0, "sourceTopics": ["t"], **fields}]}


@pytest.mark.parametrize(
    ("doc", "application_id", "message"),
    [
        ([], None, "topology: expected an object, got list"),
        ({"subTopologies": [{"id": 0, "sourceTopics": ["t"]}]}, None, "applicationId: missing"),
        ({"applicationId": "", "subTopologies": []}, None, "applicationId: expected"),
        (sub(), "b", "applicationId: 'a' is not the expected 'b'"),
        ({"applicationId": "a", "subTopologies": []}, None, "subTopologies: expected a non-empty"),
        ({"applicationId": "a", "subTopologies": [3]}, None, "subTopologies[0]: expected an obj"),
        (sub(id=-1), None, "subTopologies[0].id: expected an integer >= 0"),
        (sub(id=True), None, "subTopologies[0].id"),
        (sub(sourceTopics=[]), None, "subTopologies[0].sourceTopics: a sub-topology needs"),
        (sub(sourceTopics="t"), None, "subTopologies[0].sourceTopics: expected a list"),
        (sub(sourceTopics=["t", 4]), None, "subTopologies[0].sourceTopics[1]: expected a non-e"),
        (sub(sourceTopics=["t", "t"]), None, "subTopologies[0].sourceTopics: names a topic"),
        (sub(stores=[""]), None, "subTopologies[0].stores[0]"),
        (sub(stores=["s"], changelogTopics=[]), None, "changelogTopics: 0 topics for 1 stores"),
        (sub(repartitionSources=["x"]), None, "repartitionSources: ['x'] are not source topics"),
        (sub(partitions=0), None, "subTopologies[0].partitions: expected null or an integer"),
        (sub(partitions="4"), None, "subTopologies[0].partitions"),
        (
            {"applicationId": "a", "subTopologies": [sub()["subTopologies"][0]] * 2},
            None,
            "subTopologies: duplicate ids in [0, 0]",
        ),
    ],
)
def test_parse_names_the_bad_field(doc: Any, application_id: str | None, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_topology(doc, application_id=application_id)


@pytest.fixture
def http_server() -> Iterator[Any]:
    """The worker's own HTTP server, in this process."""
    servers: list[Any] = []

    def start(metrics: WorkerMetrics, topology_json: bytes | None = None) -> int:
        server = serve(metrics, "127.0.0.1", 0, topology_json)
        servers.append(server)
        return int(server.server_address[1])

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_endpoints_that_fail_raise_scrape_error(http_server: Any) -> None:
    port = free_port("127.0.0.1")  # nothing listens there
    with pytest.raises(ScrapeError, match=rf"^127\.0\.0\.1:{port}: GET /metrics: "):
        scrape("127.0.0.1", port)
    with pytest.raises(ScrapeError, match=rf"^127\.0\.0\.1:{port}: GET /topology: "):
        fetch_topology("127.0.0.1", port)
    no_topology = http_server(WorkerMetrics())
    with pytest.raises(ScrapeError, match=rf"^127\.0\.0\.1:{no_topology}: .*HTTP 404"):
        fetch_topology("127.0.0.1", no_topology)
    garbled = http_server(WorkerMetrics(), b"{not json")
    with pytest.raises(ScrapeError, match="not JSON"):
        fetch_topology("127.0.0.1", garbled)
    a_list = http_server(WorkerMetrics(), b"[1, 2]")
    with pytest.raises(ScrapeError, match="not a JSON object"):
        fetch_topology("127.0.0.1", a_list)


def test_scrape_the_worker_http_server(http_server: Any) -> None:
    metrics = WorkerMetrics()
    metrics.publish(
        Snapshot(
            generation=4,
            tasks=(TaskReport("0_2", "learning", "standby", (StoreReport("s", 7, 9),), 2, 10),),
            ready=True,
        )
    )
    port = http_server(metrics)
    report = scrape("127.0.0.1", port)
    assert (report.generation, report.roles, report.lag) == (4, {"0_2": "learning"}, {"0_2": 2})
    assert offsets(report) == {"0_2": {"s": 7}}


@pytest.fixture
def worker_process(tmp_path: Path, kafka: Any, kube: Any, namespace: str) -> Iterator[Any]:
    started: list[WorkerProcess] = []

    def start(app: str, member: str, configmap: str, **kwargs: Any) -> WorkerProcess:
        worker = WorkerProcess(
            app=app,
            member=member,
            namespace=namespace,
            configmap=configmap,
            bootstrap=kafka.bootstrap_servers,
            state_dir=tmp_path / "state" / member,
            kubeconfig=kube.kubeconfig,
            log_dir=tmp_path,
            **kwargs,
        )
        started.append(worker)
        return worker.start()

    yield start
    for worker in started:
        worker.close()


def test_a_running_worker_observed_as_the_operator_will(
    kafka: Any, kube_api: Any, namespace: str, worker_process: Any
) -> None:
    tag = uuid.uuid4().hex[:8]
    app_id, source, output = f"wc-{tag}", f"lines-{tag}", f"counts-{tag}"
    bootstrap = kafka.bootstrap_servers
    create_topics(bootstrap, {source: 2, output: 2})
    configmap = f"{app_id}-assignment"
    tasks = ["0_0", "0_1", "1_0", "1_1"]
    publish(kube_api, namespace, configmap, assignment(app_id, 1, {"w0": {"active": tasks}}))
    worker = worker_process(
        "segue.worker.apps.wordcount:topology",
        "w0",
        configmap,
        app_args={"input": source, "output": output},
        extra=["--application-id", app_id],
    )

    # The shape: served before anything is assigned or ready, under the id in effect.
    worker.wait_for("/topology", lambda: worker.get("/topology")[0] == 200)
    doc = fetch_topology("127.0.0.1", worker.port)
    assert doc == describe(wordcount.topology(input=source, output=output), app_id).document()
    shape = parse_topology(doc, application_id=app_id)
    changelog = f"{app_id}-counts-store-changelog"
    assert shape.subtopologies[1].changelog_topics == (changelog,)
    assert shape.subtopologies[1].repartition_sources == (f"{app_id}-counts-store-repartition",)

    worker.wait_ready()
    lines = ["to be or not to be", "that is the question", "be quick"]
    produce(bootstrap, source, [(str(i), line) for i, line in enumerate(lines)])
    words = sum(len(line.split()) for line in lines)

    def processed() -> bool:
        report = scrape("127.0.0.1", worker.port)
        done = report.processed
        return (
            done.get("0_0", 0) + done.get("0_1", 0),
            done.get("1_0", 0) + done.get("1_1", 0),
        ) == (
            len(lines),
            words,
        )

    worker.wait_for("every record processed", processed)

    # The operator's lag arithmetic: its own read_committed end offsets minus the
    # member's restored offsets. A running active's checkpoint is one below the end
    # when the last thing written was a commit marker (docs/worker.md, Metrics).
    with KafkaView(bootstrap) as view:
        sizes = view.partitions([source, output, changelog, *shape.subtopologies[1].source_topics])
        assert sizes[source] == sizes[changelog] == 2
        deadline = time.monotonic() + 30
        while True:
            report = scrape("127.0.0.1", worker.port)
            ends = view.end_offsets({changelog: sizes[changelog]})
            held = offsets(report)
            lags = {
                task: ends[(changelog, int(task.split("_")[1]))] - held[task]["counts-store"]
                for task in ("1_0", "1_1")
            }
            # "processed" counts records before their transaction commits: wait for the
            # commit (the changelog holds one record per word) as well as for the lag.
            committed = sum(ends.values()) >= len(set(" ".join(lines).split()))
            settled = committed and all(0 <= lag <= 1 for lag in lags.values())
            if settled or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    assert report.generation == 1
    assert report.roles == dict.fromkeys(tasks, "active")
    assert report.states == dict.fromkeys(tasks, "running")
    assert report.ready is True
    assert set(held) == set(tasks)
    assert held["0_0"] == held["0_1"] == {}  # stateless
    assert all(0 <= lag <= 1 for lag in lags.values()), (lags, ends, held)
    assert sum(ends.values()) >= len(set(" ".join(lines).split()))  # one record per word at least
