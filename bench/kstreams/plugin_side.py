"""The Kafka Streams + Segue side: the very WordCount the Kafka Streams side runs
(``java/``, its ``WordCountInstance``), as the pods of a ``runtime: kafka-streams``
StreamApp under the operator on the local stack, every placement Segue's through its
KIP-924 plugin (docs/kafka-streams.md). Set up as ``tests/operator/test_e2e_kstreams.py``
does: the operator injects the plugin's jar (``kstreams/``) as a Java agent, the app sets
``task.assignor.class`` and ``default.client.supplier`` (the group rebalances when the
operator asks) and puts ``state.dir`` on the pod's state volume through Kafka's
``EnvVarConfigProvider``.

The instance runs with the Kafka Streams side's settings (exactly-once v2, one standby,
record cache off, the same probing interval, which the plugin does not use) but for three:
that ``properties`` file (the assignor, the client supplier and ``state.dir``), no static
membership (the plugin does not support ``group.instance.id`` yet) and no state dir
argument. The StreamApp's
``spec.scaling`` carries the HA assignor's numbers: acceptable lag 10,000, 2 warmups, one
standby; and ``learnerPromotion`` (``--learner-promotion``; the default ``eager``).

*Balanced* is the operator's ``Balanced`` condition with every pod ready, as on the Segue
side. Everything else comes from the instances' own task and restore events, as on the
Kafka Streams side: the pods' stdout is in the pod runner's log files, read after the run
(``events.read_log``). Rebalances are the operator's
``segue_operator_kstreams_rebalances_total`` from the scale request until balanced.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import subprocess
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.operator.cluster import new_namespace
from segue.protocol.kstreams import CLIENT_SUPPLIER_CLASS, TASK_ASSIGNOR_CLASS, decode_applied
from segue.protocol.names import group_configmap
from segue.stack.apps import Apps
from tests.operator.e2e import OperatorProcess, streamapp, wait_for
from tests.operator.test_e2e_scaling import PARTITIONS
from tests.worker.harness import create_topics

from .events import PodLog, held, peak_stateful, read_log, restored_records
from .kstreams_side import JVM, LOGGING, classpath
from .measure import read_all, record_bytes
from .moves import counting_moves, reports_timeline
from .report import Row
from .segue_side import delete_app
from .workload import Workload

NAME = "kwc"
ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "kstreams"
CONTAINER = "worker"  # the app container's name in the pods the operator makes
REBALANCES = re.compile(r"^segue_operator_kstreams_rebalances_total\{[^}]*\} (\S+)$", re.M)
FALLBACK_EVENT = re.compile(
    r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] .*?: AssignorFallback: ", re.M
)


@functools.cache
def agent_jar() -> Path:
    """Segue's plugin and agent (``kstreams/``), built once with Maven (``make kstreams``
    builds the same jar and runs its tests too)."""
    m2 = Path(os.environ.get("SEGUE_CACHE", Path.home() / ".cache" / "segue")) / "m2"
    pom = str(PLUGIN / "pom.xml")
    done = subprocess.run(
        ["mvn", "-q", "-B", f"-Dmaven.repo.local={m2}", "-f", pom, "-DskipTests", "package"],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"building kstreams/ failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return PLUGIN / "target" / "segue-kstreams-0.1.0.jar"


def properties(path: Path) -> Path:
    """The app's own lines for Segue (docs/kafka-streams.md, "Adoption")."""
    path.write_text(
        "\n".join(
            [
                f"task.assignor.class={TASK_ASSIGNOR_CLASS}",
                f"default.client.supplier={CLIENT_SUPPLIER_CLASS}",
                "config.providers=env",
                "config.providers.env.class="
                "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
                "state.dir=${env:SEGUE_STATE_DIR}",
            ]
        )
        + "\n"
    )
    return path


def flight_recording(directory: Path | None) -> list[str]:
    """JFR in every instance, one file per JVM in ``directory``, written when it exits:
    what each stream thread waited on during a rebalance (docs/benchmarks.md)."""
    if directory is None:
        return []
    directory.mkdir(parents=True, exist_ok=True)
    return [f"-XX:StartFlightRecording=filename={directory.resolve()}/,dumponexit=true"]


