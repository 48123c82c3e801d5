"""Read a Kafka Streams app's pods' agent pages, in parallel, remembering the last good one.

A Segue worker that does not answer a scrape is simply not reporting. A Kafka Streams pod
is a member as long as the group has its client, which the group report says; its page is
needed to know *which* client is this pod (the consumers it names). So a page that fails
once (a slow JVM, a garbage collection) is stood in for by the pod's last good one for up
to ``STAND_IN`` seconds while the pod is ready and its container has not restarted, and
a pod that is away longer, whose process is gone, or whose process left the group, is
absent: its tasks go elsewhere at the next rebalance (``world.policy``).

A pod never read yet (a new JVM starting) gets ``FIRST_TIMEOUT``, not the full scrape
timeout: the look that answers a group report waits for every page, and the whole group
waits in its rebalance for that answer, so a starting JVM's slow first page held every
task of the group for its timeout (2.3 s seen in a 3 -> 6 scale). Unread, such a pod is
not reporting for that look; the next one reads it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from concurrent.futures import Executor
from typing import Final

from segue.operator.observe import PodState, ScrapeError
from segue.operator.observe.agent import AgentReport, scrape_agent

STAND_IN: Final = 30.0  # seconds a pod's last good page stands in for one that failed
FIRST_TIMEOUT: Final = 0.5  # seconds for the first page of a pod never read yet

log = logging.getLogger("segue.operator.observe")


class AgentPages:
    def __init__(self, pool: Executor, timeout: float) -> None:
        self._pool, self._timeout = pool, timeout
        # pod uid -> (read at, page, the pod's container restarts then)
        self._last: dict[str, tuple[float, AgentReport, int]] = {}

    def read(
        self, namespace: str, port: int, states: Mapping[str, PodState], now: float
    ) -> dict[str, AgentReport]:
        """pod name -> its page (or its recent last good one), for the running pods."""
        live = [s for s in states.values() if s.ip and s.phase == "Running" and not s.terminating]

        def one(state: PodState) -> tuple[PodState, AgentReport | None]:
            read = state.uid in self._last
            timeout = self._timeout if read else min(FIRST_TIMEOUT, self._timeout)
            try:
                return state, scrape_agent(state.ip or "", port, timeout)
            except ScrapeError as exc:
                log.debug("no agent page from %s/%s: %s", namespace, state.name, exc)
                return state, None

        out: dict[str, AgentReport] = {}
        for state, page in self._pool.map(one, live):
            if page is not None:
                self._last[state.uid] = (now, page, state.restarts)
                out[state.name] = page
            elif (last := self._last.get(state.uid)) is not None and _stands_in(last, state, now):
                out[state.name] = last[1]
        return out

    def forget(self, uids: set[str]) -> None:
        """Drop the pages of pods not among ``uids`` (gone)."""
        self._last = {u: v for u, v in self._last.items() if u in uids}


def _stands_in(last: tuple[float, AgentReport, int], state: PodState, now: float) -> bool:
    """Whether the pod's last good page stands in for the one that failed: recent, and
    from the process that runs now (the pod ready, its container not restarted since).
    A killed JVM's page named consumers that are gone; stood in for, they hid that the
    group waits for their member until its session ends."""
    read_at, _, restarts = last
    return now - read_at < STAND_IN and state.ready and state.restarts == restarts
