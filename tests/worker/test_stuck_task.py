"""A stuck task never stalls the rest of its worker (issue 26, item 3).

One worker runs Tally's four tasks under steady input. Task ``0_1``'s producer is then
throttled by the broker to a few bytes per second (a Kafka client quota on its
``client.id``, which is its transactional id, set with the stack's real
``kafka-configs.sh``): its commits cannot flush, overrun their bound and are abandoned,
and the task fails and retries (``worker/committing.py``). Meanwhile the other three
tasks must keep processing and committing with no gap longer than ``GAP`` (a commit
run on the main loop held all of them for its whole 3 s timeout), the worker must not
exit, and once the quota is lifted ``0_1`` runs again and every count is exact.

``at`` in Tally's output is when a record was processed, so a stalled loop shows as a
gap in every task's committed output.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from segue.protocol.names import transactional_id

from .harness import WorkerProcess, create_topics, read_committed
from .scenarios import SteadyProducer, check_exact

pytestmark = pytest.mark.worker

CONFIGS = Path(sys.executable).parent / "kafka-configs.sh"  # stack/install/bin.sh
STUCK_FOR = 15.0  # seconds the quota holds task 0_1
GAP = 2.0  # the longest a healthy task may go without output meanwhile (measured: 0.65 s)


def quota(bootstrap: str, client: str, add: bool) -> None:
    change = (
        ["--add-config", "producer_byte_rate=16"]
        if add
        else ["--delete-config", "producer_byte_rate"]
    )
    argv = [str(CONFIGS), "--bootstrap-server", bootstrap, "--alter", "--entity-type", "clients",
            "--entity-name", client, *change]  # fmt: skip
    done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def processed(worker: WorkerProcess, tasks: list[str]) -> float:
    return sum(worker.metric("segue_task_records_processed_total", task=t) or 0 for t in tasks)


def longest_gap(outputs: list[dict[str, Any]], task: int, since: float, until: float) -> float:
    """The longest time between two outputs of ``task`` processed within [since, until]."""
    at = sorted(d["at"] for d in outputs if int(d["key"][1:]) % 4 == task)
    inside = [since] + [a for a in at if since < a < until] + [until]
    return max(b - a for a, b in itertools.pairwise(inside))


def test_a_stuck_task_never_stalls_the_others(
    kafka: Any, kube: Any, namespace: str, assign: Any, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex[:8]
    app_id, source, output = f"tally-{tag}", f"in-{tag}", f"out-{tag}"
    bootstrap = kafka.bootstrap_servers
    create_topics(bootstrap, {source: 4, output: 4})
    tasks = [f"0_{p}" for p in range(4)]
    assign(f"{app_id}-assignment", app_id, 1, {"w0": {"active": tasks}})
    worker = WorkerProcess(
        app="segue.worker.apps.tally:topology",
        member="w0",
        namespace=namespace,
        configmap=f"{app_id}-assignment",
        bootstrap=bootstrap,
        state_dir=tmp_path / "state",
        kubeconfig=kube.kubeconfig,
        log_dir=tmp_path,
        app_args={"application_id": app_id, "input": source, "output": output},
    ).start()
    producer = SteadyProducer(bootstrap, source, 4, keys=40, rate=400)
    stuck = transactional_id(app_id, "0_1")
    try:
        worker.wait_ready()
        producer.start()
        worker.wait_for("1000 records processed", lambda: processed(worker, tasks) >= 1000)
        quota(bootstrap, stuck, add=True)
        began = time.time()
        time.sleep(STUCK_FOR)
        quota(bootstrap, stuck, add=False)
        ended = time.time()
        assert worker.proc is not None
        assert worker.proc.poll() is None, f"the worker exited:\n{worker.log()[-4000:]}"
        lifted = processed(worker, ["0_1"])
        worker.wait_for(  # 0_1 retries and runs again, on live input
            "0_1 processing again", lambda: processed(worker, ["0_1"]) >= lifted + 200
        )
        produced = producer.stop()
        records = read_committed(bootstrap, output, lambda r: len(r) >= produced, timeout=180)
    finally:
        producer.stopped.set()
        worker.close()
    outputs = [json.loads(v) for _, _, _, v in records]
    gaps = {t: longest_gap(outputs, t, began + 1.0, ended) for t in range(4)}
    abandoned = worker.log().count("commit abandoned")
    print(
        f"\ntask 0_1 throttled {ended - began:.1f}s: longest gap in each task's output "
        f"{ {f'0_{t}': round(g, 2) for t, g in gaps.items()} }; commits abandoned {abandoned}; "
        f"{produced} records"
    )
    assert gaps[1] > 3.0, f"the quota did not hold task 0_1 up: {gaps}"
    assert all(gaps[t] < GAP for t in (0, 2, 3)), gaps
    check_exact(records, producer.sent)
