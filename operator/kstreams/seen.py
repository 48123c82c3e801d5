"""What the operator has seen of each Kafka Streams group between looks: the last report
(a new one is a rebalance, counted in ``segue_operator_kstreams_rebalances_total``) and
the last fallback (said once, as a Warning event, since the group then runs Kafka
Streams' placement, not Segue's, until the next rebalance Segue answers; a Normal one
before Segue's first generation, where it is how an app starts).

Kept in memory only: a restarted operator counts from the next rebalance and says a
fallback still on record once more, which is true.
"""

from __future__ import annotations

from dataclasses import dataclass

from segue.operator.kstreams.group import Group
from segue.operator.scaling import Event


@dataclass(frozen=True)
class News:
    rebalanced: bool  # a report not seen before (the first one seen is not counted)
    fallback: Event | None  # a fallback not said before


class GroupsSeen:
    def __init__(self) -> None:
        self._reports: dict[str, str] = {}  # app uid -> the last report id seen
        self._fallbacks: dict[str, str] = {}  # app uid -> the last report a fallback was said of

    def saw(self, uid: str, group: Group, published: bool) -> News:
        """``published``: Segue has published a generation for this app. Before its first
        one a fallback is the expected start, not a warning: the operator admits the pods
        of the first scale together (``expansionTimeoutSeconds``), and a leader that
        reports before they have all joined waits only ``segue.answer.wait.ms``."""
        report, applied = group.report, group.applied
        rebalanced = False
        if report is not None:
            rebalanced = self._reports.get(uid, report.id) != report.id
            self._reports[uid] = report.id
        fallback = None
        new = applied is not None and self._fallbacks.get(uid) != applied.report
        if applied is not None and applied.fallback is not None and new:
            self._fallbacks[uid] = applied.report
            if published:
                fallback = Event(
                    "Warning",
                    "AssignorFallback",
                    f"the group leader did not use Segue's answer to report {applied.report}"
                    f" ({applied.fallback}): Kafka Streams' StickyTaskAssignor placed the"
                    " tasks, and Segue answers again at the next rebalance",
                )
            else:
                fallback = Event(
                    "Normal",
                    "AssignorFallback",
                    "before Segue's first generation, Kafka Streams' StickyTaskAssignor"
                    f" placed the tasks (report {applied.report}); Segue places them once"
                    " the pods of the first scale have joined",
                )
        return News(rebalanced, fallback)

    def forget(self, uid: str) -> None:
        self._reports.pop(uid, None)
        self._fallbacks.pop(uid, None)
