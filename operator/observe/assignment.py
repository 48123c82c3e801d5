"""The app's published assignment, as its ConfigMap holds it now.

``world`` reads it on every step: the generation in force, the resourceVersion a new one
is published over (``act.apply`` replaces only that version), and for a Kafka Streams
app the answer the group's leader last got. A document this operator cannot read raises
:class:`~segue.protocol.DocumentError`, never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubernetes.client import CoreV1Api
from kubernetes.client.exceptions import ApiException

from segue.operator.scaling import Published, from_document
from segue.protocol import decode_configmap
from segue.protocol.kstreams import KafkaStreamsAnswer
from segue.protocol.names import assignment_configmap


@dataclass(frozen=True)
class Assignment:
    published: Published | None
    resource_version: str | None
    answer: KafkaStreamsAnswer | None = None


def read_assignment(core: CoreV1Api, namespace: str, app: str) -> Assignment:
    try:
        cm = core.read_namespaced_config_map(assignment_configmap(app), namespace)
    except ApiException as exc:
        if exc.status == 404:
            return Assignment(None, None)
        raise
    document = decode_configmap(cm.data, cm.binary_data)
    version = cm.metadata.resource_version if cm.metadata else None
    return Assignment(from_document(document), version, document.kafka_streams)
