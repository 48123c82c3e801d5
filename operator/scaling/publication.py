"""The next generation: published only if the members' roles or the partition map changed,
or a task lies fenced on its owner (:func:`refenced`, at most once per
``REFENCE_BACKOFF`` per task: :func:`refence`), and never over ``MAX_DOCUMENT_BYTES``
(then the last generation keeps running and ``Degraded`` says why). Departures only go
with a publish: a member leaves the assignment in the same generation that is written,
or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from segue.protocol import MAX_DOCUMENT_BYTES, encode
from segue.protocol.reports import TaskErrorReason

from .document import to_document
from .inventory import Degradation, Inventory
from .model import Event, Published, Roles, World

FENCED = TaskErrorReason.FENCED.value
# Seconds before a task fenced again on its owner is published again: a zombie that
# keeps fencing it must not cost a generation every step. The worker's own retry cap
# is 10 s (worker/recovery.py); this is a few of those.
REFENCE_BACKOFF = 30.0


@dataclass(frozen=True)
class Refence:
    """Fenced tasks to publish again now (``due``, task -> its member), and those
    fenced again too soon after the last time (``held``: task -> when it may be)."""

    due: dict[str, str]
    held: dict[str, float]

    def memory(self, world: World, published: bool) -> dict[str, float]:
        """``Memory.refenced`` after this step: when each task was last published again
        for a fence, kept while it is fenced or its back-off runs."""
        last = world.memory.refenced
        fenced = self.due.keys() | self.held.keys()
        kept = {t: at for t, at in last.items() if t in fenced or world.now - at < REFENCE_BACKOFF}
        if published:
            kept.update(dict.fromkeys(self.due, world.now))
        return kept

    def events(self, generation: int) -> list[Event]:
        return [
            Event(
                "Warning",
                "TaskFenced",
                f"generation {generation}: {t} was fenced on {m} by another instance; "
                f"published again so {m} starts it afresh",
            )
            for t, m in sorted(self.due.items())
        ]


def refence(world: World) -> Refence:
    """Which tasks :func:`refenced` finds to publish again now, and which wait."""
    last = world.memory.refenced
    due: dict[str, str] = {}
    held: dict[str, float] = {}
    for task, member in refenced(world).items():
        at = last.get(task)
        if at is None or world.now - at >= REFENCE_BACKOFF:
            due[task] = member
        else:
            held[task] = at + REFENCE_BACKOFF
    return Refence(due, held)


def publication(
    world: World,
    *,
    placed: dict[str, Roles] | None,
    expired: list[str],
    departed: list[str],
    inventory: Inventory,
    degradations: list[Degradation],
    refence_due: bool = False,
) -> tuple[Published | None, bytes | None, list[str]]:
    """The next generation, if anything changed; departures only go with a publish."""
    published = world.published
    publish, document = None, None
    if placed is not None:
        members = {m: r for m, r in placed.items() if m not in departed}
        members.update({m: Roles() for m in expired})
        if (
            published is None
            or members != dict(published.members)
            or inventory.partition_map != dict(published.partition_map)
            or refence_due
        ):
            candidate = Published(
                (published.generation if published else 0) + 1, members, inventory.partition_map
            )
            blob = encode(to_document(candidate, world.application_id))
            if len(blob) > MAX_DOCUMENT_BYTES:
                degradations.append(
                    Degradation(
                        "AssignmentTooLarge",
                        f"generation {candidate.generation} is {len(blob)} bytes gzipped, over "
                        f"{MAX_DOCUMENT_BYTES}; the last generation keeps running",
                    )
                )
                departed = []
            else:
                publish, document = candidate, blob
    if publish is None:
        departed = [m for m in departed if published is None or m not in published.members]
    return publish, document, departed


def refenced(world: World) -> dict[str, str]:
    """Tasks the generation in force gives a member as active that its worker reports
    ``Fenced`` (task -> member), once every reporting worker has applied that generation.

    A worker fenced by a newer owner stops the task for good until a newer generation
    assigns it again (docs/worker.md). Normally the newer owner is the rightful one.
    But an owner that is still on an older generation can fence the rightful one (its
    ``init_transactions`` finished last, after a broker restart; seen in
    tests/faults/test_restart.py) and then let go when it catches up: the task has no
    owner at all. Once no worker is behind, the same roles published again as a newer
    generation make the rightful owner start it afresh.
    """
    published = world.published
    if published is None:
        return {}
    reporting = [p for p in world.pods.values() if p.reporting]
    if any((p.generation or 0) < published.generation for p in reporting):
        return {}
    out: dict[str, str] = {}
    for member, roles in published.members.items():
        pod = world.pods.get(member)
        if pod is None or not pod.reporting:
            continue
        out.update(
            {t: member for t in roles.active if (f := pod.faults.get(t)) and f.reason == FENCED}
        )
    return dict(sorted(out.items()))
