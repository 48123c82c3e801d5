"""The timed scales of the fleet benchmark (:mod:`.run`): scales sent through the
``/scale`` subresource at a fixed pace on settled apps, each timed from the request to
the watch event of the app's next published generation (:mod:`.observe`), and their
percentiles (:mod:`.stats`)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.fleet.observe import FleetView
from bench.fleet.stats import percentile
from segue.operator.api import GROUP, PLURAL, VERSION


@dataclass
class Sample:
    app: str
    direction: str  # "up" 4 -> 5, "down" 5 -> 4
    seconds: float | None  # None: no generation within the timeout


def scale(custom: Any, namespace: str, app: str, replicas: int) -> None:
    """What ``kubectl scale`` sends: a patch of the ``/scale`` subresource."""
    custom.patch_namespaced_custom_object_scale(
        GROUP, VERSION, namespace, PLURAL, app, {"spec": {"replicas": replicas}}
    )


def scale_trials(
    view: FleetView,
    custom: Any,
    namespace: str,
    apps: list[str],
    *,
    pods: int,
    samples: int,
    every: float,
    timeout: float,
    say: Callable[[str], None],
) -> list[Sample]:
    """``samples`` scales, one every ``every`` s, each timed in its own thread (up to
    ``timeout`` s): an app of ``pods`` pods goes to ``pods + 1``, one of ``pods + 1`` back;
    ``say`` gets a line every 25 sent."""
    results: list[Sample] = []
    busy: set[str] = set()
    lock = threading.Lock()
    rng = random.Random(27)

    def one(app: str) -> None:
        replicas = view.replicas.get(app, pods)
        target, direction = (pods + 1, "up") if replicas == pods else (pods, "down")
        before = view.generation(app)
        started = time.time()
        scale(custom, namespace, app, target)
        seen = view.wait_generation(app, before, timeout)
        sample = Sample(app, direction, seen.seen - started if seen else None)
        # settled again before it can be picked: a new generation and Balanced
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if view.replicas.get(app) == target and view.balanced(app):
                break
            time.sleep(0.2)
        with lock:
            results.append(sample)
            busy.discard(app)

    threads = []
    for n in range(samples):
        with lock:
            idle = [a for a in apps if a not in busy and view.balanced(a)]
        while not idle:
            time.sleep(0.1)
            with lock:
                idle = [a for a in apps if a not in busy and view.balanced(a)]
        app = rng.choice(idle)
        with lock:
            busy.add(app)
        thread = threading.Thread(target=one, args=(app,), daemon=True)
        thread.start()
        threads.append(thread)
        if (n + 1) % 25 == 0:
            say(f"  {n + 1}/{samples} scales sent")
        time.sleep(every)
    for thread in threads:
        thread.join(timeout + 5)
    return results


def summary(samples: list[Sample]) -> dict[str, Any]:
    times = [s.seconds if s.seconds is not None else float("inf") for s in samples]
    out: dict[str, Any] = {
        "samples": len(times),
        "timeouts": sum(s.seconds is None for s in samples),
        "p50": percentile(times, 50),
        "p99": percentile(times, 99),
        "max": max(times) if times else None,
    }
    for direction in ("up", "down"):
        some = [t for s, t in zip(samples, times, strict=True) if s.direction == direction]
        out[direction] = {"n": len(some), "p50": percentile(some, 50), "p99": percentile(some, 99)}
    return out
