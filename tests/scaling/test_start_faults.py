"""Pods that cannot start (an init container fails: ``PodObs.start_fault``), as a Kafka
Streams pod whose agent jar is not where the operator's flags say: ``Degraded`` names
them and why while they are built from the current template, and once the template
changes (the operator's agent flag fixed, which the template hash covers) they are
replaced, never waited on."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from segue.operator.scaling import Plan, PodObs, TaskFault

from .sim import Sim, SimPod
from .test_scaling import balanced

MISSING = TaskFault("AgentMissing", "its init container cannot copy /opt/segue/x.jar")


@dataclass
class StartSim(Sim):
    broken: str = ""  # pods built from this template never start: their agent is missing
    fresh: bool = False  # ... only those created from now on (``doomed``)
    doomed: set[str] = field(default_factory=set)

    def _carry_out(self, plan: Plan) -> None:
        super()._carry_out(plan)
        if self.fresh:
            self.doomed |= set(plan.create_pods)

    def _observe(self, name: str, pod: SimPod) -> PodObs:
        seen = super()._observe(name, pod)
        if pod.template != self.broken or (self.fresh and name not in self.doomed):
            return seen
        return replace(seen, running=False, ready=False, reporting=False, start_fault=MISSING)


def degraded(sim: Sim) -> tuple[str, str, str]:
    condition = sim.plans[-1].assessment.condition("Degraded")
    return condition.status, condition.reason, condition.message


def test_pods_that_cannot_start_are_degraded_and_kept_while_their_template_is_current() -> None:
    sim = StartSim(replicas=2, template="a", broken="a")
    for _ in range(5):
        plan = sim.step()
        assert plan.delete_pods == (), "a pod of the current template is not replaced"
    assert sorted(sim.pods) == ["wc-0", "wc-1"]
    assert degraded(sim) == ("True", "AgentMissing", f"wc-0, wc-1 cannot start: {MISSING.message}")
    assert plan.assessment.phase == "Degraded"
    assert plan.assessment.condition("Scaling").message == (
        "2 pod(s) joining: wc-0, wc-1; wc-0: its pod cannot start (AgentMissing, see Degraded)"
        "; wc-1: its pod cannot start (AgentMissing, see Degraded)"
    )
    warned = [e for p in sim.plans for e in p.events if e.reason == "AgentMissing"]
    assert [e.type for e in warned] == ["Warning"]  # said once, not at every look


def test_a_fixed_template_replaces_the_pods_that_could_not_start() -> None:
    sim = StartSim(replicas=2, template="a", broken="a")
    for _ in range(3):
        sim.step()
    sim.template = "b"  # the operator's agent flag fixed: the template hash moves
    plan = sim.step()
    assert sorted(plan.delete_pods) == ["wc-0", "wc-1"]  # at once: they run nothing
    assert degraded(sim)[0] == "False"  # an older template's failure may be what was fixed
    sim.run()
    assert all(p.template == "b" for p in sim.pods.values())
    balanced(sim, 2)
    assert degraded(sim) == ("False", "AsExpected", "no degradations")


def test_a_member_whose_new_pod_cannot_start_is_named_until_it_is_replaced() -> None:
    sim = StartSim(replicas=2, template="a")
    sim.run()
    balanced(sim, 2)
    sim.broken, sim.fresh = "a", True  # a pod made from now on fails to start
    del sim.pods["wc-1"]
    sim.step()
    sim.step()
    status, reason, message = degraded(sim)
    assert (status, reason) == ("True", "AgentMissing"), message
    assert message.startswith("wc-1 cannot start: ")
    sim.template = "b"
    sim.run()
    assert all(p.template == "b" for p in sim.pods.values())
    balanced(sim, 2)
