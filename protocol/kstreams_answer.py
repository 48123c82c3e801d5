"""Which answer the Kafka Streams plugin may use for a report, judged as the plugin's
``Answers.check`` judges it, in the same words (the fixtures in ``tests/contracts/kstreams``
hold both sides to it): :func:`check_answer` for the reasons to refuse one, and
:func:`answers_next` and :func:`answers_newer` for the answers that also serve a report
after their own, which the operator then leaves unanswered (:func:`taken_up`). The models
are :mod:`.kstreams`'.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from segue.protocol.kstreams import GroupReport, KafkaStreamsAnswer


class Members(Protocol):
    """One member's roles in a generation, as :func:`check_answer` and :func:`revokes` read
    them: the document's ``MemberRoles``, or the operator's ``scaling.Roles``."""

    @property
    def active(self) -> tuple[str, ...]: ...
    @property
    def standby(self) -> tuple[str, ...]: ...
    @property
    def learning(self) -> tuple[str, ...]: ...


def answers_next(report: GroupReport, answer: KafkaStreamsAnswer, generation: int) -> bool:
    """Whether generation ``generation``'s ``answer``, decided for an earlier report, also
    answers ``report`` without the operator: the revoking rebalance's follow-up.

    Kafka's cooperative protocol moves an active task over two rebalances: the owner
    revokes it in the one the answer is for, and every member rejoins at once
    (``followup_at_ms`` now) for the next, where the new owner gets it. That one's answer
    is known already: the same placement. The operator says so (``then_followup_after_ms``)
    and the leader that returned it takes it up again at once, so the task's pause does
    not also wait for a report, a watch and a write. Once only: the report after must
    come from the leader that returned this generation for the report it answers, and
    have exactly the clients the answer maps (a joiner or a departure is the operator's
    to place). The plugin (``Answers.check``) and the operator (``answered``) decide it
    from the same report and document, so the operator answers every report the plugin
    waits on."""
    applied = report.last_applied
    return (
        answer.then_followup_after_ms is not None
        and applied is not None
        and (applied.report == answer.answers or applied.newer)
        and applied.generation == generation
        and maps_every_client(report, answer)
    )


def answers_newer(report: GroupReport, answer: KafkaStreamsAnswer, generation: int) -> bool:
    """Whether generation ``generation``'s revoking ``answer`` also answers ``report``: one
    the operator decided after the generation the leader took up last, for the same report
    (a learner caught up between two rebalances, and the rebalance that hands its task
    over is a follow-up the group had asked for already).

    The operator would answer ``report`` with that same placement, renumbered; waiting
    for it, every member of the group commits nothing (0.13-0.19 s on the 3 -> 6 bench,
    inside the moved task's pause). So the leader takes it up at once, with the
    follow-up :func:`followup_for` gives it, and its applied record says so
    (``Applied.newer``), which makes the next report :func:`answers_next`'s. Only from a
    plugin that says it does (``takes_newer``), only a revoking answer (a follow-up time
    the operator reckoned for another one would be stale), only with exactly the clients
    the answer maps."""
    applied = report.last_applied
    return (
        report.takes_newer
        and answer.then_followup_after_ms is not None
        and applied is not None
        and applied.report == answer.answers
        and applied.generation is not None
        and applied.generation < generation
        and maps_every_client(report, answer)
    )


def maps_every_client(report: GroupReport, answer: KafkaStreamsAnswer) -> bool:
    """The report's clients are exactly the ones the answer maps: a joiner or a
    departure is the operator's to place, never an answer taken up without it."""
    return {c.process_id for c in report.clients} == set(answer.clients)


def taken_up(report: GroupReport, answer: KafkaStreamsAnswer, generation: int) -> bool:
    """Whether the leader takes generation ``generation``'s ``answer`` up for ``report``
    without waiting for the operator, though it was decided for another report."""
    return answers_next(report, answer, generation) or answers_newer(report, answer, generation)


def revokes(
    report: GroupReport, members: Mapping[str, Members], clients: Mapping[str, str]
) -> bool:
    """Some client is given an active task that another client of ``report`` still owns
    (process id -> member: ``clients``): the task moves over two rebalances."""
    owner = {t: c.process_id for c in report.clients for t in c.previous_active}
    for client, member in clients.items():
        roles = members.get(member)
        for task in roles.active if roles is not None else ():
            if owner.get(task, client) != client:
                return True
    return False


def followup_for(
    report: GroupReport,
    members: Mapping[str, Members],
    answer: KafkaStreamsAnswer,
    generation: int,
    now_ms: int,
) -> int | None:
    """The follow-up (epoch ms) the plugin sets at ``now_ms`` for ``report`` from generation
    ``generation``'s ``answer`` (``members``: the document's): the answer's own, or
    ``then_followup_after_ms`` later when it answers the report after the one it was for.
    A delay, not a time: the operator cannot know when that rebalance comes, and a time
    reckoned from its answer came 0.3 s after a handover, while the new owner started.
    A newer answer (:func:`answers_newer`) keeps its own (every member rejoins at once for
    the rebalance that completes its moves) while it still :func:`revokes` a task from
    this report's owners; one whose moves an earlier generation revoked already (it came
    out while that one's handover was under way) is that handover's rebalance, so it
    takes the delay instead: its own would be a rebalance at once, stopping every
    member's commits again before the moved tasks' first."""
    newer = answers_newer(report, answer, generation)
    if answer.answers == report.id or (newer and revokes(report, members, answer.clients)):
        return answer.followup_at_ms
    after = answer.then_followup_after_ms
    return None if after is None else now_ms + after


def check_answer(
    report: GroupReport,
    members: Mapping[str, Members],
    answer: KafkaStreamsAnswer | None,
    generation: int | None = None,
) -> list[str]:
    """Why the plugin must not use an answer for ``report`` (empty: it may); ``generation``:
    the document's, for :func:`answers_next`. The Java side checks the same
    (``Answers.check``), on the same fixtures."""
    if answer is None:
        return ["the document has no kafka_streams answer"]
    errors: list[str] = []
    again = generation is not None and taken_up(report, answer, generation)
    if answer.answers != report.id and not again:
        errors.append(f"it answers report {answer.answers}, not {report.id}")
    mapped: dict[str, str] = {}
    for client, member in sorted(answer.clients.items()):
        if member not in members:
            errors.append(
                f"client {client} is mapped to {member}, which the document does not list"
            )
        elif member in mapped:
            errors.append(f"clients {mapped[member]} and {client} are both mapped to {member}")
        else:
            mapped[member] = client
    stateful = {t.id: t.stateful for t in report.tasks}
    owner: dict[str, str] = {}
    for member, roles in sorted(members.items()):
        seen: set[str] = set()
        for role in ("active", "standby", "learning"):
            for task in getattr(roles, role):
                if task in seen:
                    errors.append(f"task {task} is in two roles on {member}")
                seen.add(task)
                if task not in stateful:
                    errors.append(f"task {task} (on {member}) is not a task of the group")
                elif role == "active" and task in owner:
                    errors.append(
                        f"task {task} is active on two members: {owner[task]} and {member}"
                    )
                elif role == "active":
                    owner[task] = member
                elif not stateful[task]:
                    errors.append(f"task {task} is stateless: it can have no standby (on {member})")
    errors += [f"task {t.id} has no active member" for t in report.tasks if t.id not in owner]
    errors += [
        f"{member} holds active tasks but no client of this report is mapped to it"
        for member in sorted(set(owner.values()))
        if member not in mapped
    ]
    return errors
