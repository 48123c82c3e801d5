"""segue.protocol: the contract between the operator and the workers, defined once.

Both sides import it; it imports nothing else of Segue, does no I/O and needs only the
standard library and pydantic (an import-linter contract and ``tests/protocol`` hold it
to that). docs/protocol.md is its prose; each module here is one part of it:

- :mod:`.document`: the assignment document (model, version, encode/decode, its
  ConfigMap keys and size limit);
- :mod:`.gzjson`: the gzipped JSON every ConfigMap document is written in;
- :mod:`.tasks`: task ids and which source partitions a task reads (seed 004);
- :mod:`.names`: topic names (changelogs, repartition topics, transactional ids), the
  assignment ConfigMap's name, labels, pod environment variables, ports and paths;
- :mod:`.reports`: the metric names a worker exports and the operator scrapes;
- :mod:`.topology`: the ``/topology`` document a worker serves;
- :mod:`.probes`: how long a worker's liveness probe tolerates a failing ``/healthz``;
- :mod:`.kstreams`: the Kafka Streams plugin's group report and the answer it is given
  (the operator-plugin contract; docs/kafka-streams.md), and :mod:`.kstreams_answer`
  which answer the plugin may use for a report;
- :mod:`.history`: the history record the operator writes to Kafka and the what-if
  pipeline reads (the operator-pipeline contract).
- :mod:`.lazy`: not the contract but its one standard-library helper every package's
  ``__init__`` uses, exported names loaded on first use (so ``segue --help`` is quick).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from segue.protocol.document import (
        DOCUMENT_KEY,
        DOCUMENT_VERSION,
        GENERATION_KEY,
        MAX_DOCUMENT_BYTES,
        AssignmentDocument,
        DocumentError,
        MemberRoles,
        PartitionMapEntry,
        Role,
        UnsupportedVersion,
        decode,
        decode_configmap,
        encode,
    )
    from segue.protocol.tasks import Expansion, TaskId
else:
    from segue.protocol.lazy import exports

    # Each name loads its module on first use (PEP 562): a part alone (the task ids of
    # ``segue assign``, the names of a worker's topology) then leaves the document's
    # pydantic models unloaded, and every ``segue`` command stays quick to start.
    _PARTS = {
        "document": (
            "DOCUMENT_KEY", "DOCUMENT_VERSION", "GENERATION_KEY", "MAX_DOCUMENT_BYTES",
            "AssignmentDocument", "DocumentError", "MemberRoles", "PartitionMapEntry", "Role",
            "UnsupportedVersion", "decode", "decode_configmap", "encode",
        ),
        "tasks": ("Expansion", "TaskId"),
    }  # fmt: skip
    __getattr__ = exports(__name__, _PARTS)


__all__ = [
    "DOCUMENT_KEY",
    "DOCUMENT_VERSION",
    "GENERATION_KEY",
    "MAX_DOCUMENT_BYTES",
    "AssignmentDocument",
    "DocumentError",
    "Expansion",
    "MemberRoles",
    "PartitionMapEntry",
    "Role",
    "TaskId",
    "UnsupportedVersion",
    "decode",
    "decode_configmap",
    "encode",
]
