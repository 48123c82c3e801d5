"""The ACLs a Segue app and the Segue operator need, and nothing more.

What a platform team grants on an authorizing cluster (docs/reliability.md, "On an
authenticated cluster" lists them), written as code so the e2e on
:class:`~segue.stack.kafka_secure.SecureKafkaBroker` proves the list is enough and
shows what is refused without it. ``<id>`` is the StreamApp's ``applicationId``:

- the app's principal: everything on its own topics (prefix ``<id>-``: changelogs and
  repartition topics, which its workers create), read and describe on its input
  topics, write and describe on its output topics, read and describe on its consumer
  group (exactly ``<id>``, where each task's transaction commits its input offsets),
  write and describe on its transactional ids (prefix ``<id>-``, one per task);
- the operator's principal: describe on the app's topics, inputs and outputs (partition
  counts, replicas, end offsets), describe on the app's group (its committed offsets),
  and, only if it records history, write and describe on the history topic. Nothing
  else: it creates, reads and changes no topic, group or transaction.

The prefix ends with ``-`` so that app ``wc`` gets nothing of app ``wc2``'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from confluent_kafka.admin import AdminClient

# not re-exported for mypy by confluent_kafka.admin (as in operator/observe/kafka.py)
from confluent_kafka.admin._acl import AclBinding, AclOperation, AclPermissionType
from confluent_kafka.admin._resource import ResourcePatternType, ResourceType

Grant = tuple[ResourceType, str, ResourcePatternType, AclOperation]
TOPIC, GROUP, TXN = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.TRANSACTIONAL_ID
LITERAL, PREFIXED = ResourcePatternType.LITERAL, ResourcePatternType.PREFIXED
READ, WRITE, DESCRIBE = AclOperation.READ, AclOperation.WRITE, AclOperation.DESCRIBE


def _each(kind: ResourceType, names: Iterable[str], ops: Sequence[AclOperation]) -> list[Grant]:
    return [(kind, name, LITERAL, op) for name in sorted(set(names)) for op in ops]


def app_grants(
    application_id: str,
    inputs: Iterable[str],
    outputs: Iterable[str],
    *,
    transactions: bool = True,
) -> list[Grant]:
    """What the app's workers do (``transactions=False``: all but its transactional ids,
    to show what a missing grant looks like)."""
    own = f"{application_id}-"
    grants: list[Grant] = [(TOPIC, own, PREFIXED, AclOperation.ALL)]
    grants += _each(TOPIC, inputs, (READ, DESCRIBE))
    grants += _each(TOPIC, outputs, (WRITE, DESCRIBE))
    grants += _each(GROUP, [application_id], (READ, DESCRIBE))
    if transactions:
        grants += [(TXN, own, PREFIXED, WRITE), (TXN, own, PREFIXED, DESCRIBE)]
    return grants


def operator_grants(
    application_id: str,
    inputs: Iterable[str],
    outputs: Iterable[str],
    history_topic: str | None = None,
) -> list[Grant]:
    """What the operator reads of one app, and the history topic it may write."""
    grants: list[Grant] = [(TOPIC, f"{application_id}-", PREFIXED, DESCRIBE)]
    grants += _each(TOPIC, [*inputs, *outputs], (DESCRIBE,))
    grants += _each(GROUP, [application_id], (DESCRIBE,))
    if history_topic:
        grants += _each(TOPIC, [history_topic], (WRITE, DESCRIBE))
    return grants


def bindings(principal: str, grants: Iterable[Grant]) -> list[AclBinding]:
    return [
        AclBinding(kind, name, pattern, principal, "*", op, AclPermissionType.ALLOW)
        for kind, name, pattern, op in grants
    ]


def grant(bootstrap: str, principal: str, grants: Iterable[Grant], timeout: float = 30.0) -> None:
    """Create the ACLs (as a super user: the harness's PLAINTEXT listener); raises if
    the broker refuses any."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_acls(bindings(principal, grants), request_timeout=timeout).values():
        future.result(timeout)


def describe(grants: Iterable[Grant]) -> list[str]:
    """One line per grant, as a platform team reads them (docs, test output)."""
    return [
        f"{op.name} on {kind.name} {name}{'*' if pattern == PREFIXED else ''}"
        for kind, name, pattern, op in grants
    ]
