"""Every generation of a Kafka Streams app is also an answer to the group's latest report.

Kafka Streams applies a placement only at a rebalance, where the group leader's plugin
waits (bounded) for a document that answers *that* report. So after the scaling core has
decided, :func:`answered` makes sure the document names the report it answers: the core's
new generation carries the answer, and a report nothing answers yet gets the generation in
force again, renumbered (same members), at once. Pure, like the core.

When to rebalance next is the answer's too (``followup_at_ms``; the plugin sets it on every
client, a public Kafka Streams API): soon while anything is in flight (a learner warming, a
handover or a departure waiting to apply, a joiner), since nothing else makes the group
take a new generation up; and, when settled, after ``SETTLED_PROBE`` seconds, so a
decision with no membership change behind it (a scale-down, a spec edit) is taken up
within that bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Final

from segue.operator.kstreams.group import Group
from segue.operator.scaling import Plan, Published, World
from segue.operator.scaling.document import to_document
from segue.protocol import encode
from segue.protocol.kstreams import KafkaStreamsAnswer

BUSY_PROBE: Final = 1.0  # seconds to the next rebalance while something is in flight
SETTLED_PROBE: Final = 15.0  # ... and while settled


def followup_at_ms(plan: Plan, now: float) -> int:
    return round((now + (BUSY_PROBE if plan.busy else SETTLED_PROBE)) * 1000)


def answered(
    plan: Plan,
    world: World,
    group: Group,
    previous: KafkaStreamsAnswer | None,
    clients: Mapping[str, str],
) -> Plan:
    """``plan`` with its generation answering ``group.report`` (process id -> member:
    ``clients``), or a renumbered copy of the one in force when the report is not
    answered yet; ``plan`` itself when there is nothing to answer or to answer with."""
    report = group.report
    if report is None:
        return plan
    publish = plan.publish
    if publish is None:
        if world.published is None or (previous is not None and previous.answers == report.id):
            return plan
        was = world.published
        publish = Published(was.generation + 1, was.members, was.partition_map)
    # A client whose pod the generation does not list yet (a joiner the core has not
    # admitted) is left unmapped: the plugin gives it nothing, and would refuse the answer
    answer = KafkaStreamsAnswer(
        answers=report.id,
        clients={c: m for c, m in clients.items() if m in publish.members},
        followup_at_ms=followup_at_ms(plan, world.now),
    )
    document = to_document(publish, world.application_id).model_copy(
        update={"kafka_streams": answer}
    )
    return replace(plan, publish=publish, document=encode(document), busy=True)
