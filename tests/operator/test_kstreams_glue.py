"""The operator's pure glue for ``runtime: kafka-streams`` (``segue.operator.kstreams``):
what each pod holds, from the group report, the plugin's outcome and the agents' pages;
and every generation answering the group's latest report."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path

import pytest

from segue.operator.kstreams.answer import (
    BUSY_PROBE,
    FIRST_COMMIT,
    LEAD,
    REVOKING,
    SETTLED_PROBE,
    STANDBYS_AFTER,
    answered,
    awaited,
    followup_delay,
    starts,
)
from segue.operator.kstreams.group import Group
from segue.operator.kstreams.pods import observe_pods
from segue.operator.kstreams.told import told
from segue.operator.laps import Laps
from segue.operator.metrics import OperatorMetrics
from segue.operator.observe.agent import AgentReport, parse_agent_metrics
from segue.operator.observe.pods import PodState
from segue.operator.scaling import Published, Roles, World, decide
from segue.operator.scaling.model import Handover, Held, Memory, Plan, Policy, Progress
from segue.protocol import decode
from segue.protocol.kstreams import Applied, GroupReport, KafkaStreamsAnswer, topology_of
from segue.protocol.kstreams_answer import revokes

FIXTURES = Path(__file__).resolve().parents[1] / "contracts" / "kstreams"
REPORT = GroupReport.model_validate(json.loads((FIXTURES / "report.json").read_text()))
ENDS = {("wc-counts-changelog", p): 1000 for p in range(3)}
AGENTS = {
    "wc-0": AgentReport(("wc-a-StreamThread-1-consumer",)),
    "wc-1": AgentReport(("wc-b-StreamThread-1-consumer",)),
    "wc-2": AgentReport(("wc-c-StreamThread-1-consumer",), {("wc-counts-changelog", 1): 40}),
}
PUBLISHED = Published(
    4,
    {
        "wc-0": Roles(active=("0_0", "0_1", "1_0", "1_1")),
        "wc-1": Roles(active=("0_2", "1_2")),
        "wc-2": Roles(learning=("1_1",)),
    },
)


def state(name: str) -> PodState:
    return PodState(name, "Running", "10.0.0.1", True, False, 0, f"uid-{name}", 0.0)


def pods(applied: Applied | None, agents: dict[str, AgentReport] = AGENTS) -> dict:
    states = {n: state(n) for n in ("wc-0", "wc-1", "wc-2", "wc-3")}
    return observe_pods(states, agents, Group(REPORT, applied), PUBLISHED, ENDS)


def test_a_pod_is_a_member_once_the_report_has_a_client_its_agent_names() -> None:
    seen = pods(Applied(report=REPORT.id, generation=4))
    assert {n for n, p in seen.items() if p.reporting} == {"wc-0", "wc-1", "wc-2"}
    assert seen["wc-3"].generation is None  # no agent page, no client
    assert {seen[n].generation for n in ("wc-0", "wc-1", "wc-2")} == {4}


def test_the_applied_generation_gives_the_roles_and_lags_come_from_the_restore_consumer() -> None:
    seen = pods(Applied(report=REPORT.id, generation=4))
    assert seen["wc-2"].roles == {"1_1": "learning"}
    assert seen["wc-2"].offsets["1_1"] == {"counts": 960}  # end 1000, 40 behind
    assert seen["wc-0"].offsets["1_0"] == {"counts": 1000}  # an active writes its changelog
    assert seen["wc-0"].offsets["0_0"] == {}  # stateless
    assert seen["wc-0"].restoring == frozenset()


def test_a_fallback_leaves_every_pod_without_a_generation_and_roles_from_the_report() -> None:
    seen = pods(Applied(report=REPORT.id, fallback="no answer"))
    assert {p.generation for p in seen.values()} == {None}
    assert seen["wc-2"].roles == {"1_1": "standby"}  # what its client ran
    # wc-0's state of 1_2 on disk, as the report's lag says (5400 > end: nothing held)
    assert "1_2" not in seen["wc-0"].offsets


def test_a_task_moved_by_a_revoking_answer_is_not_active_on_its_new_owner_until_handed_over() -> (
    None
):
    """Kafka's cooperative protocol hands a moved task over a rebalance after the one
    that revokes it: until the group has run that second one (an applied record for
    another report), the new owner holds it as a standby and the handover is not done,
    so the standbys the target held back for it wait (Policy.learners_first)."""
    moved = Published(
        5,
        {
            "wc-0": Roles(active=("0_0", "0_1", "1_0")),
            "wc-1": Roles(active=("0_2", "1_2")),
            "wc-2": Roles(active=("1_1",)),
        },
    )
    revoking = KafkaStreamsAnswer(
        answers=REPORT.id, clients={}, followup_at_ms=1, then_followup_after_ms=1000
    )
    states = {n: state(n) for n in ("wc-0", "wc-1", "wc-2")}

    def seen(applied: Applied, answer: KafkaStreamsAnswer) -> dict:
        return observe_pods(states, AGENTS, Group(REPORT, applied), moved, ENDS, answer=answer)

    first = seen(Applied(report=REPORT.id, generation=5), revoking)
    assert first["wc-2"].roles == {"1_1": "standby"}
    assert first["wc-0"].roles == {t: "active" for t in ("0_0", "0_1", "1_0")}
    # taken up again at the next rebalance, for its own report: handed over
    second = seen(Applied(report="7f3c2a10-0002", generation=5), revoking)
    assert second["wc-2"].roles == {"1_1": "active"}
    # an answer that revokes nothing runs in one rebalance
    plain = revoking.model_copy(update={"then_followup_after_ms": None})
    assert seen(Applied(report=REPORT.id, generation=5), plain)["wc-2"].roles == {"1_1": "active"}


def test_an_active_its_restore_consumer_still_reads_is_restoring() -> None:
    agents = {
        **AGENTS,
        "wc-1": AgentReport(AGENTS["wc-1"].consumers, {("wc-counts-changelog", 2): 7}),
    }
    seen = pods(Applied(report=REPORT.id, generation=4), agents)
    assert seen["wc-1"].restoring == frozenset({"1_2"})
    assert seen["wc-1"].offsets["1_2"] == {"counts": 993}


def test_the_agent_page_parses_and_a_broken_one_is_refused() -> None:
    page = (
        'segue_kstreams_consumer_client{client_id="wc-a-StreamThread-1-consumer"} 1\n'
        'segue_kstreams_restore_lag{topic="wc-counts-changelog",partition="1"} 40\n'
        "# TYPE segue_kstreams_fallbacks counter\nsegue_kstreams_fallbacks_total 2\n"
    )
    got = parse_agent_metrics(page)
    assert got == AgentReport(
        ("wc-a-StreamThread-1-consumer",), {("wc-counts-changelog", 1): 40}, 2
    )
    with pytest.raises(ValueError, match="partition"):
        parse_agent_metrics('segue_kstreams_restore_lag{topic="t"} 4\n')


def world(published: Published | None, applied: Applied | None) -> World:
    states = {n: state(n) for n in ("wc-0", "wc-1", "wc-2")}
    return World(
        now=1_000.0,
        app="wc",
        application_id="wc",
        replicas=3,
        policy=Policy(),
        subtopologies=topology_of(REPORT).subtopologies,
        partitions={"text": 3, "wc-counts-repartition": 3, "wc-counts-changelog": 3},
        end_offsets=ENDS,
        published=published,
        pods=observe_pods(states, AGENTS, Group(REPORT, applied), published, ENDS),
    )


def test_a_report_nothing_answers_gets_the_generation_in_force_again_renumbered() -> None:
    w = world(PUBLISHED, Applied(report="older", generation=4))
    plan = decide(w)
    clients = {c.process_id: f"wc-{i}" for i, c in enumerate(REPORT.clients)}
    previous = KafkaStreamsAnswer(answers="older", clients=clients)
    out = answered(plan, w, Group(REPORT, None), previous, clients)
    assert out.publish is not None
    assert out.document is not None
    document = decode(out.document)
    assert document.kafka_streams is not None
    assert document.kafka_streams.answers == REPORT.id
    assert document.kafka_streams.clients == clients
    assert document.generation == (plan.publish or PUBLISHED).generation + (plan.publish is None)
    # the core moved an active task (the answer then asks for a rebalance at once), else
    # its learner has no rate yet
    moving = revokes(REPORT, out.publish.members, clients)
    probe = REVOKING if moving else followup_delay(plan, w)
    assert probe in ((REVOKING,) if moving else (BUSY_PROBE, SETTLED_PROBE))
    assert document.kafka_streams.followup_at_ms == round((w.now + probe) * 1000)
    # answered already: nothing more to publish than what the core decided
    again = answered(plan, w, Group(REPORT, None), document.kafka_streams, clients)
    assert again.publish == plan.publish


def test_a_generation_decided_while_the_group_runs_an_answered_one_asks_it_to_rejoin() -> None:
    """Only a rebalance takes a generation up; a scale-down decided while the group was
    told its next one is 15 s away waited those 15 s (seen: 14-15 s on every scale-down
    handover of the end-to-end test). Not while a rebalance waits for this very answer,
    nor when the one the group was asked for comes within ``STANDBYS_AFTER`` anyway."""
    w = world(PUBLISHED, Applied(report=REPORT.id, generation=4))
    clients = {c.process_id: f"wc-{i}" for i, c in enumerate(REPORT.clients)}
    later = round((w.now + SETTLED_PROBE) * 1000)
    running = KafkaStreamsAnswer(answers=REPORT.id, clients=clients, followup_at_ms=later)
    scaled = Published(5, {**PUBLISHED.members, "wc-2": Roles(("1_1",))})
    plan = replace(decide(w), publish=scaled)

    def rejoin(previous: KafkaStreamsAnswer) -> bool:
        out = answered(plan, w, Group(REPORT, None), previous, clients)
        answer = decode(out.document or b"").kafka_streams
        assert answer is not None
        return answer.rejoin

    assert rejoin(running)
    soon = round((w.now + BUSY_PROBE / 2) * 1000)
    assert not rejoin(running.model_copy(update={"followup_at_ms": soon}))
    # nor cut short a wait for moved tasks' first commits (the longest: STANDBYS_AFTER)
    waits = round((w.now + STANDBYS_AFTER - 0.1) * 1000)
    assert not rejoin(running.model_copy(update={"followup_at_ms": waits}))
    # a revoking answer's next rebalance comes at once, and its own follow-up after it
    revoked = running.model_copy(update={"followup_at_ms": soon, "then_followup_after_ms": 15000})
    assert rejoin(revoked)
    # the leader waits for an answer to this report: the answer is the rebalance
    assert not rejoin(running.model_copy(update={"answers": "older"}))
    # nothing to take up now: a generation that drops a pod already gone (its member
    # would hold the rebalance until its session ran out) or changes standbys only
    for same in (
        Published(5, {m: r for m, r in PUBLISHED.members.items() if m != "wc-2"}),
        Published(5, {**PUBLISHED.members, "wc-1": Roles(("0_2", "1_2"), standby=("1_0",))}),
    ):
        plan = replace(decide(w), publish=same)
        assert not rejoin(running), same


def test_a_generation_whose_step_deletes_a_member_s_pod_asks_the_group_to_rejoin() -> None:
    """A departing pod's consumers leave the group as they close (the client supplier),
    which starts a rebalance the others learn of only at their next heartbeat, every member
    that rejoined first committing nothing meanwhile: the answer asks them all to rejoin
    at once, even with a follow-up due soon. A pod gone without closing (a kill, its
    member dropped as expired, its pod not deleted) is not asked for."""
    w = world(PUBLISHED, Applied(report=REPORT.id, generation=4))
    clients = {c.process_id: f"wc-{i}" for i, c in enumerate(REPORT.clients)}
    soon = round((w.now + BUSY_PROBE / 2) * 1000)
    running = KafkaStreamsAnswer(answers=REPORT.id, clients=clients, followup_at_ms=soon)
    dropped = Published(5, {m: r for m, r in PUBLISHED.members.items() if m != "wc-2"})

    def answer(deleted: tuple[str, ...]) -> KafkaStreamsAnswer:
        plan = replace(decide(w), publish=dropped, delete_pods=deleted)
        out = answered(plan, w, Group(REPORT, None), running, clients)
        said = decode(out.document or b"").kafka_streams
        assert said is not None
        return said

    assert answer(("wc-2",)).rejoin
    assert not answer(()).rejoin
    assert not answer(("wc-9",)).rejoin  # not a member of the group
    # the pod going away is named, so its plugin does not rejoin: Kafka Streams would
    # hold its shutdown, and the rebalance, until that rebalance ended
    assert answer(("wc-2",)).leaving == ["wc-2"]
    assert answer(()).leaving == []


def test_an_ask_is_counted_and_said_and_only_an_awaited_answer_is_timed(caplog) -> None:
    """``segue_operator_kstreams_rejoin_asks_total`` counts the asks (an operator that asks
    every few seconds, or never, shows there); the answer's wait is timed only when the
    leader waited for it."""
    w = world(PUBLISHED, Applied(report=REPORT.id, generation=4))
    clients = {c.process_id: f"wc-{i}" for i, c in enumerate(REPORT.clients)}
    later = round((w.now + SETTLED_PROBE) * 1000)
    running = KafkaStreamsAnswer(answers=REPORT.id, clients=clients, followup_at_ms=later)
    scaled = Published(5, {**PUBLISHED.members, "wc-2": Roles(("1_1",))})
    plan = answered(replace(decide(w), publish=scaled), w, Group(REPORT, None), running, clients)
    metrics = OperatorMetrics()
    app = ("ns", "wc")

    def sample(name: str) -> float:
        return metrics.registry.get_sample_value(name, {"namespace": "ns", "app": "wc"}) or 0

    with caplog.at_level(logging.INFO, "segue.operator"):
        told(metrics, app, REPORT, previous=(running, PUBLISHED), plan=plan, laps=Laps())
    assert sample("segue_operator_kstreams_rejoin_asks_total") == 1
    assert sample("segue_operator_kstreams_answer_seconds_count") == 0
    assert "generation 5 asks the group to rebalance now" in caplog.text
    # the same generation for a report the leader waits on: an answer, timed, no ask
    waiting = running.model_copy(update={"answers": "older"})
    told(metrics, app, REPORT, previous=(waiting, PUBLISHED), plan=plan, laps=Laps())
    assert sample("segue_operator_kstreams_rejoin_asks_total") == 1
    assert sample("segue_operator_kstreams_answer_seconds_count") == 1


def test_a_client_whose_pod_the_generation_does_not_list_is_left_unmapped() -> None:
    """Seen on a real app: after a fallback no pod has a generation, so the core admits no
    joiner; mapping the joiner's client anyway made the plugin refuse every answer."""
    w = world(PUBLISHED, Applied(report="older", fallback="no answer"))
    plan = decide(w)
    clients = {c.process_id: f"wc-{i}" for i, c in enumerate(REPORT.clients)}
    clients[REPORT.clients[2].process_id] = "wc-9"  # a pod the generation does not list
    out = answered(plan, w, Group(REPORT, None), None, clients)
    assert out.document is not None
    answer = decode(out.document).kafka_streams
    assert answer is not None
    assert "wc-9" not in answer.clients.values()
    assert len(answer.clients) == 2


