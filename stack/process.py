"""One supervised child process of the local stack.

Every component (Kafka, etcd, the apiserver, the controller-manager) is a
:class:`ManagedProcess`: started with its output in a log file, polled until a
readiness check passes, and stopped with SIGTERM then SIGKILL. A component that
fails to start raises :class:`StackError` with the tail of its log, so a broken
run says why instead of hanging.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path


class StackError(RuntimeError):
    """A component of the local stack could not be installed, started or reached."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free now; the caller binds it soon after."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


def port_open(host: str, port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
        return True
    return False


class ManagedProcess:
    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log_path: Path,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                self.argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env,
                cwd=self.cwd,
                start_new_session=True,  # Ctrl-C in `make demo` reaches us, not it
            )

    def wait_ready(self, check: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise StackError(
                    f"{self.name} exited with code {self.proc.returncode} before {what}; "
                    f"log {self.log_path}:\n{self.log_tail()}"
                )
            with contextlib.suppress(Exception):
                if check():
                    return
            time.sleep(0.2)
        raise StackError(
            f"{self.name} did not reach '{what}' within {timeout:.0f}s; "
            f"log {self.log_path}:\n{self.log_tail()}"
        )

    def stop(self, grace: float = 10.0) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    def kill(self) -> None:
        """SIGKILL at once: a crash, with no shutdown of its own."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"
