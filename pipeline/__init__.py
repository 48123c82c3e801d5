"""segue.pipeline: the what-if pipeline (issue 13).

Scenarios (:mod:`.scenario`, :mod:`.fleet`) are replayed by a fixed-tick simulator
(:mod:`.simulate`) under Segue's real decision core or a baseline (:mod:`.policies`),
and each run's cost is an :class:`~.metrics.Outcome`. ``segue simulate`` (:mod:`.cli`)
replays a fleet under the policies of :mod:`.catalog` on Spark (:mod:`.spark`, the one
module that does I/O and imports pyspark), mapping the pure :mod:`.evaluate` over the
rows, and writes a report (:mod:`.report`). docs/pipeline.md.
"""
