"""The librdkafka settings of a StreamApp's credentials Secret, safe to pass around.

``world`` reads them from the Secret (:func:`read_credentials`); ``kafka.KafkaView`` is
keyed by them (one admin client per distinct login) and hands them to librdkafka, the
only place the values go.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Mapping

from kubernetes.client import CoreV1Api

from segue.operator.api import SecretRef


class KafkaCredentials(Mapping[str, str]):
    """librdkafka settings read from a StreamApp's credentials Secret.

    The values go to the admin client and nowhere else: the repr names the keys only,
    so a log line, an exception or a cache key that shows one never carries a
    password. Hashable, so equal credentials share one :class:`KafkaView`."""

    def __init__(self, settings: Mapping[str, str] | None = None) -> None:
        self._items = tuple(sorted((settings or {}).items()))
        self._values = dict(self._items)

    def __getitem__(self, key: str) -> str:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KafkaCredentials) and self._items == other._items

    def __hash__(self) -> int:
        return hash(self._items)

    def __repr__(self) -> str:
        return f"KafkaCredentials(keys={sorted(self._values)})"

    __str__ = __repr__


def read_credentials(core: CoreV1Api, namespace: str, ref: SecretRef | None) -> KafkaCredentials:
    """The librdkafka settings of a credentials Secret, decoded, for the operator's own
    clients only: pods get theirs by reference (``act.objects``)."""
    if ref is None:
        return KafkaCredentials()
    secret = core.read_namespaced_secret(ref.name, namespace)
    return KafkaCredentials(
        {k: base64.b64decode(v).decode() for k, v in (secret.data or {}).items()}
    )