def test_an_answer_that_moves_an_active_task_asks_every_client_to_rejoin_at_once() -> None:
    """Kafka's cooperative protocol revokes a moving task in one rebalance and hands it
    over in the next; the members that did not revoke must not wait for a heartbeat or a
    probe to join that one (seen: 0.8 s of a 2 -> 3 handover's pause)."""
    w = world(PUBLISHED, Applied(report="older", generation=4))
    clients = {c.process_id: f"wc-{i}" for i, c in enumerate(REPORT.clients)}
    handover = Published(
        5,
        {
            "wc-0": Roles(active=("0_0", "0_1", "1_0")),
            "wc-1": Roles(active=("0_2", "1_2")),
            "wc-2": Roles(active=("1_1",)),
        },
    )
    plan = replace(decide(w), publish=handover)
    assert revokes(REPORT, handover.members, clients)
    moving = decode(answered(plan, w, Group(REPORT, None), None, clients).document or b"")
    assert moving.kafka_streams is not None
    assert moving.kafka_streams.followup_at_ms == round((w.now + REVOKING) * 1000)
    # ... and answers the next one too, with the follow-up due once the handover is done
    # (here nothing is left: the settled probe, not a rebalance a second after the handover)
    assert moving.kafka_streams.then_followup_after_ms == round(
        followup_delay(plan, w, taken_up=handover) * 1000
    )
    assert followup_delay(plan, w, taken_up=handover) == SETTLED_PROBE
    # standbys the target holds back until the handover is done (Policy.learners_first):
    # the group is asked to take them up once the moved task has most likely committed
    # on its new owner, not the settled probe later
    waiting = Held(standbys={"0_1": ("wc-2",)})
    later = replace(plan, busy=True, memory=replace(plan.memory, held=waiting))
    assert followup_delay(later, w, taken_up=handover) == STANDBYS_AFTER
    assert BUSY_PROBE < STANDBYS_AFTER < SETTLED_PROBE
    placed = Published(6, {**handover.members, "wc-2": Roles(("1_1",), ("0_1",))})
    assert followup_delay(later, w, taken_up=placed) == SETTLED_PROBE
    # a learner left for a second wave: that wave's rebalance waits for this one's first
    # commits, however soon the learner is expected
    first_wave = Published(
        5, {**handover.members, "wc-1": Roles(active=("0_2", "1_2"), learning=("1_0",))}
    )
    assert followup_delay(plan, w, taken_up=first_wave) < FIRST_COMMIT
    waves = decode(
        answered(replace(plan, publish=first_wave), w, Group(REPORT, None), None, clients).document
        or b""
    )
    assert waves.kafka_streams is not None
    assert waves.kafka_streams.then_followup_after_ms == round(FIRST_COMMIT * 1000)
    # the same roles on the clients that own them: nothing to revoke, the usual probe
    assert not revokes(REPORT, PUBLISHED.members, clients)
    kept = decode(
        answered(replace(plan, publish=PUBLISHED), w, Group(REPORT, None), None, clients).document
        or b""
    )
    assert kept.kafka_streams is not None
    assert kept.kafka_streams.followup_at_ms != round((w.now + REVOKING) * 1000)
    assert kept.kafka_streams.then_followup_after_ms is None
    # a client the answer leaves unmapped gives nothing it owns: nothing is moved off it
    assert not revokes(REPORT, handover.members, {c: m for c, m in clients.items() if m != "wc-2"})


