"""The next generation: published only if the members' roles or the partition map changed,
and never over ``MAX_DOCUMENT_BYTES`` (then the last generation keeps running and
``Degraded`` says why). Departures only go with a publish: a member leaves the
assignment in the same generation that is written, or not at all.
"""

from __future__ import annotations

from segue.protocol import MAX_DOCUMENT_BYTES, encode

from .document import to_document
from .inventory import Degradation, Inventory
from .model import Published, Roles, World


def publication(
    world: World,
    *,
    placed: dict[str, Roles] | None,
    expired: list[str],
    departed: list[str],
    inventory: Inventory,
    degradations: list[Degradation],
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
