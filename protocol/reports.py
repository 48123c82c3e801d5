"""What a worker reports about itself on :data:`~.names.METRICS_PATH`, and what it means.

The worker exports these (``segue.worker.metrics``); the operator scrapes and parses
them (``segue.operator.observe.scrape``) to learn how far each copy of each task is
and which tasks cannot run. The table in docs/protocol.md explains each one. Counters
are exported with Prometheus' ``_total`` suffix; the names here are the families'.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

GENERATION: Final = "segue_assignment_generation"  # the generation applied
TASK_ROLE: Final = "segue_task_role"  # {task, role} 1 for the role it runs in
TASK_STATE: Final = "segue_task_state"  # {task, state} 1 for its TaskState
TASK_ERROR: Final = "segue_task_error"  # {task, reason, message} 1 while it cannot run
TASK_ERROR_LABELS: Final = ("task", "reason", "message")
TASK_ERROR_MESSAGE_MAX: Final = 200  # characters of the ``message`` label
RESTORED_OFFSET: Final = "segue_task_restored_offset"  # {task, store} next offset to read
CHANGELOG_END_OFFSET: Final = "segue_task_changelog_end_offset"  # {task, store} as last seen
LOCAL_OFFSET: Final = "segue_task_local_offset"  # {task, store} on disk, not assigned
TASK_LAG: Final = "segue_task_lag"  # {task} changelog records behind
STATE_BYTES: Final = "segue_task_state_bytes"  # {task} bytes of local state
RECORDS_PROCESSED: Final = "segue_task_records_processed"  # counter {task}
RECORDS_RESTORED: Final = "segue_task_restored_records"  # counter {task, store}
BYTES_RESTORED: Final = "segue_task_restored_bytes"  # counter {task, store} key+value bytes
CHANGELOG_RECORDS: Final = "segue_task_changelog_records"  # {task, store} applied since open
CHANGELOG_BYTES: Final = "segue_task_changelog_bytes"  # {task, store} their key+value bytes
RECORDS_SKIPPED: Final = "segue_records_skipped"  # counter {task, reason}
TASK_FENCED: Final = "segue_task_fenced"  # counter {task}
STORE_WIPES: Final = "segue_store_wipes"  # counter {task, store} untrusted state wiped
ASSIGNMENT_ERRORS: Final = "segue_assignment_errors"  # counter {reason}
READY: Final = "segue_worker_ready"  # 1 when every active task is running
KAFKA_CALL_OVERRUNS: Final = "segue_kafka_call_overruns"  # counter {call} past its bound
# counter {call}: stuck calls left to their thread, the task fenced anew (worker/committing.py)
KAFKA_CALLS_ABANDONED: Final = "segue_kafka_calls_abandoned"
# counter {client}: long-lived consumers replaced once librdkafka dropped every broker
KAFKA_CLIENTS_RENEWED: Final = "segue_kafka_clients_renewed"

# A Kafka Streams pod's agent (kstreams/, docs/kafka-streams.md) reports these instead:
KSTREAMS_CONSUMER_CLIENT: Final = "segue_kstreams_consumer_client"  # {client_id} 1: who it is
KSTREAMS_RESTORE_LAG: Final = "segue_kstreams_restore_lag"  # {topic, partition} records behind
KSTREAMS_FALLBACKS: Final = "segue_kstreams_fallbacks"  # counter: rebalances not Segue's


class TaskState(StrEnum):
    """Where a task the worker holds is (the ``state`` label of :data:`TASK_STATE`)."""

    NEW = "new"  # just taken, about to start (never reported: it moves on in the same step)
    STARTING = "starting"  # active, waiting to fence the previous owner
    RESTORING = "restoring"  # active, fenced, catching up its stores
    RUNNING = "running"  # active and processing
    STANDBY = "standby"  # a standby or learner copy, following the changelog
    FAILED = "failed"  # cannot run now; retried with back-off (see TASK_ERROR)
    FENCED = "fenced"  # a newer owner took it; down until a generation assigns it again


REPORTED_STATES: Final = tuple(s for s in TaskState if s is not TaskState.NEW)


class TaskErrorReason(StrEnum):
    """The ``reason`` label of :data:`TASK_ERROR`: why a task a worker was given cannot
    run now. The first four come from its sub-topology's topics."""

    TOPIC_MISSING = "TopicMissing"  # a source or output topic does not exist
    NOT_COPARTITIONED = "NotCopartitioned"  # its sources differ in partition count
    PARTITION_MISMATCH = "PartitionMismatch"  # a changelog's partitions != task count
    TASK_OUT_OF_RANGE = "TaskOutOfRange"  # its sources have too few partitions for it
    UNKNOWN_TASK = "UnknownTask"  # the id names no task of the topology
    START_FAILED = "StartFailed"  # fencing, activating or entering a role failed
    STORE_FAILED = "StoreFailed"  # a store could not open or restore (wiped if damaged)
    STORE_FULL = "StoreFull"  # the state volume refuses writes: retried, local state kept
    TRANSACTION_ABORTED = "TransactionAborted"  # a produce or commit failed: retried
    RECORD_FAILED = "RecordFailed"  # error policy ``stop`` at a bad record: not retried
    FENCED = "Fenced"  # a newer owner took the task: down until reassigned


class AssignmentErrorReason(StrEnum):
    """The ``reason`` label of :data:`ASSIGNMENT_ERRORS`: why (part of) a generation
    was not applied."""

    INVALID_DOCUMENT = "invalid_document"
    UNSUPPORTED_VERSION = "unsupported_version"
    APPLICATION_MISMATCH = "application_mismatch"
    CONFLICTING_ROLES = "conflicting_roles"
    UNKNOWN_TASK = "unknown_task"
    MISSING_TOPIC = "missing_topic"  # a sub-topology's topics: see TaskErrorReason
    COPARTITIONING = "copartitioning"
    CHANGELOG_PARTITIONS = "changelog_partitions"