def test_the_answer_that_completes_a_move_lets_the_moved_task_commit_before_the_next_one() -> None:
    """The second rebalance of a handover starts the moved task on its new owner, whose
    first commit comes 0.5-2.4 s later; a rebalance before it stops that commit too
    (seen: a 3 -> 6's moved tasks paused 2.1-2.5 s with the next one a second later).
    So with no learner left, the answer asks for the next one ``STANDBYS_AFTER`` on."""
    clients = {c.process_id: f"wc-{i}" for i, c in enumerate(REPORT.clients)}
    handed = Published(
        5,
        {
            "wc-0": Roles(active=("0_0", "0_1", "1_0")),
            "wc-1": Roles(active=("0_2", "1_2")),
            "wc-2": Roles(active=("1_1",)),
        },
    )
    # 1_1's owner revoked it in the rebalance before: no client of this report owns it
    revoked = REPORT.model_copy(
        update={
            "clients": [
                c.model_copy(update={"previous_active": ("0_0", "0_1", "1_0")})
                if c.process_id == REPORT.clients[0].process_id
                else c
                for c in REPORT.clients
            ]
        }
    )
    assert starts(revoked, handed, clients)
    assert not revokes(revoked, handed.members, clients)
    assert not starts(REPORT, handed, clients)  # still owned: the revoking round first
    w = world(handed, Applied(report="older", generation=5))
    plan = replace(decide(w), publish=None, busy=True)
    assert followup_delay(plan, w) < STANDBYS_AFTER  # what it would ask otherwise
    answer = decode(answered(plan, w, Group(revoked, None), None, clients).document or b"")
    assert answer.kafka_streams is not None
    assert answer.kafka_streams.followup_at_ms == round((w.now + STANDBYS_AFTER) * 1000)
    # a learner still restoring: its handover waits for the moved task's first commit
    # too, but less long, and no longer than its own estimate asks
    learning = Published(5, {**handed.members, "wc-1": Roles(("0_2", "1_2"), learning=("1_0",))})
    assert starts(revoked, learning, clients)
    plan = replace(plan, publish=learning)
    sooner = decode(answered(plan, w, Group(revoked, None), None, clients).document or b"")
    assert sooner.kafka_streams is not None
    delay = max(followup_delay(plan, w), FIRST_COMMIT)
    assert sooner.kafka_streams.followup_at_ms == round((w.now + delay) * 1000)
    assert BUSY_PROBE < FIRST_COMMIT < STANDBYS_AFTER
    # a client no pod's agent names yet (a joiner): the core may admit it at any look
    unmapped = {c: m for c, m in clients.items() if m != "wc-1"}
    late = decode(answered(plan, w, Group(revoked, None), None, unmapped).document or b"")
    assert late.kafka_streams is not None
    assert late.kafka_streams.followup_at_ms < round((w.now + STANDBYS_AFTER) * 1000)


