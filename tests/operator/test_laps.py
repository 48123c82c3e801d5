"""A reconcile step's laps (``segue.operator.laps``): where an answer's time went."""

from __future__ import annotations

from segue.operator.laps import Laps


def test_each_lap_is_the_time_since_the_one_before_and_the_total_their_sum() -> None:
    ticks = iter([10.0, 10.25, 11.0, 11.0])
    laps = Laps(clock=lambda: next(ticks))
    laps.lap("pages")
    laps.lap("offsets")
    laps.lap("act")
    assert laps.parts == [("pages", 0.25), ("offsets", 0.75), ("act", 0.0)]
    assert laps.total == 1.0
    assert str(laps) == "pages 0.25s, offsets 0.75s, act 0.00s"


def test_no_lap_yet_says_nothing_and_took_no_time() -> None:
    laps = Laps(clock=lambda: 5.0)
    assert (str(laps), laps.total) == ("", 0.0)
