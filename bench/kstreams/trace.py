"""Where a handover's pause goes: each moved counting task's steps, one timeline.

The workers log every step of a handover (``segue.worker.trace``: the old owner's final
commit and letting go; the new owner's fence, offsets, tail restore, first record and
first commit), each ``applying generation N`` they see, and the operator logs when it
published each generation. Read back together with when the task's output stopped and
came back (the downstream reader's clock: one machine, one clock) and each pod's CPU
(``cpu``), they say what the pause waited on. Pure but for reading files.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from segue.worker.trace import PATTERN

from .cpu import Usage
from .moves import Move

WORKER_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \w+ [\w.]+: (.*)$")
OPERATOR_LINE = re.compile(
    r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] .*?: GenerationPublished: generation (\d+):"
)
APPLYING = re.compile(r"applying generation (\d+):")
RESTORED = re.compile(r"restored task=(\S+) store=\S+ from=(\d+) to=(\d+) records=(\d+)")

# The steps in the order a handover takes them: (who, step).
STEPS = (
    ("operator", "published"),
    ("old", "seen"),
    ("old", "released"),
    ("old", "left"),
    ("new", "seen"),
    ("new", "fenced"),
    ("new", "measured"),
    ("new", "restored"),
    ("new", "running"),
    ("new", "first-record"),
    ("new", "first-commit"),
    ("reader", "visible"),
)


def _time(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()


@dataclass
class PodLog:
    """One pod's generations seen and each task's handover steps, as Unix times."""

    seen: dict[int, float] = field(default_factory=dict)
    steps: dict[str, list[tuple[float, str, str]]] = field(default_factory=dict)

    def step_after(self, task: str, step: str, since: float) -> tuple[float, str] | None:
        for when, name, detail in self.steps.get(task, []):
            if name == step and when >= since - 0.001:
                return when, detail
        return None


def parse_worker(text: str) -> PodLog:
    out = PodLog()
    for line in text.splitlines():
        m = WORKER_LINE.match(line)
        if m is None:
            continue
        when, message = _time(m.group(1)), m.group(2)
        if (g := APPLYING.match(message)) is not None:
            out.seen.setdefault(int(g.group(1)), when)
        elif (h := PATTERN.match(message)) is not None:
            out.steps.setdefault(h["task"], []).append((when, h["phase"], h["detail"] or ""))
        elif (r := RESTORED.match(message)) is not None:
            out.steps.setdefault(r.group(1), []).append((when, "restored", f"records={r.group(4)}"))
    return out


def parse_operator(text: str) -> dict[int, float]:
    """Generation -> when the operator published it."""
    out: dict[int, float] = {}
    for line in text.splitlines():
        m = OPERATOR_LINE.match(line)
        if m is not None:
            out.setdefault(int(m.group(2)), _time(m.group(1)))
    return out


@dataclass(frozen=True)
class Traced:
    """One handover: its move, its pause, each step's time from the pause's start."""

    move: Move
    generation: int
    pause: tuple[float, float]  # the task's last output before, its first after (Unix s)
    steps: dict[str, float]  # step -> seconds after the pause began
    details: dict[str, str]
    cpu: dict[str, float]  # pod (and "machine") -> cores used during the pause

    @property
    def length(self) -> float:
        return self.pause[1] - self.pause[0]


def trace(
    move: Move,
    generation: int,
    *,
    published: Mapping[int, float],
    pods: Mapping[str, PodLog],
    visible: Sequence[float],
    usage: Usage,
) -> Traced | None:
    """``move`` (made by ``generation``), given the task's output visible times, sorted."""
    t_pub = published.get(generation, move.time)
    old, new = pods.get(move.source, PodLog()), pods.get(move.target, PodLog())
    times: dict[str, float] = {"operator published": t_pub}
    details: dict[str, str] = {}
    if generation in old.seen:
        times["old seen"] = old.seen[generation]
    if generation in new.seen:
        times["new seen"] = new.seen[generation]
    for who, pod in (("old", old), ("new", new)):
        for w, step in STEPS:
            if w != who or step == "seen":
                continue
            found = pod.step_after(move.task, step, t_pub)
            if found is not None:
                times[f"{who} {step}"], details[f"{who} {step}"] = found
    back = times.get("new first-commit")
    if back is None:
        return None
    after = [v for v in visible if v >= back - 0.05]
    before = [v for v in visible if v < back - 0.05]
    if not after or not before:
        return None
    start, end = before[-1], after[0]
    times["reader visible"] = end
    steps = {k: v - start for k, v in times.items()}
    return Traced(move, generation, (start, end), steps, details, usage.cores(start, end))


def table(traced: Sequence[Traced]) -> str:
    """A markdown table: one column per handover, one row per step (s from the pause's
    start), then each pod's CPU during the pause, then the median column."""
    if not traced:
        return "no handover traced"
    names = [f"{t.move.task} {t.move.source}->{t.move.target}" for t in traced]
    lines = [
        "| step | " + " | ".join(names) + " | median |",
        "|---" * (len(names) + 2) + "|",
    ]
    for who, step in STEPS:
        key = f"{who} {step}"
        vals = [t.steps.get(key) for t in traced]
        known = [v for v in vals if v is not None]
        cells = ["-" if v is None else f"{v:+.2f}" for v in vals]
        median = f"{statistics.median(known):+.2f}" if known else "-"
        lines.append(f"| {key} | " + " | ".join(cells) + f" | {median} |")
    pods = sorted({p for t in traced for p in t.cpu})
    for pod in pods:
        vals = [t.cpu.get(pod) for t in traced]
        known = [v for v in vals if v is not None]
        cells = ["-" if v is None else f"{v:.2f}" for v in vals]
        median = f"{statistics.median(known):.2f}" if known else "-"
        lines.append(f"| CPU cores, {pod} | " + " | ".join(cells) + f" | {median} |")
    return "\n".join(lines)