def test_the_report_after_a_revoking_answer_is_left_to_the_leader_that_took_it_up() -> None:
    """The plugin takes a revoking answer up again for the next report without waiting
    (``answers_next``); the operator must not publish a renumbered copy for that one, and
    must answer any other, which the plugin waits on."""
    w = world(PUBLISHED, Applied(report="older", generation=PUBLISHED.generation))
    plan = replace(decide(w), publish=None)
    clients = {c.process_id: f"wc-{i}" for i, c in enumerate(REPORT.clients)}
    revoking = KafkaStreamsAnswer(
        answers="older", clients=clients, followup_at_ms=1, then_followup_after_ms=2
    )
    took_up = Applied(report="older", generation=PUBLISHED.generation)
    after = REPORT.model_copy(update={"last_applied": took_up})
    assert answered(plan, w, Group(after, None), revoking, clients) is plan
    for other in (
        REPORT,  # a leader that took up nothing of Segue's
        REPORT.model_copy(update={"last_applied": Applied(report="newer", generation=4)}),
    ):
        out = answered(plan, w, Group(other, None), revoking, clients)
        assert out.document is not None
        answer = decode(out.document).kafka_streams
        assert answer is not None
        assert answer.answers == REPORT.id
    not_revoking = revoking.model_copy(update={"then_followup_after_ms": None})
    assert answered(plan, w, Group(after, None), not_revoking, clients).document is not None
    # ... and no wait is timed for it (``segue_operator_kstreams_answer_seconds``), even
    # when the core publishes a new generation, which names that report for the next one
    assert not awaited(after, revoking, PUBLISHED)
    assert awaited(after, not_revoking, PUBLISHED)
    assert awaited(REPORT, revoking, PUBLISHED)
    assert not awaited(REPORT, revoking.model_copy(update={"answers": REPORT.id}), PUBLISHED)
    assert awaited(REPORT, None, PUBLISHED)
    assert awaited(after, revoking, None)


