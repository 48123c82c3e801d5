"""What the operator is waiting for, in its own words: the message of its first
condition that says something is in the way (Degraded, then Scaling), else Balanced's.

Shared by ``segue status`` and the demo's live view, so both say the same thing.
"""

from __future__ import annotations

from segue.operator.api.status import StreamAppStatus, find_condition


def waiting(status: StreamAppStatus) -> str:
    """What the operator is waiting for, in its own words (its conditions' messages)."""
    for kind in ("Degraded", "Scaling"):
        found = find_condition(status.conditions, kind)
        if found is not None and found.status == "True":
            return f"{kind}: {found.message}"
    balanced = find_condition(status.conditions, "Balanced")
    if balanced is not None:
        return f"Balanced={balanced.status}: {balanced.message}"
    return "no status yet"
