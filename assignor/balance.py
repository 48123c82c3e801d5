"""Balance bounds: each member's capacity-weighted share of a count, as floor/ceil limits.

Seed 001 asks for three balances (active tasks, stateful replicas, tasks of each
sub-topology); each is a pair of integer bounds per member computed here, widened by the
optional tolerance. The shares are exact rationals (integer arithmetic), and a member
never gets a share above ``cap`` (a member holds at most one replica of each task): the
excess is poured over the others, water-filling style. The fractional shares meet every
bound at once, which is what makes the flow problems of :mod:`.actives` feasible.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache


@dataclass(frozen=True, slots=True)
class Bounds:
    """Per-member ``[lower, upper]`` limits on one count."""

    lower: tuple[int, ...]
    upper: tuple[int, ...]

    def admits(self, member: int, count: int) -> bool:
        return self.lower[member] <= count <= self.upper[member]


def tolerance_fraction(tolerance: float) -> Fraction:
    return Fraction(tolerance).limit_denominator(1_000_000)


def shares(total: int, capacities: list[int], cap: int | None = None) -> list[Fraction]:
    """Capacity-weighted shares of ``total``, none above ``cap`` (water-filling)."""
    if not capacities:
        return []
    capped = [False] * len(capacities)
    while True:
        free_total = total - (cap or 0) * sum(capped)
        weight = sum(c for c, done in zip(capacities, capped, strict=True) if not done)
        result = [
            Fraction(cap or 0) if done else Fraction(free_total * c, weight or 1)
            for c, done in zip(capacities, capped, strict=True)
        ]
        if cap is None:
            return result
        over = [m for m, share in enumerate(result) if not capped[m] and share > cap]
        if not over:
            return result
        for m in over:
            capped[m] = True


def bounds(
    total: int, capacities: list[int], tolerance: Fraction, cap: int | None = None
) -> Bounds:
    """Floor/ceil of each share, widened by ``tolerance`` and clipped to ``[0, cap]``."""
    return _bounds(total, tuple(capacities), tolerance, cap)


@lru_cache(maxsize=4096)  # pure, and asked again for the same counts on every look
def _bounds(
    total: int, capacities: tuple[int, ...], tolerance: Fraction, cap: int | None
) -> Bounds:
    lower: list[int] = []
    upper: list[int] = []
    for share in shares(total, list(capacities), cap):
        low = share * (1 - tolerance)
        high = share * (1 + tolerance)
        lo = max(0, low.numerator // low.denominator)
        hi = -((-high.numerator) // high.denominator)
        if cap is not None:
            hi = min(hi, cap)
        lower.append(lo)
        upper.append(hi)
    return Bounds(tuple(lower), tuple(upper))