def test_a_report_that_took_a_newer_revoking_answer_up_is_left_to_its_leader() -> None:
    """A revoking generation decided since the leader took up its last, for the same
    report, is taken up at the next rebalance without a wait (``answers_newer``): the
    operator publishes no renumbered copy for that report unless the plugin predates it,
    and until the rebalance after, the moved task is only revoked."""
    w = world(PUBLISHED, Applied(report="older", generation=PUBLISHED.generation - 1))
    plan = replace(decide(w), publish=None)
    clients = {c.process_id: f"wc-{i}" for i, c in enumerate(REPORT.clients)}
    revoking = KafkaStreamsAnswer(
        answers="older", clients=clients, followup_at_ms=1, then_followup_after_ms=2
    )
    after = REPORT.model_copy(
        update={"last_applied": Applied(report="older", generation=PUBLISHED.generation - 1)}
    )
    assert after.takes_newer
    assert answered(plan, w, Group(after, None), revoking, clients) is plan
    assert not awaited(after, revoking, PUBLISHED)
    old_plugin = after.model_copy(update={"takes_newer": False})
    assert awaited(old_plugin, revoking, PUBLISHED)
    out = answered(plan, w, Group(old_plugin, None), revoking, clients)
    assert out.document is not None
    assert decode(out.document).kafka_streams.answers == REPORT.id  # type: ignore[union-attr]
    not_revoking = revoking.model_copy(update={"then_followup_after_ms": None})
    assert awaited(after, not_revoking, PUBLISHED)
    # the leader's applied record for it: the moved task is revoked, not handed over yet
    moved = Published(
        PUBLISHED.generation,
        {
            "wc-0": Roles(active=("0_0", "0_1", "1_0")),
            "wc-1": Roles(active=("0_2", "1_2")),
            "wc-2": Roles(active=("1_1",)),
        },
    )
    states = {n: state(n) for n in ("wc-0", "wc-1", "wc-2")}
    took = Applied(report=REPORT.id, generation=moved.generation, newer=True)
    seen = observe_pods(states, AGENTS, Group(REPORT, took), moved, ENDS, answer=revoking)
    assert seen["wc-2"].roles == {"1_1": "standby"}
    unmarked = Applied(report=REPORT.id, generation=moved.generation)
    seen = observe_pods(states, AGENTS, Group(REPORT, unmarked), moved, ENDS, answer=revoking)
    assert seen["wc-2"].roles == {"1_1": "active"}  # taken up again: handed over


