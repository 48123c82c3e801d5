"""``kstreams.agents.AgentPages`` against real HTTP servers on localhost (an agent's page
is plain HTTP; no Kubernetes, no Kafka): a pod never read yet gets a short first timeout,
so a starting JVM cannot hold the look that answers its group; a pod read before gets
the full one, and its last page stands in when a read fails."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from segue.operator.kstreams.agents import FIRST_TIMEOUT, AgentPages
from segue.operator.observe.pods import PodState

PAGE = b'segue_kstreams_consumer_client{client_id="wc-a-StreamThread-1-consumer"} 1\n'


@contextmanager
def agent(delay: list[float]) -> Iterator[int]:
    """An agent page on 127.0.0.1 answering after ``delay[0]`` seconds; yields its port."""

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            time.sleep(delay[0])
            self.send_response(200)
            self.end_headers()
            self.wfile.write(PAGE)

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()


def pod(name: str) -> PodState:
    return PodState(name, "Running", "127.0.0.1", True, False, 0, f"uid-{name}", 0.0)


def test_a_pod_never_read_gets_a_short_first_timeout_and_one_read_before_the_full_one() -> None:
    delay = [1.5]  # a starting JVM: slower than the first timeout, within the full one
    with agent(delay) as port, ThreadPoolExecutor(2) as pool:
        pages = AgentPages(pool, timeout=3.0)
        started = time.monotonic()
        assert pages.read("team", port, {"wc-2": pod("wc-2")}, now=100.0) == {}
        assert time.monotonic() - started < FIRST_TIMEOUT + 0.8  # not the full 3 s
        delay[0] = 0.0
        first = pages.read("team", port, {"wc-2": pod("wc-2")}, now=101.0)
        assert first["wc-2"].consumers == ("wc-a-StreamThread-1-consumer",)
        delay[0] = 1.5  # read before: waited for, up to the full timeout
        started = time.monotonic()
        slow = pages.read("team", port, {"wc-2": pod("wc-2")}, now=102.0)
        assert time.monotonic() - started >= 1.4
        assert slow == first
        delay[0] = 4.0  # beyond the full timeout: the last good page stands in
        assert pages.read("team", port, {"wc-2": pod("wc-2")}, now=103.0) == first


def test_a_last_page_stands_in_only_for_the_process_that_runs_now() -> None:
    """A killed JVM's page named consumers that are gone: once its pod is not ready or its
    container restarted, the last page no longer stands in (it hid that the group waits
    for the killed member until its session ends)."""
    from dataclasses import replace

    delay = [0.0]
    with agent(delay) as port, ThreadPoolExecutor(2) as pool:
        pages = AgentPages(pool, timeout=0.5)
        first = pages.read("team", port, {"wc-2": pod("wc-2")}, now=100.0)
        assert first["wc-2"].consumers == ("wc-a-StreamThread-1-consumer",)
        delay[0] = 1.0  # the page fails from now on
        assert pages.read("team", port, {"wc-2": pod("wc-2")}, now=101.0) == first
        unready = replace(pod("wc-2"), ready=False)
        assert pages.read("team", port, {"wc-2": unready}, now=102.0) == {}
        restarted = replace(pod("wc-2"), restarts=1)
        assert pages.read("team", port, {"wc-2": restarted}, now=103.0) == {}
