"""The screen as text: a header, then tables like ``kubectl get`` prints them.

Plain text (no colour library): the image's runtime closure has none, and the same text
reads well in a terminal, a pipe, a CI log and docs/status.md. ``--watch`` redraws it in
place with two ANSI codes (:data:`CLEAR`).
"""

from __future__ import annotations

from collections.abc import Sequence

from .model import PodRow, Screen
from .progress import duration

CLEAR = "\x1b[H\x1b[2J"  # cursor home, clear the screen


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Left-aligned columns two spaces apart, the header in capitals."""
    cells = [[h.upper() for h in header], *[list(r) for r in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]


def number(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def render(s: Screen) -> str:
    head = f"{s.app}  namespace {s.namespace}  phase {s.phase or '-'}"
    head += f"  replicas {number(s.replicas)} ({s.pods_ready} ready)"
    head += f"  generation {number(s.generation)}"
    if s.replicas_needed is not None:
        head += f"  needs {s.replicas_needed:.1f} pods"
    lines = [head + f"  at {s.at}", f"operator waits for: {s.waiting_for}"]
    if s.conditions:
        lines.append("conditions: " + "  ".join(f"{c.type}={c.status}" for c in s.conditions))
    lines += ["", *_pods(s)]
    lines += ["", *_learners(s)]
    lines += ["", *_handovers(s)]
    if s.events:
        lines += ["", "RECENT EVENTS"]
        lines += [
            f"  {e.last or '-'}  {e.type} {e.reason} (x{e.count}): {e.message}" for e in s.events
        ]
    return "\n".join(lines) + "\n"


def _pods(s: Screen) -> list[str]:
    if not s.pods:
        return ["no pods"]
    rows = [
        [
            p.name + (" (deleting)" if p.deleting else ""),
            p.role,
            "yes" if p.ready else "no",
            str(p.active),
            str(p.standby),
            str(p.learning),
            number(p.max_lag),
            _read(p),
        ]
        for p in s.pods
    ]
    out = table(
        ["pod", "role", "ready", "active", "standby", "learning", "max lag", "metrics"], rows
    )
    out += [f"  {p.name}: {e}" for p in s.pods for e in p.errors]
    return out


def _read(p: PodRow) -> str:
    """The METRICS cell: read or why not; a page read whose counts are not its own (a
    Kafka Streams agent's) says where they come from."""
    if p.metrics_error is not None:
        return f"unread: {p.metrics_error}"
    if p.counts_from == "metrics":
        return "read"
    return "read; counts from status" if p.counts_from == "status" else "read; not in the status"


def _learners(s: Screen) -> list[str]:
    if not s.learners:
        return ["no learners"]
    rows = []
    for r in s.learners:
        done = "-"
        if r.restored is not None and r.end:
            done = f"{r.restored:,}/{r.end:,} ({100 * min(r.restored, r.end) // r.end}%)"
        rate = "-" if r.rate is None else f"{r.rate:,.0f}/s"
        rows.append(
            [r.member, r.task or "?", f"{r.lag:,}", done, rate, duration(r.eta_seconds), r.source]
        )
    return table(["learner", "task", "lag", "restored", "rate", "eta", "from"], rows)


def _handovers(s: Screen) -> list[str]:
    if not s.handovers:
        return ["no handovers in flight or recent"]
    rows = [[h.task, h.from_ or "-", h.to, h.state, h.at or "-"] for h in s.handovers]
    return table(["handover", "from", "to", "state", "at"], rows)