class PluginApp:
    """One ``runtime: kafka-streams`` StreamApp under a fresh operator in its own
    namespace, on fresh topics."""

    def __init__(
        self,
        stack: Any,
        api: Any,
        *,
        namespace: str,
        replicas: int,
        probing_ms: int,
        work: Path,
        learner_promotion: str,
        jfr: Path | None = None,
    ) -> None:
        bootstrap = stack.kafka.bootstrap_servers
        tag = uuid.uuid4().hex[:6]
        self.application, self.source, self.output = f"ksp-wc-{tag}", f"text-{tag}", f"counts-{tag}"
        create_topics(bootstrap, {self.source: PARTITIONS, self.output: PARTITIONS})
        java = {
            "bootstrap": bootstrap,
            "application": self.application,
            "input": self.source,
            "output": self.output,
            "probing-ms": str(probing_ms),
            "properties": str(properties(work / "streams.properties")),
        }
        command = ["java", *JVM, *LOGGING, *flight_recording(jfr), "-cp", classpath()]
        command += ["segue.bench.WordCountInstance", *(f"{k}={v}" for k, v in java.items())]
        self.body = streamapp(
            NAME,
            application_id=self.application,
            bootstrap=bootstrap,
            command=command,
            replicas=replicas,
            scaling={
                "acceptableRecoveryLag": 10_000,
                "maxWarmupReplicas": 2,
                "numStandbyReplicas": 1,
                "expansionTimeoutSeconds": 30,  # as the Segue side (the default)
                "learnerPromotion": learner_promotion,
            },
        )
        self.body["spec"]["runtime"] = "kafka-streams"
        self.body["spec"]["template"]["env"] = []  # Segue's worker's commit interval: not ours
        self.api, self.runner, self.work = api, stack.pods, work
        self.apps = Apps(api, namespace)
        agent = ("--kstreams-agent-image", "segue:dev", "--kstreams-agent-jar", str(agent_jar()))
        self.operator = OperatorProcess(stack.kube.kubeconfig, namespace, work, *agent)

    def start(self) -> None:
        self.operator.start()
        self.apps.create(self.body)

    def balanced(self, replicas: int) -> bool:
        return self.apps.balanced(NAME, replicas)

    def scale(self, replicas: int) -> None:
        self.apps.scale(NAME, replicas)

    def rebalances(self) -> int:
        """The group's rebalances the operator has seen (reports), as it counts them."""
        found = REBALANCES.search(self.operator.metrics())
        return int(float(found.group(1))) if found else 0

    def applied(self) -> str:
        """What the last rebalance's leader applied: Segue's generation or a fallback."""
        cm = self.apps.core.read_namespaced_config_map(group_configmap(NAME), self.apps.namespace)
        outcome = decode_applied(cm.data)
        if outcome is None:
            return "nothing applied"
        if outcome.generation is not None:
            return f"Segue's generation {outcome.generation}"
        return f"a fallback: {outcome.fallback}"

    def log_texts(self) -> dict[str, str]:
        """Each pod's container output, every restart of it, from the pod runner's files."""
        out: dict[str, str] = {}
        try:
            pods = self.apps.pods(NAME)
        except Exception as exc:  # the API server is gone: a failed run says why elsewhere
            print(f"no pods' logs: {exc}")
            return out
        for name, pod in sorted(pods.items()):
            logs = self.runner.pod_dir(self.apps.namespace, name, pod.metadata.uid) / "logs"
            files = sorted((logs / CONTAINER).glob("*.log"), key=lambda p: int(p.stem))
            out[name] = "".join(p.read_text(errors="replace") for p in files)
        return out

    def diagnose(self) -> str:
        tails = "\n".join(f"--- {n}\n{t[-2500:]}" for n, t in self.log_texts().items())
        return (
            f"status: {self.apps.status(NAME)}\nevents: {self.apps.events(NAME)[-15:]}\n"
            f"{tails}\n--- operator\n{self.operator.logs()[-6000:]}"
        )

    def stop(self) -> None:
        """Delete the app (its pods go) while the operator still runs its finalizer."""
        delete_app(self.apps, self.operator, NAME)


