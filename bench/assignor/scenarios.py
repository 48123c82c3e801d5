"""The benchmark's cases, as settled groups that then change membership.

Each case starts from a balanced, settled assignment over the ``before`` members (tasks
spread round-robin in task order, which is also where Kafka Streams' own assignor settles),
then members join, leave or are replaced. The same case feeds Segue (JSON request) and Kafka
Streams' HighAvailabilityTaskAssignor (the Java harness), so both start from identical input.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Case:
    name: str
    subtopologies: list[tuple[int, bool]]  # (partitions, stateful) per sub-topology
    before: list[str]
    after: list[str]
    leaving: list[str] = field(default_factory=list)
    initial: dict[str, list[str]] | None = None  # explicit settled actives, else round-robin
    num_standby_replicas: int = 0
    max_warmup_replicas: int = 2
    large: bool = False

    def task_ids(self) -> list[str]:
        return [f"{sub}_{p}" for sub, (n, _) in enumerate(self.subtopologies) for p in range(n)]

    def stateful_ids(self) -> list[str]:
        return [
            f"{sub}_{p}"
            for sub, (n, stateful) in enumerate(self.subtopologies)
            if stateful
            for p in range(n)
        ]

    def settled(self) -> dict[str, list[str]]:
        if self.initial is not None:
            return self.initial
        owners: dict[str, list[str]] = {m: [] for m in self.before}
        stateful = set(self.stateful_ids())
        # stateful tasks first, round-robin in task order, then stateless ones the same way
        order = [t for t in self.task_ids() if t in stateful]
        order += [t for t in self.task_ids() if t not in stateful]
        for i, t in enumerate(order):
            owners[self.before[i % len(self.before)]].append(t)
        return owners

    def request(self) -> dict[str, Any]:
        stateful = set(self.stateful_ids())
        return {
            "tasks": [{"id": t, "stateful": t in stateful} for t in self.task_ids()],
            "members": [{"id": m, "leaving": m in self.leaving} for m in self.after],
            "current": {m: {"active": ts} for m, ts in self.settled().items()},
            "lags": {},
            "config": {
                "num_standby_replicas": self.num_standby_replicas,
                "acceptable_recovery_lag": 0,
                "max_warmup_replicas": self.max_warmup_replicas,
            },
        }


def pods(n: int, start: int = 0, prefix: str = "wc") -> list[str]:
    return [f"{prefix}-{i:05d}" for i in range(start, start + n)]


CASES: list[Case] = [
    Case(
        "seed 001: 6 tasks, m3 joins",
        [(6, True)],
        ["m1", "m2"],
        ["m1", "m2", "m3"],
        initial={"m1": ["0_0", "0_2", "0_4"], "m2": ["0_1", "0_3", "0_5"]},
    ),
    Case(
        "seed 003: WordCount, C joins",
        [(6, False), (6, True)],
        ["A", "B"],
        ["A", "B", "C"],
        initial={
            "A": ["1_0", "1_2", "1_4", "0_0", "0_2", "0_4"],
            "B": ["1_1", "1_3", "1_5", "0_1", "0_3", "0_5"],
        },
    ),
    Case("scale-out 10 -> 12", [(60, True)], pods(10), pods(12)),
    Case("scale-out 100 -> 130", [(1000, True)], pods(100), pods(130)),
    Case("scale-in 12 -> 10", [(60, True)], pods(12), pods(12), leaving=pods(2, 10)),
    Case("replace one member", [(60, True)], pods(10), [*pods(4), "wc-99999", *pods(5, 5)]),
    Case(
        "3 x 2,000 over 300 -> 330",
        [(2000, True)] * 3,
        pods(300),
        pods(330),
        max_warmup_replicas=20,
    ),
    Case(
        "20,000 over 1,000 -> 1,100",
        [(20000, True)],
        pods(1000),
        pods(1100),
        max_warmup_replicas=200,
        large=True,
    ),
    Case(
        "100,000 over 4,500 -> 5,000",
        [(100000, True)],
        pods(4500),
        pods(5000),
        max_warmup_replicas=1000,
        large=True,
    ),
]