def test_no_report_no_answer() -> None:
    w = world(PUBLISHED, None)
    plan = decide(w)
    assert answered(plan, w, Group(None, None), None, {}) is plan


def test_a_rebalance_is_counted_once_and_a_fallback_said_once() -> None:
    from segue.operator.kstreams.seen import GroupsSeen

    seen = GroupsSeen()
    fell_back = Applied(report=REPORT.id, fallback="no answer within 5000 ms")
    first = seen.saw("uid", Group(REPORT, fell_back), published=False)
    assert not first.rebalanced  # the first report seen is not counted: it may be old
    assert first.fallback is not None
    # before Segue's first generation a fallback is how an app starts: said, not warned
    assert (first.fallback.type, first.fallback.reason) == ("Normal", "AssignorFallback")
    again = seen.saw("uid", Group(REPORT, fell_back), published=True)
    assert again.fallback is None  # said once per report
    later = REPORT.model_copy(update={"id": "later"})
    news = seen.saw("uid", Group(later, Applied(report="later", fallback="refused")), True)
    assert news.rebalanced
    assert news.fallback is not None
    assert news.fallback.type == "Warning"
    assert "refused" in news.fallback.message


def test_a_learner_knows_its_rate_and_when_it_is_expected_caught_up() -> None:
    fresh = Progress("wc-2", 50_000, 100.0, 50_000, 100.0)
    assert fresh.rate() is None  # not dropped yet: no rate
    assert fresh.eta(10_000, 101.0) is None
    going = Progress("wc-2", 30_000, 104.0, 50_000, 100.0)  # 20,000 in 4 s
    assert going.rate() == 5_000.0
    assert going.eta(10_000, 104.0) == 4.0
    assert going.eta(10_000, 105.0) == 3.0  # a second since its last reading
    assert going.eta(10_000, 200.0) == 0.0
    assert Progress("wc-2", 9_000, 104.0, 9_000, 104.0).eta(10_000, 104.0) == 0.0


