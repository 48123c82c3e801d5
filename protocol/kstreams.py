"""The Kafka Streams plugin's half of the contract: what it reports, what it is answered.

A Kafka Streams app runs Segue's ``TaskAssignor`` (KIP-924, the Java module in
``kstreams/``), which decides nothing: at every rebalance the group leader's plugin
writes a :class:`GroupReport` (the clients, the tasks they ran, their lags, and each
task's partitions and stores, as ``ApplicationState`` gives them) into the app's group
ConfigMap (:func:`~.names.group_configmap`), and maps the operator's answer onto the
assignment it returns. The answer is the app's ordinary assignment document
(:mod:`.document`) with a :class:`KafkaStreamsAnswer` beside the members: which client
is which pod, which report it answers, and when the plugin should ask for the next
rebalance (a learner's expected catch-up, so the handover is not left to a timer).

Both ConfigMaps are the app's own and named for it; the pods' ServiceAccount may read
the one and update the other, and nothing else (docs/kafka-streams.md, "Channel").
Encoding is the assignment document's: gzipped compact JSON with sorted keys.
``tests/contracts/kstreams`` holds fixtures both sides' tests parse, and
:mod:`.kstreams_answer` judges an answer as the plugin's ``Answers.check`` does, in
the same words.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from segue.protocol import gzjson
from segue.protocol.names import changelog_topic, is_repartition_topic
from segue.protocol.tasks import TaskId
from segue.protocol.topology import SubTopologyDescription, TopologyDescription

REPORT_VERSION: Final = 1
REPORT_KEY: Final = "group.json.gz"
REPORT_ID_KEY: Final = "report"  # data[REPORT_ID_KEY]: the report's id, readable at a glance
# data[APPLIED_KEY]: what the plugin returned for the last report (:class:`Applied`)
APPLIED_KEY: Final = "applied"
# The app's config lines that plug the plugin in (docs/kafka-streams.md, "Adoption"):
# its classes, which the Java side's ContractTest holds to these (``names.json``)
TASK_ASSIGNOR_CLASS: Final = "dev.segue.kstreams.SegueTaskAssignor"
CLIENT_SUPPLIER_CLASS: Final = "dev.segue.kstreams.SegueClientSupplier"


class ReportError(ValueError):
    """Bytes that are not a valid group report; the message names the offending item."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


Partition = tuple[str, int]  # (topic, partition)


class ReportedTask(_Model):
    """One task as Kafka Streams' ``TaskInfo`` describes it."""

    id: str
    stateful: bool
    stores: tuple[str, ...] = ()
    sources: tuple[Partition, ...] = ()
    changelogs: tuple[Partition, ...] = ()

    @model_validator(mode="after")
    def _well_formed(self) -> ReportedTask:
        TaskId.parse(self.id)  # raises naming the id
        if self.changelogs and not self.stateful:
            raise ValueError(f"task {self.id}: changelogs on a stateless task")
        return self


class ReportedClient(_Model):
    """One Kafka Streams client (a process) of the group, as ``KafkaStreamsState`` has it."""

    process_id: str = Field(min_length=1)
    consumer_client_ids: tuple[str, ...] = ()
    threads: int = Field(default=1, ge=1)
    previous_active: tuple[str, ...] = ()
    previous_standby: tuple[str, ...] = ()
    lags: dict[str, int] = Field(default_factory=dict)  # stateful task -> changelog records
    host: str | None = None  # application.server, if the app sets it
    rack: str | None = None


class ReportedConfigs(_Model):
    """The app's own assignment settings (``AssignmentConfigs``)."""

    acceptable_recovery_lag: int = Field(ge=0)
    max_warmup_replicas: int = Field(ge=1)
    num_standby_replicas: int = Field(ge=0)
    probing_rebalance_interval_ms: int = Field(ge=0)


class Applied(_Model):
    """What the group leader's plugin returned for a report, written beside it once
    Kafka Streams has its assignment: the generation of Segue's answer it mapped, or why
    it fell back (then Kafka Streams' own assignor placed the tasks, and the operator
    knows where they are only from the next report)."""

    report: str = Field(min_length=1)
    generation: int | None = Field(default=None, ge=1)
    fallback: str | None = None
    # The generation was taken up without an answer to ``report``: decided since the
    # leader's previous one, for the same report (:func:`.kstreams_answer.answers_newer`)
    newer: bool = False

    @model_validator(mode="after")
    def _one_outcome(self) -> Applied:
        if (self.generation is None) == (self.fallback is None):
            raise ValueError("applied names a generation or a fallback, exactly one")
        return self


class GroupReport(_Model):
    version: Literal[1] = REPORT_VERSION
    application_id: str = Field(min_length=1)
    id: str = Field(min_length=1)  # unique per rebalance: the answer names it
    reported_at_ms: int = Field(ge=0)  # the leader's clock
    clients: tuple[ReportedClient, ...]
    tasks: tuple[ReportedTask, ...]
    configs: ReportedConfigs
    # What the reporting leader's plugin last returned of Segue's (its generation and the
    # report it was for); None in a new process or after a fallback. :func:`answers_next`
    last_applied: Applied | None = None
    # The plugin takes a newer revoking generation up by itself
    # (:func:`.kstreams_answer.answers_newer`); False from a plugin that predates it, which
    # the operator then answers as before
    takes_newer: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> GroupReport:
        tasks = {t.id for t in self.tasks}
        if len(tasks) != len(self.tasks):
            raise ValueError("a task is listed twice in tasks")
        seen: set[str] = set()
        for client in self.clients:
            if client.process_id in seen:
                raise ValueError(f"client {client.process_id} is listed twice")
            seen.add(client.process_id)
            for task in (*client.previous_active, *client.previous_standby, *client.lags):
                if task not in tasks:
                    raise ValueError(f"client {client.process_id} names task {task}, not in tasks")
        return self


