"""Static membership (seed 002) and partition expansion (seed 004) in the state machine."""

from __future__ import annotations

from dataclasses import replace

import pytest

from segue import protocol
from segue.operator.scaling import Plan, Published, Roles, from_document, to_document
from segue.operator.scaling.events import expiry
from segue.protocol import DocumentError, Expansion

from .sim import Sim
from .test_scaling import one_owner_each


def test_a_pod_that_vanishes_keeps_its_tasks_and_is_recreated() -> None:
    sim = Sim(replicas=3)
    sim.run()
    before = sim.owners()
    del sim.pods["wc-1"]
    plan = sim.step()
    assert plan.create_pods == ("wc-1",)
    assert "wc-1" in plan.memory.absent
    degraded = {c.type: c for c in plan.assessment.conditions}["Degraded"]
    assert degraded.status == "True"
    assert degraded.reason == "MemberAbsent"
    sim.run()
    assert sim.owners() == before  # nothing moved: it came back under its name
    assert "wc-1" not in sim.memory.absent
    assert not sim.events("TaskHandedOver")


def test_a_member_away_past_the_registration_timeout_loses_its_tasks() -> None:
    sim = Sim(replicas=3).with_policy(registration_timeout=5.0)
    sim.run()
    lost = {t for t, m in sim.owners().items() if m == "wc-1"}
    sim.pods["wc-1"].alive = False  # the pod exists but its worker never answers
    for _ in range(4):
        plan = sim.step()
        assert {t for t, m in sim.owners().items() if m == "wc-1"} == lost
        sim.pods["wc-1"].alive = False
    assert _degraded(plan) == (
        "wc-1 is away; its tasks wait for it up to registrationTimeoutSeconds=5s, "
        "then go to the other members"
    )
    for _ in range(4):
        plan = sim.step()
        sim.pods["wc-1"].alive = False
    one_owner_each(sim.published)
    assert not {t for t, m in sim.owners().items() if m == "wc-1"}
    assert sim.events("MemberExpired") == [
        "wc-1 has been away for 5 s, past registrationTimeoutSeconds=5s: "
        "its tasks are reassigned (caught-up standbys first)"
    ]
    assert _degraded(plan) == (  # said after the expiry: no longer "wait for it"
        "wc-1 is away past registrationTimeoutSeconds=5s: its tasks go to the other "
        "members, and it rejoins when its pod reports again"
    )
    assert sim.published is not None
    assert sim.published.members["wc-1"] == Roles()
    assert plan.assessment.phase == "Degraded"
    sim.step()  # it answers again: it rejoins and the tasks balance back
    sim.run()
    assert {m for m in sim.owners().values()} == {"wc-0", "wc-1", "wc-2"}


def test_with_no_registration_timeout_an_absent_members_tasks_go_at_once() -> None:
    """Kafka Streams apps take registrationTimeoutSeconds as 0: the words say the tasks
    move now, not that they wait for a timeout of 0, and carry no raw time."""
    sim = Sim(replicas=3).with_policy(registration_timeout=0.0)
    sim.run()
    sim.pods["wc-1"].alive = False
    plan = sim.step()
    assert not {t for t, m in sim.owners().items() if m == "wc-1"}
    assert sim.events("MemberExpired") == [
        "wc-1 is away; with registrationTimeoutSeconds=0 its tasks go to the other members "
        "at once (caught-up standbys first)"
    ]
    message = (
        "wc-1 is away; with registrationTimeoutSeconds=0 its tasks go to the other members "
        "at once, and it rejoins when its pod reports again"
    )
    assert _degraded(plan) == message
    sim.pods["wc-1"].alive = False
    plan = sim.step()  # a look later: the same words, so no second Warning
    assert _degraded(plan) == message
    assert [e.message for e in plan.events if e.reason == "MemberAbsent"] == []


def test_an_expiry_says_how_long_the_member_was_away_in_seconds() -> None:
    assert expiry("wc-1", 12.4, 10.0) == (
        "wc-1 has been away for 12 s, past registrationTimeoutSeconds=10s: "
        "its tasks are reassigned (caught-up standbys first)"
    )
    assert expiry("wc-1", 3.0, 0.0).startswith("wc-1 is away for 3 s; with ")


def _degraded(plan: Plan) -> str:
    degraded = plan.assessment.condition("Degraded")
    assert (degraded.status, degraded.reason) == ("True", "MemberAbsent")
    return degraded.message


def test_sources_doubled_keep_the_task_count_and_publish_the_mapping() -> None:
    sim = Sim(replicas=2)
    sim.partitions["wc-counts-changelog"] = 6
    sim.run()
    sim.partitions["in"] = 12
    plan = sim.step()
    assert plan.publish is not None
    assert plan.publish.partition_map == {0: Expansion(6, 12)}
    one_owner_each(sim.published)  # still tasks 0_0 .. 0_5
    assert sim.events("PartitionsExpanded")
    sim.run()
    assert sim.plans[-1].assessment.phase == "Running"


