"""Whether this worker still owns a task: its assignment read afresh before a retry fences.

A task's retry starts a producer with the task's transactional id, and that fences
whoever holds the id now. After a failed commit a worker cannot always tell that a
newer owner fenced it: in the cut-off fault test Kafka answered the old owner's
``EndTxn`` with "Unknown broker error", not ``PRODUCER_FENCED``; the retry fenced the
new owner back and took the task from it. So ``recovery`` lets an active task's retry
fence only once the assignment has been read from the API server after the failure
and nothing newer than the generation applied waits to be applied (``runtime``
applies what the read found first; a generation that moved the task away stops it
instead). A worker cut off from the API server cannot know that: its task waits,
and says so, until the read answers.

The read is one list of the assignment ConfigMap (``watch.AssignmentWatcher.read``,
what the watch itself does: no new permission), on a thread of its own, so the main
loop never waits on the API server.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

Read = Callable[[], "int | None"]  # one read, delivering what it found: the generation read
Applied = Callable[[], "int | None"]  # the generation the worker has applied


class Freshness:
    def __init__(self, read: Read, applied: Applied) -> None:
        self._read = read
        self._applied = applied
        self._lock = threading.Lock()
        self._began = -math.inf  # when the last read that answered began
        self._generation: int | None = None
        self._thread: threading.Thread | None = None
        self.last_error = ""  # why the last read failed ("" if it answered)

    def since(self, moment: float) -> bool:
        """True if a read that began after ``moment`` answered and the worker has
        applied what it found; else start one (if none is under way) and say False."""
        with self._lock:
            began, generation = self._began, self._generation
        if began > moment:
            applied = self._applied()
            if generation is not None and applied is not None and generation <= applied:
                return True
        self._start()
        return False

    def _start(self) -> None:
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._thread = threading.Thread(target=self._run, name="segue-fresh", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        began = time.monotonic()
        try:
            generation = self._read()
        except Exception as exc:  # any failure only means: not known to be fresh yet
            self.last_error = str(exc) or type(exc).__name__
            log.info("reading the assignment afresh failed: %s", self.last_error)
            return
        with self._lock:
            self._began, self._generation = began, generation
        self.last_error = ""
