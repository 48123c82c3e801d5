"""The summary: one row per policy, Spark SQL over the results.

For each metric of :data:`~segue.pipeline.rows.SUMMARY_METRICS`: the median and the
90th percentile (``percentile``: exact, linear between the closest ranks, as numpy's
default) and the mean; nulls (a run that never balanced) are left out of a metric's
aggregates and counted in ``never_balanced``. Plus the policy's kind and Segue's axes.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession

from segue.pipeline.rows import SEGUE_AXES, SUMMARY_METRICS

VIEW = "segue_results"


def sql() -> str:
    aggregates = [
        f"percentile({m}, 0.5) AS {m}_median, percentile({m}, 0.9) AS {m}_p90, avg({m}) AS {m}_mean"
        for m in SUMMARY_METRICS
    ]
    axes = [f"first({a}) AS {a}" for a in SEGUE_AXES]
    return (
        "SELECT policy, first(policy_kind) AS policy_kind, "
        + ", ".join(axes)
        + ", count(*) AS scenarios,"
        + " count_if(time_to_balance IS NULL) AS never_balanced, "
        + ", ".join(aggregates)
        + f" FROM {VIEW} GROUP BY policy ORDER BY policy"
    )


def summarise(spark: SparkSession, results: DataFrame) -> DataFrame:
    results.createOrReplaceTempView(VIEW)
    return spark.sql(sql())
