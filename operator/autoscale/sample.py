"""One observation of an app's input, and the window of them the rates are taken over.

A :class:`Sample` is what the reconcile step read at one instant: for every partition
of the app's *input* topics (the source topics it does not own; repartition topics are
internal work, not input) the log-end offset and the offset the app committed, and per
member the records it has processed from those inputs since its process started. The
imperative shell keeps a short history per app and hands it here; nothing in this
package reads a clock or a broker.

Why a window: one step is 0.3 s to 5 s apart, a worker commits every 100 ms and its
counters move in bursts, so a rate from two neighbouring samples is noise.
:func:`remember` keeps the samples of the last ``seconds`` (the app's
``spec.autoscaling.windowSeconds``, by default :data:`WINDOW_SECONDS`, 15 s: one HPA
sync period, several operator steps even when idle) plus the one just before, so the
window spans at least ``seconds`` once that much history exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

Partition = tuple[str, int]

WINDOW_SECONDS = 15  # spec.autoscaling.windowSeconds' default


@dataclass(frozen=True)
class Sample:
    """``committed`` is the app's committed offset of each input partition, or the
    partition's log-start offset where it never committed (``auto.offset.reset`` is
    ``earliest``, so that is where it will start)."""

    time: float  # seconds since the epoch, as observed
    log_end: Mapping[Partition, int]  # high watermark (read_uncommitted latest)
    committed: Mapping[Partition, int]
    processed: Mapping[str, int]  # member -> records processed from input, per process
    active: int  # members that run at least one input task as active
    tasks: int = 0  # input tasks: more active members than this add no input capacity

    @property
    def lag(self) -> int:
        """Records the app has yet to commit: the sum of log end minus committed, each
        clamped at 0 (a committed offset read a moment after the log end may pass it)."""
        return sum(max(0, end - self.committed.get(p, end)) for p, end in self.log_end.items())


@dataclass(frozen=True)
class Window:
    """The samples a rate is taken over, oldest first. ``regaining``: a look could not
    read Kafka since the last rate, and the window does not yet span ``seconds``."""

    samples: tuple[Sample, ...] = ()
    regaining: bool = False

    @property
    def span(self) -> float:
        return self.samples[-1].time - self.samples[0].time if self.samples else 0.0

    @property
    def ready(self) -> bool:
        """A rate may be taken: two samples, and after a gap a whole window. Across a
        broker's outage the input's producers stall, then reconnect and catch up; a
        rate over the first seconds after it measures that, not the input."""
        return len(self.samples) >= 2 and not self.regaining


def remember(window: Window, new: Sample | None, seconds: float = WINDOW_SECONDS) -> Window:
    """``window`` with ``new`` appended and what fell out of it dropped.

    Keeps the newest sample at or before ``new.time - seconds`` as the window's start,
    so the span is ``seconds`` once there is that much history. A sample not after the
    last one (a clock stepped back) starts a new history: no rate across it.

    ``new`` is ``None`` when a look could not read Kafka: the samples are dropped, so no
    rate spans the gap (paired with the last sample before an outage, the first after
    it read as a trickle of input: seen in CI, 0.108 members needed of 4 and an HPA
    scaling to 1), and the next rate waits for a whole window (:attr:`Window.ready`)."""
    if new is None:
        return Window((), regaining=True)
    history = window.samples
    if history and new.time <= history[-1].time:
        return Window((new,), window.regaining)
    kept = (*history, new)
    start = new.time - seconds
    while len(kept) > 2 and kept[1].time <= start:
        kept = kept[1:]
    return Window(kept, window.regaining and Window(kept).span < seconds)
