"""What each pod of a Kafka Streams app holds, in the scaling core's terms (``PodObs``).

Pure: the group report, the plugin's last outcome, the published generation and each
pod's agent page in; one :class:`~segue.operator.scaling.PodObs` per pod out. What a
Segue worker says of itself a Kafka Streams instance does not, so it is assembled:

- *who*: a pod is a member of the group once the latest report has a client whose
  consumers its agent names (``answer_for``); until then it is not ``reporting``, and
  the core places nothing on it;
- *which generation*: the one the plugin last returned (``applied``), for every pod in
  the group; a fallback returned none, and no pod has one until Segue answers again;
- *what it runs*: the published members when that generation is the applied one, else
  the tasks the report says the client ran (its standbys then count as standbys: only
  an active role matters to a handover). An answer that revokes a task to move it runs
  in two rebalances: after the first (the one the answer names, or the one that took
  a newer answer up, ``Applied.newer``), the new owner holds the task as a standby
  until the second hands it over (Kafka Streams does the same), so a handover is not
  seen done before it is;
- *how far each copy is*: the restore consumer's lag per changelog partition (restoring
  actives, standbys, warm-ups), then, for an active the restore consumer no longer reads,
  its changelog end (it writes it), and for state left on disk the report's lag;
- *what it processes* (``processing``): each active of those roles that is not
  ``restoring``, a changelog partition of it still behind in the restore consumer (Kafka
  Streams keeps a restored active's changelog partitions there, paused at lag 0), so a
  handover is done, and the app ``Balanced``, only once the new owner runs the task
  under the generation it applied (the published one, or, until the group takes that
  up, what the report says its client ran: a rebalance that only renumbers the same
  placement leaves its tasks running).
"""

from __future__ import annotations

from collections.abc import Mapping

from segue.operator.act.agent import AGENT_VOLUME
from segue.operator.api.names import TEMPLATE_HASH_LABEL
from segue.operator.kstreams.group import Group
from segue.operator.observe import PodState
from segue.operator.observe.agent import AgentReport
from segue.operator.scaling import PodObs, Published, TaskFault
from segue.protocol.kstreams import (
    GroupReport,
    KafkaStreamsAnswer,
    ReportedClient,
    ReportedTask,
    answer_for,
)
from segue.protocol.names import changelog_topic
from segue.protocol.tasks import TaskId

Changelog = tuple[str, int]


def clients(report: GroupReport | None, agents: Mapping[str, AgentReport]) -> dict[str, str]:
    """process id -> member, for the clients of ``report`` a pod's agent claims."""
    if report is None:
        return {}
    return answer_for(report, {m: a.consumers for m, a in agents.items()}).clients


def stores(report: GroupReport) -> dict[str, tuple[tuple[str, Changelog], ...]]:
    """stateful task -> (store, its changelog partition), as ``topology_of`` keeps them."""
    out = {}
    for task in report.tasks:
        out[task.id] = _logged(report.application_id, task)
    return {t: s for t, s in out.items() if s}


def _logged(app: str, task: ReportedTask) -> tuple[tuple[str, Changelog], ...]:
    partition = TaskId.parse(task.id).partition
    logged = set(task.changelogs)
    return tuple(
        (s, (changelog_topic(app, s), partition))
        for s in sorted(task.stores)
        if (changelog_topic(app, s), partition) in logged
    )


