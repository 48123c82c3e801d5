"""One container of one pod: its process, log files, restarts, probes and kill.

The container runtime's part. ``supervisor`` decides *when* to start, restart
or stop a container; this class does it and keeps the state the kubelet reports
(``status.container_status``): the current and last state, the restart count,
``ready`` and ``started``. A process runs in its own session (process group),
so a stop reaches its children too; its stdout and stderr go to
``<pod dir>/logs/<container>/<restart count>.log``, as the kubelet lays out
``/var/log/pods``.

Stopping is non-blocking: :meth:`Container.terminate` runs the preStop hook,
sends SIGTERM and, at the deadline, SIGKILL on a thread of its own, so the
supervisor keeps reporting status while a container shuts down.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from segue.stack.kubelet import status as st
from segue.stack.kubelet.podspec import is_sidecar
from segue.stack.kubelet.probes import ProbeTarget, ProbeWorker, run_action

Obj = dict[str, Any]
log = logging.getLogger(__name__)


class Container:
    def __init__(self, spec: Obj, *, init: bool, logs: Path, waiting_reason: str) -> None:
        self.spec = spec
        self.name: str = spec["name"]
        self.init = init
        self.sidecar = init and is_sidecar(spec)
        self.logs = logs / self.name
        self.proc: subprocess.Popen[bytes] | None = None
        self.state: Obj = st.waiting(waiting_reason)
        self.last_state: Obj = {}
        self.starts = 0
        self.failures = 0  # consecutive unsuccessful runs, for the restart back-off
        self.next_start: float | None = None  # monotonic time a (re)start may happen
        self.restart_forced = False  # killed by a failed liveness/startup probe
        self.container_id: str | None = None
        self.target: ProbeTarget | None = None
        self.hook_failure: str | None = None  # a failed postStart hook, for an event
        self._post_start_pending = False
        self._started_mono = 0.0
        self._probes: dict[str, ProbeWorker] = {}
        self._lock = threading.Lock()
        self._killer: threading.Thread | None = None
        self._kill_deadline = 0.0

    # -- state -----------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def never_started(self) -> bool:
        return self.starts == 0 and "terminated" not in self.state

    @property
    def exit_code(self) -> int | None:
        terminated = self.state.get("terminated") or self.last_state.get("terminated")
        return None if terminated is None else int(terminated["exitCode"])

    @property
    def succeeded(self) -> bool:
        return "terminated" in self.state and self.state["terminated"]["exitCode"] == 0

    @property
    def terminating(self) -> bool:
        return self._killer is not None

    @property
    def post_start_pending(self) -> bool:
        return self._post_start_pending and self.alive

    @property
    def started(self) -> bool:
        if not self.alive or self._post_start_pending:
            return False
        startup = self._probes.get("startup")
        return startup is None or startup.result is True

    @property
    def ready(self) -> bool:
        if not self.started or self.terminating:
            return False
        readiness = self._probes.get("readiness")
        return readiness is None or readiness.result is True

    def probe_failure(self) -> str | None:
        """ "liveness" or "startup" when that probe has declared the container failed."""
        for kind in ("startup", "liveness"):
            worker = self._probes.get(kind)
            if worker is not None and worker.result is False:
                return kind
        return None

    def status(self) -> Obj:
        return st.container_status(
            self.spec,
            self.state,
            last_state=self.last_state,
            restart_count=max(self.starts - 1, 0),
            ready=self.ready,
            started=self.started,
            container_id=self.container_id if "waiting" not in self.state else None,
        )

    def set_waiting(self, reason: str, message: str | None = None) -> None:
        if "terminated" in self.state:
            self.last_state = self.state
        self.state = st.waiting(reason, message)

    # -- lifecycle -------------------------------------------------------

    def start(
        self,
        argv: list[str],
        env: dict[str, str],
        cwd: Path,
        target: ProbeTarget,
        *,
        on_probe_failure: Callable[[str, str], None],
        grace: float = 30.0,
    ) -> None:
        """Start a new process (a restart if one ran before); then its postStart
        hook, on a thread (a failure kills the process, ``grace`` as for a
        deletion). OSError: the process could not start."""
        if "terminated" in self.state:
            self.last_state = self.state
        instance = max(self.starts, 0)
        self.starts += 1
        self.next_start = None
        self.restart_forced = False
        self.target = target
        self._killer = None
        self.logs.mkdir(parents=True, exist_ok=True)
        started_at = st.timestamp()
        try:
            with open(self.logs / f"{instance}.log", "ab") as out:
                self.proc = subprocess.Popen(
                    argv,
                    env=env,
                    cwd=cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
        except OSError as exc:
            self.proc = None
            self.container_id = None
            self.state = st.terminated(
                128, started_at, st.timestamp(), reason="StartError", message=str(exc)
            )
            raise
        self.container_id = f"segue://{self.proc.pid}"
        self._started_mono = time.monotonic()
        self.state = st.running(started_at)
        handler = (self.spec.get("lifecycle") or {}).get("postStart")
        if handler:
            self._post_start_pending = True
            threading.Thread(
                target=self._post_start,
                args=(handler, grace),
                name=f"post-start-{self.name}",
                daemon=True,
            ).start()
        for kind in ("startup", "readiness", "liveness"):
            probe = self.spec.get(f"{kind}Probe")
            if probe:
                gate = (lambda: True) if kind == "startup" else (lambda: self.started)
                worker = ProbeWorker(
                    kind,
                    probe,
                    target,
                    started_at=self._started_mono,
                    on_failure=on_probe_failure,
                    gate=gate,
                )
                self._probes[kind] = worker
                worker.start()

    def _post_start(self, handler: Obj, grace: float) -> None:
        assert self.target is not None
        ok, message = run_action(handler, self.target, timeout=max(grace, 1.0))
        if not ok and self.alive:
            self.hook_failure = message
            self.terminate(grace, pre_stop=False)
        self._post_start_pending = False

    def poll(self, reset_after: float) -> bool:
        """Notice the process's exit; True if it exited just now. A run longer than
        ``reset_after`` seconds clears the back-off count, as the kubelet's does."""
        proc = self.proc
        if proc is None or proc.poll() is None or "running" not in self.state:
            return False
        code = st.exit_code_of(int(proc.returncode))
        self.state = st.terminated(
            code,
            self.state["running"]["startedAt"],
            st.timestamp(),
            container_id=self.container_id,
        )
        ran = time.monotonic() - self._started_mono
        self.failures = 1 if ran > reset_after else self.failures + 1
        self._stop_probes()
        # The container is gone, so is everything it started in its process group.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        return True

    def backoff_delay(self, base: float, cap: float) -> float:
        """Delay before the next restart: none for the first, then base, 2*base... to cap."""
        if self.failures <= 1:
            return 0.0
        return float(min(cap, base * 2 ** (self.failures - 2)))

    def terminate(self, grace: float, *, pre_stop: bool = True) -> None:
        """The preStop hook, SIGTERM, and SIGKILL after ``grace`` seconds (the hook's
        time included); returns at once. Called again, it can only bring the
        deadline forward."""
        deadline = time.monotonic() + max(grace, 0.0)
        with self._lock:
            if self._killer is not None:
                self._kill_deadline = min(self._kill_deadline, deadline)
                return
            if not self.alive:
                return
            self._kill_deadline = deadline
            self._killer = threading.Thread(
                target=self._kill_sequence, args=(pre_stop,), name=f"kill-{self.name}", daemon=True
            )
            self._killer.start()

    def _kill_sequence(self, pre_stop: bool) -> None:
        proc = self.proc
        if proc is None:
            return
        handler = (self.spec.get("lifecycle") or {}).get("preStop")
        if pre_stop and handler and self.target is not None:
            remaining = self._kill_deadline - time.monotonic()
            ok, message = run_action(handler, self.target, max(remaining, 0.1))
            if not ok:
                log.warning("preStop hook of %s failed: %s", self.name, message)
        self._signal(proc, signal.SIGTERM)
        while proc.poll() is None and time.monotonic() < self._kill_deadline:
            time.sleep(0.05)
        if proc.poll() is None:
            self._signal(proc, signal.SIGKILL)

    def kill(self) -> None:
        """SIGKILL now (a force-deleted pod) and reap."""
        proc = self.proc
        if proc is not None and proc.poll() is None:
            self._signal(proc, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
        self._stop_probes()

    @staticmethod
    def _signal(proc: subprocess.Popen[bytes], sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)

    def _stop_probes(self) -> None:
        for worker in self._probes.values():
            worker.stop()
        self._probes.clear()