class KafkaStreamsAnswer(_Model):
    """What the plugin needs beside the members to map an assignment document."""

    answers: str  # the GroupReport.id this generation was decided for
    clients: dict[str, str]  # process id -> member (pod name)
    followup_at_ms: int | None = None  # ask for a rebalance then (epoch ms)
    # Set on an answer that revokes a task to move it: it also answers the next report,
    # with the follow-up this long after that rebalance instead (:func:`answers_next`)
    then_followup_after_ms: int | None = Field(default=None, ge=0)
    # Set on a generation decided while the group runs an earlier one and its next
    # rebalance is far: every member that has the plugin's client supplier rejoins at once
    rejoin: bool = False
    # The pods this generation's step deletes (a departure, a restart onto a new template):
    # their consumers leave the group as they close, and they do not rejoin on the ask, or
    # Kafka Streams would hold their shutdown until that rebalance ended
    leaving: list[str] = Field(default_factory=list)


def answer_for(
    report: GroupReport,
    consumers: Mapping[str, Iterable[str]],
    followup_at_ms: int | None = None,
) -> KafkaStreamsAnswer:
    """Which member each client of ``report`` is, from each member's main consumer client
    ids (its pod's agent reports them; the report names the consumers' group member ids,
    ``<client id>-<uuid>``): a client whose consumers are all one member's is that member.
    A static member's id starts with its ``group.instance.id`` instead
    (``<instance id>-<thread>-<uuid>``); such a client is the member whose consumers'
    client ids carry its process id, as Kafka Streams' default ``client.id``
    (``<application.id>-<process id>``) makes them. One whose consumers no pod claims,
    or claimed by two pods, or a member two clients claim (a restarted process and its
    ghost), stays unmapped: the plugin gives it nothing (and refuses an answer that
    leaves a member's tasks on no client), and the operator's next look sees the pods
    again."""
    found: dict[str, str] = {}
    for client in report.clients:
        members = {
            member
            for reported in client.consumer_client_ids
            for member, ids in consumers.items()
            if any(_same_consumer(reported, cid) for cid in ids)
        }
        if not members:  # a static member: by the process id in its client ids
            members = {
                member
                for member, ids in consumers.items()
                if any(f"-{client.process_id}-StreamThread-" in cid for cid in ids)
            }
        if len(members) == 1:
            found[client.process_id] = members.pop()
    claims: dict[str, int] = {}
    for member in found.values():
        claims[member] = claims.get(member, 0) + 1
    clients = {c: m for c, m in found.items() if claims[m] == 1}
    return KafkaStreamsAnswer(answers=report.id, clients=clients, followup_at_ms=followup_at_ms)


def _same_consumer(reported: str, client_id: str) -> bool:
    """Kafka Streams reports a consumer by its group member id, which is its client id
    followed by ``-<uuid>``; the agent knows the client id."""
    return reported == client_id or reported.startswith(f"{client_id}-")


def topology_of(report: GroupReport) -> TopologyDescription:
    """The app's shape as the report gives it (Kafka Streams' ``TaskInfo`` per task), in the
    form a Segue worker's ``/topology`` has: the operator reads both the same way. A store's
    changelog is the one named for it (Kafka Streams' naming, :mod:`.names`); a store the
    report gives no changelog partitions for (logging disabled) has nothing to restore and
    is left out. A source named like a repartition topic is one."""
    by_sub: dict[int, list[ReportedTask]] = {}
    for task in report.tasks:
        by_sub.setdefault(TaskId.parse(task.id).subtopology, []).append(task)
    app = report.application_id
    subs = []
    for sub_id, tasks in sorted(by_sub.items()):
        sources = tuple(sorted({topic for t in tasks for topic, _ in t.sources}))
        logged = {topic for t in tasks for topic, _ in t.changelogs}
        named = sorted({store for t in tasks for store in t.stores})
        stores = tuple(s for s in named if changelog_topic(app, s) in logged)
        changelogs = tuple(changelog_topic(app, s) for s in stores)
        repartition = tuple(t for t in sources if is_repartition_topic(t, app))
        subs.append(SubTopologyDescription(sub_id, sources, stores, changelogs, repartition))
    return TopologyDescription(app, tuple(subs))


def encode_report(report: GroupReport) -> bytes:
    return gzjson.dumps(report.model_dump(mode="json"))


def decode_report(blob: bytes) -> GroupReport:
    raw = gzjson.loads(blob, REPORT_KEY, ReportError)
    if raw.get("version") != REPORT_VERSION:
        version = raw.get("version")
        raise ReportError(f"{REPORT_KEY}: group report version {version!r} is not supported")
    try:
        return GroupReport.model_validate(raw)
    except ValidationError as exc:
        raise ReportError(f"{REPORT_KEY}: not a valid group report: {exc}") from exc


def decode_applied(data: Mapping[str, str] | None) -> Applied | None:
    """The plugin's last outcome in a group ConfigMap's ``data``; None before the first."""
    text = (data or {}).get(APPLIED_KEY)
    if text is None:
        return None
    try:
        return Applied.model_validate_json(text)
    except ValidationError as exc:
        raise ReportError(f"data[{APPLIED_KEY!r}] is not a valid outcome: {exc}") from exc


def decode_report_configmap(binary_data: Mapping[str, str | bytes] | None) -> GroupReport | None:
    """The report in a group ConfigMap's ``binaryData``; None before the first rebalance."""
    encoded = (binary_data or {}).get(REPORT_KEY)
    if encoded is None:
        return None
    try:
        blob = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ReportError(f"binaryData[{REPORT_KEY!r}] is not base64: {exc}") from exc
    return decode_report(blob)