def learning_plan(w: World, progress: Progress | None, **memory: object) -> Plan:
    """A busy plan with nothing in flight but wc-2 learning 1_1 (``progress``)."""
    held = Held(moves={"1_1": "wc-2"}, progress={"1_1": progress} if progress else {})
    return replace(decide(w), publish=None, busy=True, memory=replace(Memory(held=held), **memory))


def test_the_next_rebalance_comes_a_second_before_a_learner_is_expected_caught_up() -> None:
    w = replace(world(PUBLISHED, Applied(report=REPORT.id, generation=4)), policy=Policy(
        acceptable_recovery_lag=100
    ))  # fmt: skip
    now = w.now
    # 1,000 records/s since it started, 6,000 to go: expected in 6 s, asked in 5
    going = Progress("wc-2", 6_100, now, 12_100, now - 6)
    assert followup_delay(learning_plan(w, going), w) == 6.0 - LEAD
    # far behind: no more than the settled probe
    slow = Progress("wc-2", 600_100, now, 612_100, now - 12)
    assert followup_delay(learning_plan(w, slow), w) == SETTLED_PROBE
    # nearly there: no sooner than the busy probe
    near = Progress("wc-2", 600, now, 12_100, now - 6)
    assert followup_delay(learning_plan(w, near), w) == BUSY_PROBE
    # no rate yet (just assigned), or anything else in flight: the busy probe
    assert followup_delay(learning_plan(w, None), w) == BUSY_PROBE
    fresh = Progress("wc-2", 12_100, now, 12_100, now)
    assert followup_delay(learning_plan(w, fresh), w) == BUSY_PROBE
    handing = {"1_0": Handover("wc-0", now)}
    assert followup_delay(learning_plan(w, going, handovers=handing), w) == BUSY_PROBE
    # a pod joining: its own JoinGroup brings the rebalance that reports it; with its
    # client in the group but not named by its agent yet, the core may admit it any look
    joiner = {"wc-3": now - 1}
    waiting = replace(learning_plan(w, going, joining=joiner), wake_at=now + 3.5)
    assert followup_delay(waiting, w) == 3.5  # the batch's deadline: the core admits then
    assert followup_delay(replace(waiting, wake_at=now + 9), w) == 6.0 - LEAD  # the learner
    assert followup_delay(waiting, w, unmapped=True) == BUSY_PROBE
    elsewhere = Progress("wc-1", 6_100, now, 12_100, now - 6)  # another member's progress
    assert followup_delay(learning_plan(w, elsewhere), w) == BUSY_PROBE
    # busy with no learner and no joiner to time it by: soon
    idle = replace(w, published=Published(5, {"wc-0": Roles(active=("0_0",))}))
    assert followup_delay(learning_plan(idle, going), idle) == BUSY_PROBE
    settled = replace(learning_plan(w, going), busy=False)
    assert followup_delay(settled, w) == SETTLED_PROBE