def observe_pods(
    states: Mapping[str, PodState],
    agents: Mapping[str, AgentReport],
    group: Group,
    published: Published | None,
    end_offsets: Mapping[Changelog, int],
    *,
    answer: KafkaStreamsAnswer | None = None,
) -> dict[str, PodObs]:
    """``answer``: the Kafka Streams part of the published document."""
    report, applied = group.report, group.applied
    mapped = clients(report, agents)
    members = set(mapped.values())
    by_member = (
        {mapped[c.process_id]: c for c in report.clients if c.process_id in mapped}
        if report
        else {}
    )
    logged = stores(report) if report else {}
    generation = applied.generation if applied is not None else None
    current = published is not None and generation == published.generation
    revoked = (
        _revoked_only(report, mapped)
        if current and applied is not None and answer is not None
        and answer.then_followup_after_ms is not None
        and report is not None and applied.report == report.id
        and (applied.report == answer.answers or applied.newer)
        else {}
    )  # fmt: skip
    out = {}
    for name, state in states.items():
        agent = agents.get(name)
        client = by_member.get(name)
        roles = _roles(published if current and name in members else None, name, client)
        for t, owner in revoked.items():
            if roles.get(t) == "active" and owner != name:  # not handed over yet
                if t in logged:
                    roles[t] = "standby"
                else:
                    del roles[t]
        lags = agent.restore_lag if agent is not None else {}
        restoring = frozenset(
            t
            for t, role in roles.items()
            if role == "active" and any(lags.get(c, 0) > 0 for _, c in logged.get(t, ()))
        )
        out[name] = PodObs(
            name=name,
            running=state.phase == "Running",
            terminating=state.terminating,
            failed=state.phase in ("Failed", "Succeeded"),
            ready=state.ready,
            reporting=agent is not None and name in members,
            generation=generation if name in members else None,
            roles=roles,
            offsets=_offsets(
                roles=roles,
                restoring=restoring,
                lags=lags,
                reported=client.lags if client else {},
                logged=logged,
                ends=end_offsets,
            ),
            restoring=restoring,
            processing=frozenset(t for t, r in roles.items() if r == "active") - restoring,
            template_hash=state.labels.get(TEMPLATE_HASH_LABEL, ""),
            start_fault=agent_missing(state),
        )
    return out


AGENT_MISSING = "AgentMissing"  # the Degraded reason of a pod whose agent copy fails


def agent_missing(state: PodState) -> TaskFault | None:
    """``AgentMissing`` when the pod's ``segue-agent`` init container fails: it runs
    ``cp JAR DEST`` in the operator's agent image (:func:`segue.operator.act.agent.with_agent`),
    so JAR is not in that image, which the operator's flags name."""
    failed = state.init_failure
    if failed is None or failed.container != AGENT_VOLUME:
        return None
    jar = failed.command[1] if len(failed.command) > 1 else "?"
    said = f": {failed.message}" if failed.message else ""
    return TaskFault(
        AGENT_MISSING,
        f"its init container {AGENT_VOLUME} cannot copy the Kafka Streams agent jar {jar} "
        f"from image {failed.image} (exit code {failed.exit_code}{said}); the operator's "
        "--kstreams-agent-jar must name the jar's path in its --kstreams-agent-image "
        "(docs/kafka-streams.md), and once it does these pods are replaced",
    )


def _revoked_only(report: GroupReport, mapped: Mapping[str, str]) -> dict[str, str]:
    """task -> the member that ran it before the answer to ``report`` (the rebalance
    that revoked the tasks it moves)."""
    return {
        t: mapped[c.process_id]
        for c in report.clients
        if c.process_id in mapped
        for t in c.previous_active
    }


def _roles(applied: Published | None, member: str, client: ReportedClient | None) -> dict[str, str]:
    """task -> role on ``member``: the applied generation's, else what the report says
    its client ran."""
    if applied is not None:
        r = applied.members.get(member)
        if r is None:
            return {}
        return {
            **{t: "active" for t in r.active},
            **{t: "standby" for t in r.standby},
            **{t: "learning" for t in r.learning},
        }
    if client is None:
        return {}
    return {
        **{t: "active" for t in client.previous_active},
        **{t: "standby" for t in client.previous_standby},
    }


def _offsets(
    *,
    roles: Mapping[str, str],
    restoring: frozenset[str],
    lags: Mapping[Changelog, int],
    reported: Mapping[str, int],
    logged: Mapping[str, tuple[tuple[str, Changelog], ...]],
    ends: Mapping[Changelog, int],
) -> dict[str, dict[str, int]]:
    """task -> store -> the next offset this pod's copy would read."""
    out: dict[str, dict[str, int]] = {t: {} for t in roles}  # a stateless task holds nothing
    for task, held in logged.items():
        end = {store: ends.get(c, 0) for store, c in held}
        if any(c in lags for _, c in held):  # read by the restore consumer right now
            out[task] = {s: max(0, end[s] - lags.get(c, end[s])) for s, c in held}
        elif roles.get(task) == "active" and task not in restoring:
            out[task] = dict(end)  # it runs the task: its store is the changelog's writer
        elif task in reported and reported[task] < sum(end.values()):
            behind, offsets = reported[task], {}
            for store, _ in held:  # the report sums a task's stores: spread it over them
                gap = min(end[store], behind)
                offsets[store], behind = end[store] - gap, behind - gap
            out[task] = offsets
    return out
