"""``TransactionsEnded``: a sink or changelog partition held by a transaction nobody will
end is named in the status, with its offset and the ``kafka-transactions.sh`` commands
that end it, and one Warning; a live transaction (its LSO moving, or unmoved for less
than the bound) is not; the condition clears with a Normal event once the LSO reaches the
high watermark; a restarted operator neither clears nor repeats it before it can tell."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from segue.operator.scaling import World
from segue.operator.scaling.hanging import BOUND, watch
from segue.operator.scaling.model import Stall
from segue.protocol.topology import SubTopologyDescription

from .sim import Sim

Partition = tuple[str, int]
CHANGELOG = "wc-counts-changelog"
SUBS = (SubTopologyDescription(0, ("in",), ("counts",), (CHANGELOG,), (), None, ("out",)),)
ABORT = "kafka-transactions.sh --bootstrap-server k:9092 abort --topic out --partition 3 "


@dataclass
class Watched(Sim):
    """A Sim whose shell also reads (LSO, high watermark) of some partitions each step."""

    ends: dict[Partition, tuple[int, int]] | None = None
    started: float | None = None
    stalls: dict[Partition, Stall] = field(default_factory=dict)

    def world(self) -> World:
        base = super().world()
        if self.ends is None:
            return base
        if self.started is None:
            self.started = self.now
        self.stalls = watch(self.stalls, self.ends, self.now)
        return replace(base, stalls=self.stalls, watched_since=self.started, bootstrap="k:9092")

    def restart(self) -> None:
        """A new operator process: the watch begins again; the status stays."""
        self.started, self.stalls = None, {}


def ended(sim: Sim) -> tuple[str, str, str]:
    c = sim.plans[-1].assessment.condition("TransactionsEnded")
    return c.status, c.reason, c.message


def said(sim: Sim) -> list[tuple[str, str]]:
    return [(e.type, e.reason) for p in sim.plans for e in p.events if "Transaction" in e.reason]


def settled() -> Watched:
    sim = Watched(replicas=2, subtopologies=SUBS, partitions={"in": 6, CHANGELOG: 6, "out": 6})
    sim.run()
    sim.ends = {("out", p): (100, 100) for p in range(6)}
    sim.step()
    return sim


def test_not_read_yet_is_unknown_then_true_when_nothing_is_held() -> None:
    sim = Watched(replicas=2, subtopologies=SUBS)
    sim.run()
    assert ended(sim)[:2] == ("Unknown", "NotObserved")
    sim.ends = {("out", 0): (5, 5)}
    sim.step()
    assert ended(sim)[:2] == ("True", "NoneHanging")
    assert said(sim) == []


def test_a_live_transaction_is_never_called_held() -> None:
    sim = settled()
    for i in range(int(BOUND) * 3):  # below the high watermark at every look, moving
        sim.ends = {("out", 3): (100 + i, 110 + i)}
        sim.step()
    sim.ends = {("out", 3): (500, 510)}  # unmoved, but for less than the bound
    for _ in range(int(BOUND) - 1):
        sim.step()
    assert ended(sim)[:2] == ("True", "NoneHanging")
    assert said(sim) == []


def test_a_held_sink_is_named_with_its_offset_and_commands_once_then_cleared() -> None:
    sim = settled()
    sim.ends = {("out", 3): (42, 50), ("out", 1): (7, 7)}
    for _ in range(int(BOUND)):
        sim.step()
    assert ended(sim)[0] == "True"  # not yet: a live transaction could still be open
    sim.ends = {("out", 3): (42, 900)}  # records go on arriving behind it
    for _ in range(3):
        sim.step()
    status, reason, message = ended(sim)
    assert (status, reason) == ("False", "TransactionHanging")
    assert "1 partition(s) held" in message
    assert "sink out[3] at offset 42" in message
    find = "kafka-transactions.sh --bootstrap-server k:9092 find-hanging --topic out --partition 3"
    assert f"`{find}`" in message
    assert f"`{ABORT}--start-offset 42`" in message
    assert said(sim) == [("Warning", "TransactionHanging")]  # once, not every look
    warning = next(e for p in sim.plans for e in p.events if e.reason == "TransactionHanging")
    assert warning.message == message
    assessment = sim.plans[-1].assessment  # the app itself is not broken: said apart
    assert assessment.phase == "Running"
    assert assessment.condition("Degraded").status == "False"
    assert assessment.condition("Balanced").status == "True"
    sim.ends = {("out", 3): (900, 900)}  # aborted: the LSO reaches the high watermark
    sim.step()
    assert ended(sim)[:2] == ("True", "NoneHanging")
    assert said(sim) == [("Warning", "TransactionHanging"), ("Normal", "TransactionEnded")]
    sim.step()
    assert len(said(sim)) == 2


def test_a_held_changelog_names_its_task_and_another_held_one_is_said_again() -> None:
    sim = settled()
    sim.ends = {(CHANGELOG, 2): (10, 11)}
    for _ in range(int(BOUND) + 2):
        sim.step()
    status, reason, message = ended(sim)
    assert (status, reason) == ("False", "TransactionHanging")
    assert f"changelog {CHANGELOG}[2] (task 0_2) at offset 10" in message
    sim.ends = {(CHANGELOG, 2): (10, 11), ("out", 3): (42, 50)}
    for _ in range(int(BOUND) + 2):
        sim.step()
    assert "2 partition(s) held" in ended(sim)[2]
    assert said(sim) == [("Warning", "TransactionHanging")] * 2


def test_a_restarted_operator_neither_clears_nor_repeats_what_is_still_held() -> None:
    sim = settled()
    sim.ends = {("out", 3): (42, 50)}
    for _ in range(int(BOUND) + 2):
        sim.step()
    held = ended(sim)
    assert held[0] == "False"
    sim.restart()
    for _ in range(int(BOUND) + 3):  # it cannot tell yet, then it can: the same words
        sim.step()
        assert ended(sim) == held
    assert said(sim) == [("Warning", "TransactionHanging")]


def test_a_restarted_operator_clears_at_once_what_was_ended_meanwhile() -> None:
    sim = settled()
    sim.ends = {("out", 3): (42, 50)}
    for _ in range(int(BOUND) + 2):
        sim.step()
    sim.restart()
    sim.ends = {("out", 3): (60, 60), ("out", 4): (70, 80)}  # ended; another one live
    sim.step()
    sim.ends = {("out", 3): (60, 60), ("out", 4): (75, 80)}
    sim.step()
    assert ended(sim)[:2] == ("True", "NoneHanging")
    assert said(sim) == [("Warning", "TransactionHanging"), ("Normal", "TransactionEnded")]


def test_watch_keeps_the_time_an_offset_stood_and_drops_a_caught_up_one() -> None:
    first = watch({}, {("t", 0): (5, 9), ("t", 1): (3, 3)}, 10.0)
    assert first == {("t", 0): Stall(5, 10.0)}
    assert watch(first, {("t", 0): (5, 12)}, 20.0) == {("t", 0): Stall(5, 10.0)}
    assert watch(first, {("t", 0): (6, 12)}, 20.0) == {("t", 0): Stall(6, 20.0)}
    assert watch(first, {("t", 0): (12, 12)}, 20.0) == {}
