"""The simulator driving the real decision core, and the baselines it is compared with."""

from __future__ import annotations

from segue.operator.scaling import Policy
from segue.pipeline.metrics import Outcome
from segue.pipeline.policies.eager import EagerController
from segue.pipeline.policies.kip441 import PROBING_REBALANCE_INTERVAL, Kip441Controller
from segue.pipeline.policies.segue import SegueController
from segue.pipeline.scenario import PartitionsExpanded, PodLost
from segue.pipeline.simulate import simulate
from segue.protocol.history import HistoryRecord

from .scenarios import S, scale_out


def test_segue_scales_out_with_only_the_handover_instants_unavailable() -> None:
    out = simulate(scale_out(), SegueController())
    assert out.time_to_balance is not None
    assert 20 <= out.time_to_balance < 60  # startup (20 s) + restore (5 s) + a few looks
    assert out.handovers == 4  # 8 tasks on 2 pods -> 2 each on 4
    assert out.task_seconds_unavailable == out.handovers * 1.0  # one tick per handover
    assert out.final_active_skew == 0


def test_segue_leaves_fewer_tasks_unavailable_than_eager() -> None:
    segue = simulate(scale_out(), SegueController())
    eager = simulate(scale_out(), EagerController())
    assert eager.time_to_balance is not None
    assert eager.generations_published == 1
    # stop-the-world: every task stops a tick, and the moved ones restore 5 s first
    assert eager.task_seconds_unavailable == 8 * 1 + 4 * 4
    assert segue.task_seconds_unavailable < eager.task_seconds_unavailable
    assert segue.records_processed_late < eager.records_processed_late


def test_restored_bytes_are_what_moved() -> None:
    for controller in (SegueController(), EagerController(), Kip441Controller()):
        out = simulate(scale_out(duration=1500), controller)
        assert out.handovers == 4, controller
        assert out.state_bytes_restored == out.handovers * S, controller


def test_standbys_restore_their_copies_too() -> None:
    out = simulate(scale_out(), SegueController(Policy(num_standby_replicas=1)))
    assert out.time_to_balance is not None
    assert out.state_bytes_restored > out.handovers * S


def test_kip441_waits_a_probing_interval_for_each_batch_of_two_warmups() -> None:
    out = simulate(scale_out(duration=1500), Kip441Controller())
    assert out.time_to_balance is not None
    # 4 tasks to move, 2 warm-ups at a time: two probing rebalances after the join
    assert 2 * PROBING_REBALANCE_INTERVAL <= out.time_to_balance < 3 * PROBING_REBALANCE_INTERVAL
    assert out.generations_published == 3
    assert out.task_seconds_unavailable <= out.handovers * 1.0


def test_kip441_with_more_warmups_needs_one_probe() -> None:
    out = simulate(scale_out(duration=1500), Kip441Controller(max_warmup_replicas=4))
    assert out.time_to_balance is not None
    assert PROBING_REBALANCE_INTERVAL <= out.time_to_balance < 2 * PROBING_REBALANCE_INTERVAL


def test_kip441_never_balances_within_a_short_horizon() -> None:
    out = simulate(scale_out(duration=300), Kip441Controller())
    assert out.time_to_balance is None
    assert out.unbalanced is not None
    assert out.unbalanced.startswith("a probing rebalance is due at t=")


def test_a_run_that_ends_mid_scale_says_why_in_the_policys_own_words() -> None:
    # the new pods start 20 s after the scale at 10 s: the run ends while they start
    segue = simulate(scale_out(duration=25), SegueController())
    assert segue.time_to_balance is None
    assert segue.unbalanced is not None
    assert segue.unbalanced.startswith("Balanced False"), segue.unbalanced
    eager = simulate(scale_out(duration=25), EagerController())
    assert eager.unbalanced == (
        "the assignment's members are not the pods (no pod: [], no member: ['wc-2', 'wc-3'])"
    )
    assert simulate(scale_out(), SegueController()).unbalanced is None


def test_a_lost_pod_comes_back_and_restores_its_tasks() -> None:
    s = scale_out(replicas=2, to=2)
    s = s.model_copy(update={"events": [PodLost(at=10, ordinal=1)]})
    for controller in (SegueController(), EagerController()):
        out = simulate(s, controller)
        assert out.time_to_balance is not None, controller
        assert out.state_bytes_restored == 4 * S, controller  # wc-1's four tasks, from scratch
        assert out.task_seconds_unavailable >= 4 * 20, controller  # at least the restart


def test_expanded_partitions_get_owners() -> None:
    s = scale_out(replicas=2, to=2)
    s = s.model_copy(update={"events": [PartitionsExpanded(at=10, subtopology=0, partitions=16)]})
    for controller in (SegueController(), EagerController(), Kip441Controller()):
        out = simulate(s, controller)
        assert out.time_to_balance is not None, controller
        assert out.final_active_skew <= 1, controller


def test_runs_are_deterministic() -> None:
    def run() -> Outcome:
        return simulate(scale_out(), SegueController(), seed=5)

    assert run() == run()


def test_the_simulator_emits_valid_history_rows() -> None:
    rows: list[HistoryRecord] = []
    simulate(scale_out(duration=60), SegueController(), record=rows.append)
    assert len(rows) == 60
    for row in rows:
        HistoryRecord.model_validate(row.model_dump())
    assert rows[-1].spec_replicas == 4
    gens = [r.generation for r in rows]
    assert gens == sorted(gens)
    assert gens[-1] > gens[0]
    assert sum(r.handovers for r in rows) == 4
    assert sum(r.bytes_restored for r in rows) == 4 * S
    learning = [c for r in rows for c in r.copies if c.role == "learning"]
    assert learning
    # 0 in the tick before its pod applies the generation and once it has caught up
    assert {c.restore_rate for c in learning} == {0.0, 20_000.0}
    assert all(c.restore_rate == 0 for r in rows for c in r.copies if c.role == "active")


def test_new_partitions_are_not_balanced_until_owned() -> None:
    s = scale_out(replicas=2, to=2, duration=30)
    stateless = s.subtopologies[0].model_copy(update={"state_bytes": []})
    s = s.model_copy(
        update={
            "subtopologies": [stateless],
            "events": [PartitionsExpanded(at=10, subtopology=0, partitions=16)],
        }
    )
    out = simulate(s, SegueController(idle_interval=60.0))  # it will not look again in time
    assert out.balance_times == (None,)
    assert simulate(s, SegueController()).time_to_balance is not None


def test_segue_keeps_a_stateful_sub_topology_s_tasks_on_expansion() -> None:
    s = scale_out(replicas=2, to=2, duration=60)
    s = s.model_copy(update={"events": [PartitionsExpanded(at=10, subtopology=0, partitions=16)]})
    tasks: dict[str, int] = {}
    for controller in (SegueController(), EagerController()):
        rows: list[HistoryRecord] = []
        out = simulate(s, controller, record=rows.append)
        assert out.time_to_balance is not None
        tasks[controller.name] = len({c.task for c in rows[-1].copies if c.role == "active"})
        assert out.generations_published == 1  # Segue's: the partition map; eager's: new tasks
    # seed 004: partition p goes to task p mod 8; Kafka Streams gets 8 new, empty tasks
    assert tasks == {"segue": 8, "eager": 16}
