"""``handlers.Wakeups``: a watch event cuts a running loop's wait short, and leaves
nothing behind for an app without a loop (one not started yet, or deleted while its pods'
last events still arrive). Pure asyncio: no Kubernetes."""

from __future__ import annotations

import asyncio

from segue.operator.handlers import Wakeups, woken


def test_a_wake_cuts_a_loops_wait_and_an_app_without_a_loop_gets_no_entry() -> None:
    async def scenario() -> tuple[bool, bool, int]:
        wakeups = Wakeups()
        event = wakeups.get("team", "wc")
        waiting = asyncio.ensure_future(woken(event, 30))
        await asyncio.sleep(0)
        wakeups.wake("team", "wc")
        cut = await asyncio.wait_for(waiting, 5)
        slept = await woken(event, 0.01)  # cleared after the wake: a plain sleep
        wakeups.forget("team", "wc")
        wakeups.wake("team", "wc")  # a deleted app's pod event
        wakeups.wake("team", "gone")
        wakeups.wake(None, "wc")
        return cut, slept, len(wakeups._events)

    cut, slept, entries = asyncio.run(scenario())
    assert cut is True
    assert slept is False
    assert entries == 0
