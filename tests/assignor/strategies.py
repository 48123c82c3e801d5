"""Random but valid assignment requests, small enough for brute force."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

GONE = "gone-0"


@st.composite
def requests(
    draw: st.DrawFn,
    *,
    max_tasks: int = 6,
    max_members: int = 4,
    max_standbys: int = 2,
    allow_leaving: bool = True,
    allow_gone: bool = True,
    sizes: bool | None = None,
) -> dict[str, Any]:
    """A request as JSON-ready data: tasks, members, current, lags and config."""
    subs = draw(st.integers(1, 3))
    tasks: list[dict[str, Any]] = []
    with_sizes = draw(st.booleans()) if sizes is None else sizes
    for sub in range(subs):
        stateful = draw(st.booleans())
        for p in range(draw(st.integers(1, max(1, max_tasks // subs)))):
            task: dict[str, Any] = {"id": f"{sub}_{p}", "stateful": stateful}
            if with_sizes and stateful:
                task["state_bytes"] = draw(st.sampled_from([0, 1, 3, 10, 1000]))
                if draw(st.booleans()):  # a learner's progress then counts
                    task["changelog_records"] = draw(st.sampled_from([0, 80, 60_000]))
            tasks.append(task)
    count = draw(st.integers(min(2, max_members), max_members))
    members: list[dict[str, Any]] = []
    for i in range(count):
        members.append(
            {
                "id": f"m-{i}",
                "capacity": draw(st.integers(1, 2)),
                "rack": draw(st.sampled_from([None, "a", "b"])),
                "leaving": allow_leaving and i > 0 and draw(st.integers(0, 3)) == 0,
            }
        )
    names = [m["id"] for m in members] + ([GONE] if allow_gone else [])
    current: dict[str, dict[str, list[str]]] = {
        n: {"active": [], "standby": [], "learning": []} for n in names
    }
    lags: dict[str, dict[str, int]] = {}
    for task in tasks:
        holder = draw(st.sampled_from([None, *names]))
        used = set()
        if holder is not None:
            current[holder]["active"].append(task["id"])
            used.add(holder)
        for name in names:
            if name in used:
                continue
            role = draw(st.sampled_from(["none", "none", "standby", "learning"]))
            if role != "none":
                current[name][role].append(task["id"])
                used.add(name)
        for member in members:
            if draw(st.integers(0, 2)) == 0:
                lag = draw(st.sampled_from([0, 5, 50_000]))
                lags.setdefault(member["id"], {})[task["id"]] = lag
    config = {
        "num_standby_replicas": draw(st.integers(0, max_standbys)),
        "acceptable_recovery_lag": 100,
        "max_warmup_replicas": draw(st.integers(1, 3)),
        "balance_tolerance": draw(st.sampled_from([0.0, 0.0, 0.5])),
    }
    return {"tasks": tasks, "members": members, "current": current, "lags": lags, "config": config}