def test_a_learners_progress_keeps_where_it_started_across_looks() -> None:
    """The held target's progress (``hold._progress``) keeps a learner's first lag and
    time, so its rate is known from the second look on."""
    w = replace(
        world(PUBLISHED, Applied(report=REPORT.id, generation=4)),
        policy=Policy(acceptable_recovery_lag=10),  # 40 behind: still learning
    )
    agents = {
        **AGENTS,
        "wc-2": AgentReport(AGENTS["wc-2"].consumers, {("wc-counts-changelog", 1): 900}),
    }
    first = replace(w, pods=observe_pods(
        {n: state(n) for n in ("wc-0", "wc-1", "wc-2")}, agents,
        Group(REPORT, Applied(report=REPORT.id, generation=4)), PUBLISHED, ENDS,
    ))  # fmt: skip
    held = decide(first).memory.held
    assert held is not None
    p = held.progress["1_1"]
    assert (p.member, p.lag, p.since, p.start_lag, p.started) == ("wc-2", 900, w.now, 900, w.now)
    later = replace(w, now=w.now + 2, memory=replace(first.memory, held=held))
    again = decide(later).memory.held
    assert again is not None
    q = again.progress["1_1"]
    assert (q.lag, q.since, q.start_lag, q.started) == (40, w.now + 2, 900, w.now)
    assert q.rate() == 430.0


def test_a_learners_rate_is_timed_from_when_it_began_restoring() -> None:
    """A new pod's copy restores only once its process is through the rebalances of its
    batch: the seconds before its lag first drops are not restoring. Timed from the
    assignment, the rate came out several times too slow and the follow-up that waits
    for the learner came seconds after it was caught up (bench/kstreams, 3 -> 6)."""
    w = replace(
        world(PUBLISHED, Applied(report=REPORT.id, generation=4)),
        policy=Policy(acceptable_recovery_lag=10),
    )

    def look(at: float, restored: int, memory: Memory) -> Memory:
        agents = {
            **AGENTS,
            "wc-2": AgentReport(
                AGENTS["wc-2"].consumers, {("wc-counts-changelog", 1): 900 - restored}
            ),
        }
        seen = replace(w, now=w.now + at, memory=memory, pods=observe_pods(
            {n: state(n) for n in ("wc-0", "wc-1", "wc-2")}, agents,
            Group(REPORT, Applied(report=REPORT.id, generation=4)), PUBLISHED, ENDS,
        ))  # fmt: skip
        return decide(seen).memory

    memory = look(0, 0, w.memory)  # assigned: 900 behind
    memory = look(3, 0, memory)  # three seconds on, not begun
    held = memory.held
    assert held is not None
    p = held.progress["1_1"]
    assert (p.lag, p.since, p.start_lag, p.started) == (900, w.now, 900, w.now + 3)
    assert p.rate() is None
    memory = look(4, 450, memory)  # half of it in the second since
    held = memory.held
    assert held is not None
    q = held.progress["1_1"]
    assert (q.lag, q.since, q.start_lag, q.started) == (450, w.now + 4, 900, w.now + 3)
    assert q.rate() == 450.0  # not 450 / 4
    assert q.eta(10, w.now + 4) == 440 / 450
