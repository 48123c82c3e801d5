"""What the operator makes of one pod and its scrape (``segue.operator.observe.pod_obs``)."""

from __future__ import annotations

from segue.operator.observe.pod_obs import pod_obs
from segue.operator.observe.pods import PodState
from segue.operator.observe.scrape import WorkerReport


def test_actives_the_worker_reports_restoring_are_marked_restoring() -> None:
    state = PodState("wc-1", "Running", "10.0.0.2", True, False, 0, "uid", 0.0)
    report = WorkerReport(
        generation=3,
        roles={"1_0": "active", "1_1": "active", "1_2": "standby"},
        states={"1_0": "restoring", "1_1": "running", "1_2": "standby"},
    )
    obs = pod_obs(state, report)
    assert obs.restoring == frozenset({"1_0"})
    assert pod_obs(state, None).restoring == frozenset()


def test_an_active_runs_only_once_the_worker_reports_it_running() -> None:
    """A worker holds a task ``active`` from the generation that gives it, but processes
    it only once it fenced the previous owner (``starting``) and caught the store up
    (``restoring``): only ``running`` counts, for a handover and for ``Balanced``."""
    state = PodState("wc-1", "Running", "10.0.0.2", True, False, 0, "uid", 0.0)
    report = WorkerReport(
        generation=3,
        roles={t: "active" for t in ("1_0", "1_1", "1_2", "1_3")} | {"1_4": "standby"},
        states={
            "1_0": "starting",
            "1_1": "restoring",
            "1_2": "running",
            "1_3": "failed",
            "1_4": "standby",
        },
    )
    obs = pod_obs(state, report)
    assert obs.processing == frozenset({"1_2"})
    assert [t for t in sorted(obs.roles) if obs.runs(t)] == ["1_2"]
    assert not pod_obs(state, None).runs("1_2")
