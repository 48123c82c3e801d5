"""segue.pipeline: the what-if pipeline (issue 13), its pure core.

Scenarios (:mod:`.scenario`, :mod:`.fleet`) are replayed by a fixed-tick simulator
(:mod:`.simulate`) under Segue's real decision core or a baseline (:mod:`.policies`),
and each run's cost is an :class:`~.metrics.Outcome`. Spark comes later, in its own
module; nothing here does I/O. docs/pipeline.md.
"""
