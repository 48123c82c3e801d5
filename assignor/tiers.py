"""Lexicographic costs folded into one integer, as the min-cost-flow solver needs.

A placement is judged tier by tier (for actives: tasks moved, then bytes to restore, then the
preference for running learners), so each tier's weight must exceed the largest total every
lower tier can reach. When state sizes are large the product would overflow the solver's
64-bit costs; sizes are then counted in units of ``quantum`` bytes (a power of two), which
:class:`~.model.Stats` reports, rather than silently wrapping around.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

COST_LIMIT = 1 << 60  # headroom below int64 for the solver's own sums and scaling


@dataclass(frozen=True, slots=True)
class Tiers:
    """Weights of each tier, highest first, and the byte quantum chosen."""

    weights: tuple[int, ...]
    quantum: int

    def cost(self, *values: int) -> int:
        if len(values) != len(self.weights):
            raise ValueError(f"{len(values)} tier values for {len(self.weights)} tiers")
        return sum(map(operator.mul, values, self.weights))


def fold(maxima: list[int], bytes_tier: int | None = None, bytes_total: int = 0) -> Tiers:
    """Weights for tiers whose totals never exceed ``maxima`` (highest tier first).

    ``bytes_tier`` names the tier counting bytes: its maximum is ``bytes_total`` divided by
    the quantum, and the quantum doubles until the whole fits below :data:`COST_LIMIT`.
    """
    quantum = 1
    while True:
        tops = list(maxima)
        if bytes_tier is not None:
            tops[bytes_tier] = -(-bytes_total // quantum)
        weights = [1] * len(tops)
        for i in range(len(tops) - 2, -1, -1):
            weights[i] = weights[i + 1] * (tops[i + 1] + 1)
        if (tops[0] + 1) * weights[0] < COST_LIMIT or bytes_tier is None:
            if (tops[0] + 1) * weights[0] >= COST_LIMIT:
                raise OverflowError("cost tiers do not fit in 64 bits")
            return Tiers(tuple(weights), quantum)
        quantum *= 2


def restore_units(state_bytes: int | None, quantum: int) -> int:
    """Bytes in units of ``quantum``, rounded up so a non-empty store never costs zero."""
    return -(-(state_bytes or 0) // quantum)
