"""The Kubernetes Events a step tells: what changed, in words an operator on call reads.

Pure: facts in, :class:`~.model.Event` values out (the shell posts them). Warnings for
a ``Degraded`` reason are said once, when the reason or its message changes, not on
every step.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from .model import Condition, Event, Published, Roles, World

LISTED = 8  # items named in one event message before "and N more"
HANDED_OVER: Final = "TaskHandedOver"  # the event's reason; ``segue status`` reads it
# One handover in a TaskHandedOver message: task, old owner, new owner, and the new
# owner's copy's lag when it was decided (stateful tasks); ``segue status`` parses it
HANDOVER_PAIR: Final = re.compile(r"^(\S+) (\S+) -> (\S+)(?: \(([\d,]+) behind\))?$")


def handover_pair(task: str, old: str, new: str, lag: int | None) -> str:
    return f"{task} {old} -> {new}" + (f" ({lag:,} behind)" if lag is not None else "")


def membership_events(
    world: World, forced: list[str], departed: list[str], expired: list[str]
) -> list[Event]:
    policy, published = world.policy, world.published
    events = []
    if forced:
        events.append(
            Event(
                "Warning",
                "ScaleDownTimeout",
                f"{', '.join(forced)} did not hand over within {policy.scale_down_timeout:g}s "
                "(or their pods are gone): their tasks go to the most caught-up members now",
            )
        )
    if departed:
        events.append(Event("Normal", "MemberLeft", f"{', '.join(departed)} removed"))
    for m in expired:
        if published is not None and published.members.get(m, Roles()).tasks():
            since = world.memory.absent.get(m, world.now)  # first seen away at this look
            message = expiry(m, world.now - since, policy.registration_timeout)
            events.append(Event("Warning", "MemberExpired", message))
    return events


def expiry(member: str, away: float, timeout: float) -> str:
    """Why an absent member's tasks leave it: ``away`` seconds gone, ``timeout`` the
    registrationTimeoutSeconds (0 for Kafka Streams apps: they go at once)."""
    gone = f" for {away:.0f} s" if away >= 1 else ""
    if timeout <= 0:
        return (
            f"{member} is away{gone}; with registrationTimeoutSeconds=0 its tasks go to the "
            "other members at once (caught-up standbys first)"
        )
    return (
        f"{member} has been away{gone}, past registrationTimeoutSeconds={timeout:g}s: "
        "its tasks are reassigned (caught-up standbys first)"
    )


def publish_events(
    before: Published | None,
    after: Published,
    moved: list[tuple[str, str, str]],
    lags: Mapping[str, Mapping[str, int]] | None = None,
) -> list[Event]:
    """``lags``: member -> task -> changelog records its copy was behind when this was
    decided: each handover of a stateful task names its new owner's."""
    events = []
    if before is not None and before.members and not after.members:
        events.append(
            Event(
                "Normal", "Suspended", "every task was handed off; no pod runs until replicas > 0"
            )
        )
    learning: list[str] = []
    for m, r in sorted(after.members.items()):
        had = set(before.members[m].learning) if before and m in before.members else set()
        new = [t for t in r.learning if t not in had]
        if new:
            learning.append(f"{m} learns {_listed(new)}")
    if learning:
        events.append(
            Event(
                "Normal",
                "LearnersAssigned",
                f"generation {after.generation}: " + "; ".join(learning),
            )
        )
    if moved:
        behind = lags or {}
        pairs = [handover_pair(t, a, b, behind.get(b, {}).get(t)) for t, a, b in moved]
        events.append(
            Event("Normal", HANDED_OVER, f"generation {after.generation}: {_listed(pairs)}")
        )
    events.append(
        Event(
            "Normal",
            "GenerationPublished",
            f"generation {after.generation}: {len(after.members)} members, {len(moved)} handovers",
        )
    )
    return events


def degraded_events(world: World, degraded: Condition) -> list[Event]:
    before = world.conditions.get("Degraded")
    if degraded.status != "True":
        return []
    if before is not None and (before.status, before.reason, before.message) == (
        degraded.status,
        degraded.reason,
        degraded.message,
    ):
        return []
    return [Event("Warning", degraded.reason, degraded.message)]


def _listed(items: list[str]) -> str:
    shown = ", ".join(items[:LISTED])
    return shown + (f" and {len(items) - LISTED} more" if len(items) > LISTED else "")
