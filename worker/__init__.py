"""segue.worker: the data plane every StreamApp pod runs (issue 4).

The library a stream application is written against, and the process
(``segue worker --app MODULE:OBJECT``) that runs it. An application is a
:class:`Topology`::

    from segue.worker import INT64, STRING, Topology

    app = Topology("streams-wordcount")
    text = app.topic("streams-plaintext-input", key=STRING, value=STRING)
    words = app.repartition("counts-store", key=STRING, value=STRING)
    counts = app.store("counts-store", key=STRING, value=INT64)
    out = app.topic("streams-wordcount-output", key=STRING, value=INT64)
    app.subtopology([text], split, sinks=[words])
    app.subtopology([words], count, stores=[counts], sinks=[out])

See docs/worker.md. Module map: ``topology``, ``processor``, ``serdes`` (the API);
``topics``, ``diff`` (pure logic; task ids and the assignment document are the
contract's, ``segue.protocol``); ``state/`` (stores,
checkpoints, restoration); ``active``, ``ownership`` (task states and their
transitions), ``failures``, ``restoring``, ``processing``, ``recovery``,
``taskset`` (the facade), ``runtime`` (running tasks); ``clients``, ``renewing``
(the long-lived Kafka clients; a consumer left with no broker replaced); ``watch``
(the assignment, through ``kubeapi``'s list and watch), ``metrics``, ``report``,
``http``, ``config``, ``cli`` (the process); ``apps/`` (examples).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from segue.worker.processor import Context, ErrorPolicy, KeyValueStore, Processor, Record
    from segue.worker.serdes import BYTES, INT64, JSON, STRING, MalformedRecord, Serde
    from segue.worker.topology import StoreSpec, SubTopology, TopicSpec, Topology
else:
    from segue.protocol.lazy import exports

    # Each name loads its module on first use (PEP 562): ``segue worker`` imports
    # ``segue.worker.cli``, which ``segue --help`` imports for its one line of help.
    _PARTS = {
        "processor": ("Context", "ErrorPolicy", "KeyValueStore", "Processor", "Record"),
        "serdes": ("BYTES", "INT64", "JSON", "STRING", "MalformedRecord", "Serde"),
        "topology": ("StoreSpec", "SubTopology", "TopicSpec", "Topology"),
    }
    __getattr__ = exports(__name__, _PARTS)


__all__ = [
    "BYTES",
    "INT64",
    "JSON",
    "STRING",
    "Context",
    "ErrorPolicy",
    "KeyValueStore",
    "MalformedRecord",
    "Processor",
    "Record",
    "Serde",
    "StoreSpec",
    "SubTopology",
    "TopicSpec",
    "Topology",
]
