"""Parameter sweeps of Segue's policy: the cartesian product of a few ``Policy`` fields.

A sweep is a list of plain :class:`~segue.operator.scaling.Policy` values, so each
(scenario, policy) pair is an independent run (a Spark task, later). The order is
stable: axes in the order given, values in the order given, the last axis fastest.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import fields, replace

from segue.operator.scaling import Policy

_FIELDS = {f.name for f in fields(Policy)}


def sweep(base: Policy | None = None, **axes: Sequence[object]) -> list[Policy]:
    """``sweep(max_warmup_replicas=[1, 2, 4], num_standby_replicas=[0, 1])``: 6 policies."""
    unknown = sorted(set(axes) - _FIELDS)
    if unknown:
        raise ValueError(f"not Policy fields: {', '.join(unknown)}")
    start = base or Policy()
    names = list(axes)
    return [
        replace(start, **dict(zip(names, values, strict=True)))  # type: ignore[arg-type]
        for values in itertools.product(*(axes[n] for n in names))
    ]
