"""Applications only the tests use (importable by worker subprocesses as
``tests.worker.apps:<name>``, since they run from the repository root)."""

from __future__ import annotations

from segue.worker import INT64, STRING, Context, Record, Topology


def passthrough(record: Record, ctx: Context) -> None:
    ctx.send("output", record.key, record.value)


def two_subs(application_id: str, input: str, missing: str, output: str) -> Topology:
    """Sub-topology 0 reads ``input``; sub-topology 1 reads ``missing``, which does
    not exist: its tasks must be refused, sub-topology 0's must run."""
    app = Topology(application_id)
    out = app.topic(output, key=STRING, value=STRING, label="output")
    app.subtopology([app.topic(input, key=STRING, value=STRING)], passthrough, sinks=[out])
    app.subtopology([app.topic(missing, key=STRING, value=STRING)], passthrough, sinks=[out])
    return app


def wordcount_shape() -> Topology:
    """WordCount's shape with no-op processors, for the pure tests of topics and tasks."""
    app = Topology("wc")
    text = app.topic("text", key=STRING, value=STRING)
    words = app.repartition("words", key=STRING, value=STRING)
    app.subtopology([text], lambda r, c: None, sinks=[words])
    app.subtopology(
        [words],
        lambda r, c: None,
        stores=[app.store("counts", STRING, INT64)],
        sinks=[app.topic("out", label="output")],
    )
    return app
