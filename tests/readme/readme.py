"""README.md's code blocks, read as a user reads them, and a terminal to type them into.

:func:`block` finds a block by the section it stands in, so a test runs the README's own
lines (never a copy that could drift from it); :data:`RUN_BY` says which test runs each
block, and ``test_every_block_is_run`` fails when a block appears that no test runs.
:class:`Terminal` is an interactive bash in a real pseudo-terminal (pexpect): a line is
typed, Ctrl-C is a real Ctrl-C to the foreground job, and what is printed is what a
user would see.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

import pexpect

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
VENV_BIN = Path(sys.executable).parent
# section -> the test module that runs each of its blocks' lines ("" for none: said why)
RUN_BY: dict[str, tuple[str, ...]] = {
    "Two commands": ("test_make_demo",),  # `make test` is the one that runs all this
    "Running the operator": ("test_running_the_operator",) * 3,
}


def blocks() -> dict[str, list[list[str]]]:
    """section -> its code blocks, each a list of command lines (comments kept, as a
    user pastes them; blank and comment-only lines left out)."""
    found: dict[str, list[list[str]]] = {}
    section, current = "", None
    for line in README.read_text().splitlines():
        if current is None and line.startswith("## "):
            section = line[3:].strip()
        elif line.startswith("```"):
            if current is None:
                current = []
            else:
                found.setdefault(section, []).append(current)
                current = None
        elif current is not None and line.strip() and not line.lstrip().startswith("#"):
            current.append(line.strip())
    return found


def block(section: str, index: int = 0) -> list[str]:
    return blocks()[section][index]


def user_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A newcomer's environment: this machine's, with a home of its own (so kubectl's
    config is the test's), no virtualenv on the PATH, nothing of make's or pytest's."""
    from segue.stack.paths import cache_dir

    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MAKE", "MFLAGS", "PYTEST", "KUBECONFIG", "VIRTUAL_ENV"))
    }
    path = [p for p in env.get("PATH", os.defpath).split(os.pathsep) if Path(p) != VENV_BIN]
    env.update(
        PATH=os.pathsep.join(path),
        HOME=str(home),
        SEGUE_CACHE=str(cache_dir()),  # the cache make built (it defaults under HOME)
        TERM="xterm",
        PS1=Terminal.PROMPT,
        **(extra or {}),
    )
    return env


class Terminal:
    """An interactive bash in a pseudo-terminal at the repository's root."""

    PROMPT = "readme-test$ "

    def __init__(self, env: Mapping[str, str], log: Path) -> None:
        self.log = log.open("a", encoding="utf-8")
        self.bash = pexpect.spawn(
            "bash",
            ["--norc", "--noprofile", "-i"],
            cwd=str(ROOT),
            env=dict(env),
            encoding="utf-8",
            codec_errors="replace",
            dimensions=(50, 220),
            timeout=60,
        )
        self.bash.logfile_read = self.log
        self.bash.expect_exact(self.PROMPT)
        self.busy = False  # a job runs in the foreground (start() without interrupt())

    def run(self, line: str, timeout: float = 180) -> str:
        """Type ``line``, wait for the prompt, fail unless it exited 0; its output."""
        self.bash.sendline(line)
        self.bash.expect_exact(self.PROMPT, timeout=timeout)
        out = str(self.bash.before)
        self.bash.sendline("echo exit=$?")
        self.bash.expect(r"exit=(\d+)\r?\n")
        code = int(self.bash.match.group(1))
        self.bash.expect_exact(self.PROMPT)
        assert code == 0, f"`{line}` exited {code}:\n{out[-4000:]}"
        return out

    def start(self, line: str) -> None:
        """Type ``line`` and leave it running in the foreground."""
        self.bash.sendline(line)
        self.busy = True

    def expect(self, pattern: str, timeout: float) -> re.Match[str]:
        """Wait for ``pattern`` (a regular expression) in what the foreground job prints."""
        self.bash.expect(pattern, timeout=timeout)
        match: re.Match[str] = self.bash.match
        return match

    def interrupt(self, timeout: float = 60) -> str:
        """Ctrl-C, then wait for the prompt; what was printed meanwhile."""
        self.bash.sendcontrol("c")
        self.bash.expect_exact(self.PROMPT, timeout=timeout)
        self.busy = False
        return str(self.bash.before)

    def close(self) -> None:
        """Ctrl-C to a job still running (a failed test's stack stops cleanly), then
        the terminal goes."""
        try:
            if self.busy and self.bash.isalive():
                self.interrupt(timeout=120)
        finally:
            self.bash.close(force=True)
            self.log.close()


def leftovers(workdir: Path) -> list[str]:
    """Processes whose command line or environment names ``workdir``: what a stack that
    stopped cleanly leaves running (nothing)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            seen = (proc / "cmdline").read_bytes() + (proc / "environ").read_bytes()
        except OSError:
            continue
        if str(workdir).encode() in seen:
            found.append(f"{proc.name}: {(proc / 'cmdline').read_bytes()[:200]!r}")
    return found