def run_plugin(
    stack: Any, api: Any, args: argparse.Namespace, *, before: int, after: int, work: Path
) -> Row:
    namespace = f"ks-plugin-{before}-{after}-{uuid.uuid4().hex[:4]}"
    new_namespace(api, namespace)
    app = PluginApp(
        stack,
        api,
        namespace=namespace,
        replicas=before,
        probing_ms=args.probing_ms,
        work=work,
        jfr=work / "jfr" if args.jfr else None,
        learner_promotion=args.learner_promotion,
    )
    load = Workload(stack.kafka.bootstrap_servers, app.source, app.output, args)
    counted: list[int] = []

    def scale() -> None:
        counted.append(app.rebalances())
        app.scale(after)

    try:
        app.start()
        wait_for(f"{before} pods balanced", lambda: app.balanced(before), 300, app.diagnose)
        scaled = load.up_to_scale(scale)
        took = wait_for(f"{after} pods balanced", lambda: app.balanced(after), 600, app.diagnose)
        rebalances = app.rebalances() - counted[0]
        applied = app.applied()
        time.sleep(args.settle)
        late = load.finish(scaled)
    finally:
        texts = app.log_texts()  # kept in the work dir, also when the run failed
        app.stop()
        for pod, text in texts.items():
            (work / f"{pod}.log").write_text(text)
    logs = {pod: read_log(text) for pod, text in texts.items()}
    operator_log = "".join(
        p.read_text(errors="replace") for p in sorted(work.glob("operator-*.log"))
    )
    changelog = f"{app.application}-counts-store-changelog"
    mean = record_bytes(read_all(stack.kafka.bootstrap_servers, changelog, PARTITIONS))
    restored = _restored(logs, scaled)
    return Row(
        "Kafka Streams + Segue",
        before,
        after,
        took,
        max(peak_stateful(log.tasks, scaled) for log in logs.values()),
        sum(restored.values()),
        int(sum(n * mean.get(p, 0.0) for p, n in restored.items())),
        late,
        [log.tasks[-1].stateful_active for log in logs.values() if log.tasks],
        scaled,
        counting_moves(reports_timeline({p: log.tasks for p, log in logs.items()}, scaled)),
        rebalances=rebalances,
        notes=_notes(logs, applied, fallbacks(operator_log), scaled),
    )


def _restored(logs: dict[str, PodLog], since: float) -> dict[int, int]:
    total: dict[int, int] = {}
    for log in logs.values():
        for p, n in restored_records(log.restores, since, held(log.tasks, since)).items():
            total[p] = total.get(p, 0) + n
    return total


def fallbacks(operator_log: str) -> list[float]:
    """When the operator said ``AssignorFallback`` (Unix s): one per report whose
    rebalance Kafka Streams' own assignor placed."""
    return [
        datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
        for m in FALLBACK_EVENT.finditer(operator_log)
    ]


def _notes(logs: dict[str, PodLog], applied: str, fell_back: list[float], since: float) -> str:
    """Whether Segue placed: the operator's fallback events before and from the scale
    request on, the plugin's own lines (one per episode), what the last rebalance applied
    when balanced, and the pods' errors."""
    during = sum(1 for t in fell_back if t >= since)
    episodes = sum(len(log.fallbacks) for log in logs.values())
    errors = [f"{pod}: {e[:160]}" for pod, log in logs.items() for e in log.errors[-2:]]
    return (
        f"fallbacks: {during} from the scale request on, {len(fell_back) - during} before "
        f"(the operator's AssignorFallback; {episodes} episode(s) in the pods' logs); the "
        f"last rebalance applied {applied}" + (f"; errors: {' | '.join(errors)}" if errors else "")
    )
