"""The Spark job: units of rows spread over executors, the pure evaluation mapped over them.

Rows are grouped into units (:func:`~segue.pipeline.evaluate.unit_key`: one scenario
row, or one app's recorded rows), dealt round-robin over ``PARTITIONS_PER_CORE``
partitions per core, so the executors share the work evenly however the input was laid
out (a Kafka topic with one partition, a single file). Each partition runs
:func:`~segue.pipeline.evaluate.evaluate_unit`, the very function a single process
runs, and counts finished units in an accumulator the driver's progress bar reads.
The evaluated rows are persisted once and split into ``results/`` and ``errors/``
(Parquet, explicit schemas: .schema, one file each); the summary is Spark SQL
over ``results``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark import RDD, StorageLevel
from pyspark.sql import DataFrame, SparkSession

from segue.pipeline.catalog import PolicySpec
from segue.pipeline.evaluate import Evaluated, evaluate_unit, unit_key
from segue.pipeline.rows import Failure, Result, ScenarioRow

from . import schema
from .progress import watching
from .summary import summarise

# Partitions per core: enough that a few slow scenarios (a big app replayed under Segue's
# core takes seconds) do not leave a core idle at the end, few enough that Spark's cost
# per task (a Python worker round trip, paid again by every pass over the rows) stays
# small: one partition per scenario cost 108 s of 565 on 1,000 scenarios (bench/pipeline).
PARTITIONS_PER_CORE = 16


@dataclass
class Output:
    """What the run wrote, collected on the driver for the report (small: rows per run)."""

    results: list[dict[str, Any]]
    summary: list[dict[str, Any]]
    errors: list[dict[str, Any]]
    units: int


def run(
    spark: SparkSession, rows: RDD[ScenarioRow], policies: Sequence[PolicySpec], out: Path
) -> Output:
    units = rows.map(lambda r: (unit_key(r), r)).groupByKey().values().map(list)
    indexed = units.zipWithIndex().map(lambda x: (x[1], x[0])).persist(StorageLevel.MEMORY_AND_DISK)
    total = indexed.count()
    if total == 0:
        indexed.unpersist()
        return Output([], [], [], 0)
    slots = min(total, PARTITIONS_PER_CORE * spark.sparkContext.defaultParallelism)
    spread = indexed.partitionBy(slots, lambda i: int(i) % slots).values()
    done = spark.sparkContext.accumulator(0)
    specs = list(policies)

    def work(part: Iterable[list[ScenarioRow]]) -> Iterator[Evaluated]:
        for unit in part:
            yield from evaluate_unit(unit, specs)
            done.add(1)

    evaluated = spread.mapPartitions(work).persist(StorageLevel.MEMORY_AND_DISK)
    with watching(total, lambda: int(done.value)):
        evaluated.count()  # the simulations: everything below reads the persisted rows
    results = _frame(spark, evaluated, Result, schema.RESULTS)
    errors = _frame(spark, evaluated, Failure, schema.FAILURES)
    summary = summarise(spark, results).cache()
    output = Output(
        results=[r.asDict(recursive=True) for r in results.collect()],
        summary=[r.asDict(recursive=True) for r in summary.collect()],
        errors=[r.asDict(recursive=True) for r in errors.collect()],
        units=total,
    )
    for name, frame in (("results", results), ("errors", errors), ("summary", summary)):
        frame.write.mode("overwrite").parquet(str(out / name))
    for frame in (results, errors, summary):
        frame.unpersist()
    evaluated.unpersist()
    indexed.unpersist()
    return output


def _frame(spark: SparkSession, rows: RDD[Evaluated], cls: type, struct: Any) -> DataFrame:
    """Rows of one kind, sorted, in one partition and cached: written, summarised and
    collected from the JVM's copy (a run's results are a few rows per scenario)."""
    kept = rows.filter(lambda x: isinstance(x, cls)).map(schema.row)
    frame = spark.createDataFrame(kept, struct).coalesce(1)
    return frame.sortWithinPartitions("source", "row", "policy").cache()
