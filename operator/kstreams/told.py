"""What the operator says of each answer it writes to a Kafka Streams group, after the
step that published it: how long the group's leader waited for it (in its rebalance,
every task paused under exactly-once, from its report to the answer written), and
whether a generation decided while the group runs one it took up asks the group to
rebalance now. :mod:`.answer` decides both; this module only counts and logs them, for
:mod:`segue.operator.reconcile`, in :mod:`segue.operator.metrics`' numbers.
"""

from __future__ import annotations

import logging
import time

from segue.operator.kstreams.answer import awaited
from segue.operator.laps import Laps
from segue.operator.metrics import OperatorMetrics
from segue.operator.scaling import Plan, Published
from segue.protocol import decode
from segue.protocol.kstreams import GroupReport, KafkaStreamsAnswer

log = logging.getLogger("segue.operator")


def told(
    metrics: OperatorMetrics,
    app: tuple[str, str],
    report: GroupReport,
    *,
    previous: tuple[KafkaStreamsAnswer | None, Published | None],
    plan: Plan,
    laps: Laps,
) -> None:
    """``report``: the group's latest; ``previous``: the answer in the document before
    this step, and its generation; ``plan``: this step's, which publishes."""
    namespace, name = app
    assert plan.publish is not None
    assert plan.document is not None
    answer = decode(plan.document).kafka_streams
    if not awaited(report, *previous):
        # answered before or taken up: this generation is for the next rebalance
        if answer is not None and answer.rejoin:
            metrics.kstreams_rejoin_asks.labels(namespace, name).inc()
            log.info(
                "%s/%s: generation %d asks the group to rebalance now",
                namespace, name, plan.publish.generation,
            )  # fmt: skip
        return
    now = time.time()
    waited = max(0.0, now - report.reported_at_ms / 1000)
    metrics.kstreams_answer_seconds.labels(namespace, name).observe(waited)
    at = answer.followup_at_ms if answer is not None else None
    followup = None if at is None else at / 1000 - now
    log.info(
        "%s/%s: answered report %s with generation %d, %.2fs after the leader wrote it "
        "(this step %.2fs: %s); next rebalance asked in %s",
        namespace, name, report.id, plan.publish.generation, waited, laps.total, laps,
        "-" if followup is None else f"{followup:.1f}s",
    )  # fmt: skip
