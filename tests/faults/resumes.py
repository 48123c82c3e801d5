"""Where each task resumed its input, against where its earlier instances left it,
read from the workers' own log lines: the other half of what ``batches`` tells.

A worker says where an active task starts (``task … running (inputs …, from …)``, the
offsets committed under the app's group, read after its fence), where it ended
(``task …: input committed up to …``, what that instance's transactions committed)
and any record its consumer delivered twice (``… delivered again …``,
worker/active.py). A start below an offset an earlier instance had committed, logged
before it, means the committed offsets read were stale or lost: the records between
are counted twice by no fault of the processing itself."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

WHEN = re.compile(r"^(?P<when>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ")
START = re.compile(r"task (?P<task>\S+) running \(inputs .*, from (?P<at>.*)\)$")
END = re.compile(r"task (?P<task>\S+): input committed up to (?P<at>.*)$")
AGAIN = re.compile(r"task (?P<task>\S+): \S+ delivered again")
OFFSET = re.compile(r"(?P<tp>\S+\[\d+\])@(?P<offset>-?\d+)")


def resumes(logs: Iterable[tuple[str, str]]) -> list[str]:
    """``logs``: (pod, its log text). What went wrong, in time order: each start below
    a commit logged before it, and each redelivery a worker dropped."""
    events = []
    for pod, text in logs:
        for line in text.splitlines():
            when = WHEN.match(line)
            if when is None:
                continue
            for kind, pattern in (("start", START), ("end", END), ("again", AGAIN)):
                found = pattern.search(line)
                if found is not None:
                    events.append((when["when"], kind, pod, found, line))
                    break
    events.sort(key=lambda e: e[0])
    committed: dict[str, tuple[int, str]] = {}  # partition -> (offset, who said it)
    out = []
    for when, kind, pod, found, line in events:
        if kind == "again":
            out.append(f"{when} {pod}: {line[len(when) + 1 :]}")
            continue
        for part in OFFSET.finditer(found["at"]):
            tp, offset = part["tp"], int(part["offset"])
            before = committed.get(tp)
            if kind == "end":
                if before is None or offset > before[0]:
                    committed[tp] = (offset, f"{when} {pod} {found['task']}")
            elif before is not None and offset < before[0]:
                out.append(
                    f"{when} {pod} {found['task']} started {tp} at {offset}, below "
                    f"{before[0]} committed up to by {before[1]}"
                )
    return out


def resume_evidence(logs: Iterable[tuple[str, str]]) -> str:
    found = resumes(logs)
    if not found:
        return "workers' logs: every task resumed where the last one left it; no redelivery"
    return "workers' logs: " + "; ".join(found[:10])


def pod_logs(apps: Any, restarts: Mapping[str, int]) -> list[tuple[str, str]]:
    """(pod, log) of each of the app's pods (``restarts``: pod -> its restarts), a
    restarted one's earlier run too."""
    out = []
    for pod, count in sorted(restarts.items()):
        for previous in (True, False) if count else (False,):
            try:
                text = apps.core.read_namespaced_pod_log(pod, apps.namespace, previous=previous)
            except Exception as exc:  # evidence is best effort
                text = f"(no log: {exc})"
            out.append((pod, text))
    return out
