"""When a learner is expected within the acceptable lag, from the progress :mod:`.hold`
keeps: the learners a handover takes along (``hold._anticipated``) are chosen by it.

A learner's own rate (``Progress.rate``) is known once its lag has dropped. A Kafka Streams
instance restores its changelogs about one at a time (seen on WordCount 2 -> 3: a new
pod's two learners restored 40,000 records each, the second beginning when the first was
done, 0.5-1.3 s each), so its second learner had no rate while the first restored, and
missed the first's handover round by a second or two. So a learner without a rate of its
own, on a member restoring others that have one, is expected once those are done
restoring, at the slowest of their rates. Taken along with another's handover on that
estimate, such a learner restores what is left as an active, in the round's pause; twice
the handover lead bounds it (measured on the bench: one round instead of two in 7 of 9
runs, and the 40,000 records a copy taken along unbegun had left took its new owner
0.1-0.3 s to restore; but the new owner runs none of its new tasks until that is done,
and in one later run it took 1.0 s from the rebalance to running them, a 1.71 s pause:
docs/benchmarks.md, "Side by side on that build"). A Kafka Streams group's next
rebalance is not timed by it (``segue.operator.kstreams.answer`` says why). Pure, like
the rest of the scaling core.
"""

from __future__ import annotations

from collections.abc import Mapping

from .model import Progress


def expected(
    progress: Mapping[str, Progress], task: str, acceptable: int, now: float
) -> float | None:
    """Seconds from ``now`` until ``task``'s learner is within ``acceptable`` lag (0 once
    within); None with no rate to go by, its own or its member's."""
    mine = progress.get(task)
    if mine is None:
        return None
    own = mine.eta(acceptable, now)
    if own is not None:
        return own
    ahead = [
        (p, rate)
        for t, p in progress.items()
        if t != task and p.member == mine.member and (rate := p.rate()) is not None
    ]
    if not ahead:
        return None
    done = max(max(0.0, p.lag / rate - (now - p.since)) for p, rate in ahead)
    return done + max(0, mine.lag - acceptable) / min(rate for _, rate in ahead)
