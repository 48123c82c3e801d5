"""``segue status --watch`` on Ctrl-C (``segue.operator.status.interrupts``): a read in
flight finishes and is not printed, a pause is cut short, a second Ctrl-C interrupts at
once, and SIGINT's handler is given back. The signal is real (this process's own)."""

from __future__ import annotations

import os
import signal
import threading
import time

from segue.operator.status.interrupts import INTERRUPTED, watch


def ctrl_c() -> None:
    os.kill(os.getpid(), signal.SIGINT)


def test_a_ctrl_c_during_a_read_lets_it_finish_and_prints_nothing_more() -> None:
    printed: list[str] = []
    finished: list[int] = []

    def once() -> str:
        n = len(finished)
        if n == 2:
            ctrl_c()  # mid-read: the handler runs here, and must not raise
            time.sleep(0.05)
        finished.append(n)
        return f"read {n}\n"

    before = signal.getsignal(signal.SIGINT)
    assert watch(once, 0.0, printed.append) == INTERRUPTED
    assert finished == [0, 1, 2]
    assert printed == ["read 0\n", "read 1\n"]
    assert signal.getsignal(signal.SIGINT) is before


def test_a_ctrl_c_during_the_pause_stops_at_once() -> None:
    printed: list[str] = []
    threading.Timer(0.3, ctrl_c).start()
    began = time.monotonic()
    assert watch(lambda: "screen\n", 30.0, printed.append) == INTERRUPTED
    assert time.monotonic() - began < 5
    assert printed == ["screen\n"]


def test_a_second_ctrl_c_interrupts_a_read_at_once() -> None:
    got_through: list[bool] = []

    def once() -> str:
        ctrl_c()
        ctrl_c()  # the second raises here
        got_through.append(True)
        return "never\n"

    printed: list[str] = []
    assert watch(once, 0.0, printed.append) == INTERRUPTED
    assert (got_through, printed) == ([], [])
