"""Every generation of a Kafka Streams app is also an answer to the group's latest report.

Kafka Streams applies a placement only at a rebalance, where the group leader's plugin
waits (bounded) for a document that answers *that* report. So after the scaling core has
decided, :func:`answered` makes sure the document names the report it answers: the core's
new generation carries the answer, and a report nothing answers yet gets the generation in
force again, renumbered (same members), at once. Pure, like the core.

When to rebalance next is the answer's too (``followup_at_ms``; the plugin sets it on every
client, a public Kafka Streams API), since nothing else makes the group take a new
generation up. Under exactly-once every rebalance pauses every task of the group, so the
answer asks for one when there will be something to take up:

- while learners restore and nothing else is in flight: a second (``LEAD``) before the
  first of them is expected within the acceptable lag, at the rate each has restored at
  so far (``Progress.eta``, timed from when it began restoring); a learner without a
  rate of its own yet (just assigned, or not dropped since) gets ``BUSY_PROBE``, even
  when its member's others have one (timed by their rate, a follow-up once came 11.4 s
  later from one learner's rate taken on a small first drop, and two handovers decided
  0.1 s and 1 s after that answer waited for it);
- while pods join: ``BUSY_PROBE`` if the report has a client no pod's agent has named yet
  (the core may admit it at any look); else none for them, as each joiner still starting
  starts the rebalance that reports it by its own JoinGroup, and those in the group wait
  for the rest of their batch until the core's deadline (``wake_at``);
- while anything else is in flight (a handover or a departure waiting to apply, a
  rollout): ``BUSY_PROBE``; a handover the group took up waits only for its new owner
  to restore and run the task, and asks for no rebalance;
- after an answer that gives moved tasks to their new owners (``starts``):
  ``STANDBYS_AFTER`` at the least with no learner left to hand over, ``FIRST_COMMIT``
  with one; after the rebalance a revoking answer left its ``then`` for,
  ``STANDBYS_AFTER`` for the standbys held back, a learner's own estimate otherwise,
  ``FIRST_COMMIT`` at the least while a learner is left (without it, once a newer
  answer was taken up at once, the second wave's rebalance came 0.78 s after the first
  wave's new owners started, before their first commits: 3.31 s). Each rebalance stops
  every member's commits until it ends, and a moved task runs on its new owner
  0.65-1.0 s after the rebalance that gave it (Kafka Streams opens it, restores the
  changelog's tail), its first commit after that: a second after it, as before, the
  rebalance that placed the standbys held back for the
  handover (``Policy.learners_first``), or a second wave of handovers, came before a
  3 -> 6's moved tasks had committed, and their pauses ran to 2.1-2.5 s
  (docs/benchmarks.md). A learner's follow-up is asked ``LEAD`` before its expected
  catch-up, so ``FIRST_COMMIT`` puts its handover at most half a second past it;
- when settled: ``SETTLED_PROBE``, so a decision with no membership change behind it (a
  scale-down, a spec edit) is taken up within that bound, which also caps the wait for
  a learner.

One case comes before all of these: an answer that gives a client an active task
another client of the report still owns. Kafka's cooperative protocol takes such a
task up in two rebalances: the owner revokes it in this one and rejoins at once, and the
new owner gets it in the next, which waits for every member to join. The others learn
of it only at their next heartbeat (3 s apart by default) or their own follow-up, and
until the last has joined the task has no owner and every member that joined commits
nothing (seen: the second rebalance of a 2 -> 3 handover waited 0.8 s for a member's
1 s follow-up). So that answer asks every client to rejoin at once (``REVOKING``), and
also answers that next rebalance (``then_followup_after_ms``, the follow-up it would have
asked otherwise; ``segue.protocol.kstreams_answer.answers_next``): the leader takes the same
placement up again without waiting for the operator, and a report it took up so needs
no answer here. Such an answer decided while the group runs an earlier one, for the
same report, is taken up by the group's next rebalance without a wait too
(``answers_newer``): the handover's first rebalance does not stop every member's
commits for a report, a watch and a write.

And one case sets no follow-up at all: a generation decided while the group runs one it
took up already (a scale-down, a learner caught up sooner than its follow-up). Its next
rebalance is whatever the answer it runs asked for, up to ``SETTLED_PROBE`` away. If it
gives a member of the group other active tasks or learners (standbys can wait), and
unless that rebalance comes within ``STANDBYS_AFTER`` (the longest of the waits for
moved tasks' first commits above), the document asks the group to rebalance now
(``rejoin``): every pod's plugin watches the document, and its client supplier, if the
app sets it, makes each main consumer rejoin at its next poll (docs/kafka-streams.md,
"The second line"). So does a generation whose step deletes the pod of a member of the
group: that member leaves the group as its consumers close, and the rebalance its leave
starts is then joined at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Final

from segue.operator.kstreams.group import Group
from segue.operator.scaling import Memory, Plan, Published, World
from segue.operator.scaling.document import to_document
from segue.protocol import encode
from segue.protocol.kstreams import GroupReport, KafkaStreamsAnswer
from segue.protocol.kstreams_answer import revokes, taken_up

BUSY_PROBE: Final = 1.0  # seconds to the next rebalance while something is in flight
SETTLED_PROBE: Final = 15.0  # ... and while settled (the longest wait for a learner too)
STANDBYS_AFTER: Final = 3.0  # ... after a handover's rebalance, for the standbys held back
FIRST_COMMIT: Final = 1.5  # ... and for the next learner's handover
LEAD: Final = 1.0  # rebalance this long before a learner is expected caught up
REVOKING: Final = 0.0  # ... and at once after one that revokes a task to move it


def followup_delay(
    plan: Plan, world: World, unmapped: bool = False, taken_up: Published | None = None
) -> float:
    """Seconds until the group should rebalance again (see the module's docstring);
    ``unmapped``: the report has a client no pod's agent has named yet; ``taken_up``: the
    delay once that generation runs and its handovers are done (a revoking answer's
    ``then_followup_after_ms``, for the rebalance that hands its tasks over)."""
    if not plan.busy:
        return SETTLED_PROBE
    memory = plan.memory
    published = world.published if taken_up is None else taken_up
    # the core decided something new, or handed a task over the group has not taken up
    # yet: it is taken up first
    in_flight = taken_up is None and (plan.publish is not None or _untaken(memory, world))
    if (
        in_flight
        or plan.create_pods
        or plan.delete_pods
        or memory.absent
        or memory.rolling
        or published is None
    ):
        return BUSY_PROBE
    waits: list[float] = []
    if memory.joining:
        if unmapped:
            return BUSY_PROBE  # a joiner in the group: the core may admit it at any look
        # Every joiner in the group is ready and waits for the rest of its batch: each of
        # those still starting starts the rebalance that reports it by its own JoinGroup,
        # and the core admits the ready ones at its deadline (``wake_at``) at the latest
        if plan.wake_at is not None:
            waits.append(plan.wake_at - world.now)
        else:
            waits.append(SETTLED_PROBE)
    learning = {t: m for m, roles in published.members.items() for t in roles.learning}
    for task, member in learning.items():
        eta = _eta(plan, world, task, member)
        if eta is None:
            return BUSY_PROBE
        waits.append(eta - LEAD)
    if not waits:  # busy for a reason none of these explains: soon, as before; once
        # the handovers are done, nothing is left to take up but the standbys they held
        # back (``Policy.learners_first``), once the moved tasks have committed
        if taken_up is None:
            # handovers the group took up wait for their new owners to restore and
            # start the tasks (a whole store after a failover), which no rebalance hastens
            return SETTLED_PROBE if memory.handovers else BUSY_PROBE
        return STANDBYS_AFTER if _standbys_due(plan, taken_up) else SETTLED_PROBE
    return min(max(min(waits), BUSY_PROBE), SETTLED_PROBE)


def _untaken(memory: Memory, world: World) -> bool:
    """Whether a handover in flight may wait for the group: all but those whose new owner
    holds the task active and only restores or starts it (``PodObs.runs`` not yet), with
    no rebalance left to ask for."""
    return any(
        (pod := world.pods.get(h.to)) is None or pod.roles.get(task) != "active" or pod.runs(task)
        for task, h in memory.handovers.items()
    )


def _standbys_due(plan: Plan, taken_up: Published) -> bool:
    """Whether the held target places a standby ``taken_up`` does not have."""
    held = plan.memory.held
    if held is None:
        return False
    has: dict[str, set[str]] = {}
    for member, roles in taken_up.members.items():
        for task in roles.standby:
            has.setdefault(task, set()).add(member)
    return any(set(ms) - has.get(t, set()) for t, ms in held.standbys.items())


def _eta(plan: Plan, world: World, task: str, member: str) -> float | None:
    """Seconds until ``member``'s learner of ``task`` is expected within the acceptable
    lag; None without a rate of its own."""
    held = plan.memory.held
    progress = held.progress.get(task) if held is not None else None
    if progress is None or progress.member != member:
        return None
    return progress.eta(world.policy.acceptable_recovery_lag, world.now)


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
    publish, was = plan.publish, world.published
    waiting = awaited(report, previous, was)
    if publish is None:
        if was is None or not waiting:
            return plan
        publish = Published(was.generation + 1, was.members, was.partition_map)
    # A client whose pod the generation does not list yet (a joiner the core has not
    # admitted) is left unmapped: the plugin gives it nothing, and would refuse the answer
    mapped = {c: m for c, m in clients.items() if m in publish.members}
    unmapped = any(c.process_id not in clients for c in report.clients)
    delay, then = followup_delay(plan, world, unmapped), None
    if not unmapped and starts(report, publish, mapped):  # let the moved tasks commit
        learning = any(roles.learning for roles in publish.members.values())
        delay = max(delay, FIRST_COMMIT if learning else STANDBYS_AFTER)
    followup = round((world.now + delay) * 1000)
    if revokes(report, publish.members, mapped):  # and the next rebalance's answer is this one
        followup = round((world.now + REVOKING) * 1000)
        after = followup_delay(plan, world, unmapped, taken_up=publish)
        if any(roles.learning for roles in publish.members.values()):  # the next wave
            after = max(after, FIRST_COMMIT)  # waits for this one's first commits
        then = round(after * 1000)
    answer = KafkaStreamsAnswer(
        answers=report.id,
        clients=mapped,
        followup_at_ms=followup,
        then_followup_after_ms=then,
        rejoin=not waiting
        and (
            _leaves_now(plan, clients.values())
            or (
                _changes_what_runs(publish, was, mapped.values())
                and _rebalance_far(previous, world.now)
            )
        ),
        leaving=sorted(plan.delete_pods),
    )
    document = to_document(publish, world.application_id).model_copy(
        update={"kafka_streams": answer}
    )
    return replace(plan, publish=publish, document=encode(document), busy=True)


def _leaves_now(plan: Plan, members: Iterable[str]) -> bool:
    """Whether the plan deletes the pod of a member of the group's last rebalance (a
    departure, a restart onto a new template). Its consumers leave the group as they close
    (the client supplier's ``Leaving``), which starts a rebalance the others would learn
    of only at their next heartbeat, committing nothing meanwhile once one has rejoined;
    asked, they rejoin at their next poll. A pod that is gone without closing (killed) is
    not asked for: the rebalance would wait for its member until its session ran out."""
    deleted = set(plan.delete_pods)
    return any(m in deleted for m in members)


def _changes_what_runs(publish: Published, was: Published | None, members: Iterable[str]) -> bool:
    """Whether ``publish`` gives some member of the group's last rebalance other active
    tasks or learners than ``was``, the generation the group runs. Nothing else is worth
    a rebalance now (standbys may wait for the next), least of all one that only drops a
    member whose pod is gone without leaving: the members that rejoined would wait for it
    until its session ran out, committing nothing under exactly-once."""
    if was is None:
        return True

    def runs(generation: Published, member: str) -> tuple[tuple[str, ...], ...]:
        roles = generation.members.get(member)
        return () if roles is None else (roles.active, roles.learning)

    return any(runs(publish, m) != runs(was, m) for m in members)


def _rebalance_far(previous: KafkaStreamsAnswer | None, now: float) -> bool:
    """Whether the group's next rebalance, as the answer it runs asked for it, is more
    than ``STANDBYS_AFTER`` away (a revoking answer's ``then`` counted from its own): a
    sooner one may be a wait for moved tasks' first commits, which an ask would cut
    short (seen on the bench with ``BUSY_PROBE`` here: a second wave of handovers and the
    standbys asked at once after the first wave's start, 3 -> 6 pausing 1.26-1.59 s)."""
    if previous is None or previous.followup_at_ms is None:
        return True
    due = previous.followup_at_ms + (previous.then_followup_after_ms or 0)
    return due > round((now + STANDBYS_AFTER) * 1000)


def awaited(
    report: GroupReport, previous: KafkaStreamsAnswer | None, published: Published | None
) -> bool:
    """Whether the group's leader waits for an answer to ``report`` (``previous``: the
    answer in the document, of generation ``published``): not once that answer names it,
    nor when the leader took the answer up by itself (``taken_up``: again, or a newer
    revoking one). A new generation the core publishes meanwhile still names the report,
    for the next one."""
    if previous is None or published is None:
        return True
    return previous.answers != report.id and not taken_up(report, previous, published.generation)


def starts(report: GroupReport, publish: Published, clients: Mapping[str, str]) -> bool:
    """Some client is given an active task no client of ``report`` owns (process id ->
    member: ``clients``): the answer completes a move, and the next rebalance should
    wait for the moved task's first commit."""
    owned = {t for c in report.clients for t in c.previous_active}
    return any(
        t not in owned for member in clients.values() for t in publish.members[member].active
    )
