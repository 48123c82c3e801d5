"""Dealing pooled standby units to members without breaking per-task exclusions.

:mod:`.standbys` routes the standbys of tasks that land on members holding nothing for them
through a pool, which knows how many units each member takes but not which task may go
where. Dealing gives each unit a member that is not the task's active and does not hold a
replica of it yet; if it succeeds, the pooled optimum (a lower bound) is attained. If it
fails, the caller solves the full network instead, so a failure costs time, never optimality.
"""

from __future__ import annotations

import heapq


def deal(
    units: list[int], slots: dict[int, int], chosen: list[list[int]], actives: list[int]
) -> bool:
    """Give each pooled unit (a task, once per unit) a slot on a member not holding it yet.

    Fullest member first; a unit whose every open slot is forbidden swaps with a dealt one.
    Returns ``False`` when no such deal exists along these lines (the caller then solves the
    full network).
    """
    return _Dealer(slots, chosen, actives).deal(units)


class _Dealer:
    def __init__(self, slots: dict[int, int], chosen: list[list[int]], actives: list[int]) -> None:
        self.open = dict(slots)
        self.chosen = chosen
        self.actives = actives
        self.dealt: list[tuple[int, int]] = []

    def allowed(self, t: int, m: int) -> bool:
        return m != self.actives[t] and m not in self.chosen[t]

    def deal(self, units: list[int]) -> bool:
        heap = [(-n, m) for m, n in self.open.items()]
        heapq.heapify(heap)
        stuck: list[int] = []
        for t in units:
            skipped = []
            while heap:
                n, m = heapq.heappop(heap)
                if not self.allowed(t, m):
                    skipped.append((n, m))
                    continue
                self.take(t, m)
                if n + 1 < 0:
                    heapq.heappush(heap, (n + 1, m))
                break
            else:
                stuck.append(t)
            for item in skipped:
                heapq.heappush(heap, item)
        return all(self.swap(t) for t in stuck)

    def take(self, t: int, m: int) -> None:
        self.chosen[t].append(m)
        self.dealt.append((t, m))
        self.open[m] -= 1

    def swap(self, t: int) -> bool:
        """Place ``t`` on a dealt slot whose holder can move to a still open one."""
        free = [m for m, n in self.open.items() if n > 0]
        for i, (other, m) in enumerate(self.dealt):
            if not self.allowed(t, m):
                continue
            for slot in free:
                if self.allowed(other, slot):
                    self.chosen[other][self.chosen[other].index(m)] = slot
                    self.dealt[i] = (other, slot)
                    self.open[slot] -= 1
                    self.chosen[t].append(m)
                    self.dealt.append((t, m))
                    return True
        return False