def test_an_expansion_that_would_split_keys_is_refused_and_the_old_mapping_runs() -> None:
    sim = Sim(replicas=2)
    sim.partitions["wc-counts-changelog"] = 6
    sim.run()
    generation = sim.published.generation if sim.published else 0
    sim.partitions["in"] = 9
    plan = sim.step()
    assert plan.publish is None
    assert sim.published is not None
    assert sim.published.generation == generation
    assert not sim.published.partition_map
    degraded = {c.type: c for c in plan.assessment.conditions}["Degraded"]
    assert degraded.status == "True"
    assert degraded.reason == "PartitionExpansionRefused"
    assert "multiple of 6" in degraded.message
    warnings = [e for e in plan.events if e.type == "Warning"]
    assert [e.reason for e in warnings] == ["PartitionExpansionRefused"]
    assert not [e for e in sim.step().events if e.type == "Warning"]  # said once, not every step
    one_owner_each(sim.published)


def test_a_missing_source_topic_is_degraded_and_keeps_the_last_assignment() -> None:
    sim = Sim(replicas=2)
    sim.run()
    before = sim.owners()
    del sim.partitions["in"]
    plan = sim.step()
    assert plan.publish is None
    assert sim.owners() == before
    degraded = {c.type: c for c in plan.assessment.conditions}["Degraded"]
    assert degraded.reason == "SourceTopicMissing"
    assert "in" in degraded.message


def encode(published: Published, application_id: str) -> bytes:
    return protocol.encode(to_document(published, application_id))


def decode(blob: bytes) -> Published:
    return from_document(protocol.decode(blob))


def test_the_document_round_trips_and_is_deterministic() -> None:
    published = Published(
        7,
        {"wc-0": Roles(("0_0",), ("0_1",), ()), "wc-1": Roles(("0_1",), (), ("0_0",))},
        {0: Expansion(6, 12)},
    )
    blob = encode(published, "wc")
    assert blob == encode(published, "wc")
    assert decode(blob) == published
    assert decode(encode(replace(published, partition_map={}), "wc")).partition_map == {}
    with pytest.raises(DocumentError, match=r"assignment\.json\.gz"):
        decode(b"not gzip")


def joined_in(sim: Sim, new: set[str]) -> list[set[str]]:
    """The new members each publication brought in, in order (batches of joiners)."""
    seen: set[str] = set()
    batches = []
    for plan in sim.plans:
        if plan.publish is None:
            continue
        came = (set(plan.publish.members) & new) - seen
        if came:
            batches.append(came)
            seen |= came
    return batches


def test_the_pods_of_one_scale_join_in_one_batch_even_when_one_starts_late() -> None:
    sim = Sim(replicas=3, rate=400)
    sim.run()
    sim.replicas = 6
    sim.late = {"wc-5": 10}  # well within expansionTimeoutSeconds (30 steps of 1 s)
    sim.run()
    assert joined_in(sim, {"wc-3", "wc-4", "wc-5"}) == [{"wc-3", "wc-4", "wc-5"}]
    assert not sim.events("JoinDeferred")


def test_a_pod_past_the_expansion_timeout_joins_the_next_batch_and_says_so() -> None:
    sim = Sim(replicas=3, rate=400).with_policy(expansion_timeout=5.0)
    sim.run()
    sim.replicas = 6
    sim.late = {"wc-5": 10}
    sim.run()
    assert joined_in(sim, {"wc-3", "wc-4", "wc-5"}) == [{"wc-3", "wc-4"}, {"wc-5"}]
    assert sim.events("JoinDeferred") == [
        "wc-5 did not report with the assignment read within expansionTimeoutSeconds=5s: "
        "wc-3, wc-4 join now, "
        "wc-5 with the next batch"
    ]


def test_a_pod_joins_once_it_has_read_the_assignment_not_merely_reported() -> None:
    """A joiner whose watch is not up yet would see the generation that hands it tasks
    late, after their old owners stopped: it is admitted once it reports a generation."""
    sim = Sim(replicas=3, rate=400).with_policy(expansion_timeout=5.0)
    sim.run()
    sim.replicas = 4
    sim.blind = {"wc-3"}  # it runs and reports, but has read no assignment
    for _ in range(4):
        sim.step()
    assert sim.published is not None
    assert "wc-3" not in sim.published.members
    sim.blind = set()  # its watch comes up
    sim.run()
    assert "wc-3" in sim.published.members
    assert joined_in(sim, {"wc-3"}) == [{"wc-3"}]


def test_a_joiner_that_never_gets_ready_is_named_with_why() -> None:
    """A lone joiner that never reads the assignment does not leave the status at "1
    pod(s) joining" with no reason: the Scaling condition names it and why, past
    expansionTimeoutSeconds it says so, and one Warning says who and why."""
    sim = Sim(replicas=3, rate=400).with_policy(expansion_timeout=5.0)
    sim.run()
    sim.replicas = 4
    sim.blind = {"wc-3"}
    for _ in range(8):
        sim.step()
    waiting = sim.events("JoinWaiting")
    assert waiting, [e.reason for p in sim.plans for e in p.events]
    assert "wc-3: it has not read the assignment" in waiting[0]
    assert "expansionTimeoutSeconds=5s" in waiting[0]
    scaling = sim.plans[-1].assessment.condition("Scaling")
    assert scaling.reason == "ScalingUp"
    assert "wc-3: it has not read the assignment" in scaling.message, scaling
    assert "not ready within expansionTimeoutSeconds=5s" in scaling.message, scaling
    assert len(waiting) == 1  # said once, as the status turns, not at every look
    sim.blind = set()
    sim.run()
    assert sim.published is not None
    assert "wc-3" in sim.published.members
