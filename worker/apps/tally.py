"""Tally: count records per key and say who counted each one, and when.

Every input record increments its key's count in the ``counts`` store and emits
``{"key", "count", "by": <member>, "at": <unix seconds>}``. The committed output
of a task is therefore its exact history: ``count`` runs 1, 2, 3, ... per key
when processing is exactly-once, and ``by``/``at`` show the handover from one
owner to the next (the last record the old owner committed, the first the new
owner did), which is how tests and ``bench/worker/handover.py`` measure the pause.
"""

from __future__ import annotations

import time

from segue.worker import INT64, JSON, STRING, Context, Record, Topology


def tally(record: Record, ctx: Context) -> None:
    _count(record, ctx)


def _count(record: Record, ctx: Context) -> None:
    store = ctx.store("counts")
    count = (store.get(record.key) or 0) + 1
    store.put(record.key, count)
    ctx.send(
        "output",
        record.key,
        {"key": record.key, "count": count, "by": ctx.member, "at": time.time()},
    )


def topology(
    application_id: str = "tally",
    input: str = "tally-input",
    output: str = "tally-output",
    cost_ms: str = "0",
) -> Topology:
    """``cost_ms``: time each record takes, as if it did real work (an app whose
    capacity per pod is known: what autoscaling tests need)."""
    app = Topology(application_id)
    source = app.topic(input, key=STRING, value=STRING)
    counts = app.store("counts", key=STRING, value=INT64)
    out = app.topic(output, key=STRING, value=JSON, label="output")
    cost = float(cost_ms) / 1000
    if cost > 0:

        def costly(record: Record, ctx: Context) -> None:
            time.sleep(cost)
            _count(record, ctx)

        app.subtopology([source], costly, stores=[counts], sinks=[out])
    else:
        app.subtopology([source], tally, stores=[counts], sinks=[out])
    return app
