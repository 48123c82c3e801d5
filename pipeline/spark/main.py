"""``segue simulate`` once its arguments are checked: start Spark, read, run, report.

:func:`plan` resolves the source before Spark starts (a missing path is a usage error,
exit 2, not a JVM stack trace); :func:`simulate` builds the session, runs the job,
writes the report and prints one line per bad row. Under spark-submit the session is
spark-submit's and is left running for it to stop.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from py4j.protocol import Py4JError
from pyspark import RDD
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from segue.pipeline.catalog import PolicySpec
from segue.pipeline.report import write_report
from segue.pipeline.rows import ScenarioRow

from . import job, session, sources
from .sources import KafkaTopic

MASTER = session.MASTER


@dataclass(frozen=True)
class Synthetic:
    n: int
    seed: int

    def __str__(self) -> str:
        return f"--synthetic {self.n} --seed {self.seed}"


Source = Synthetic | KafkaTopic | list[Path]


def plan(synthetic: int | None, seed: int, scenarios: str | None) -> Source:
    if synthetic is not None:
        return Synthetic(synthetic, seed)
    if str(scenarios).startswith("kafka://"):
        return KafkaTopic.parse(str(scenarios))
    return sources.files(Path(str(scenarios)))


def read(spark: SparkSession, source: Source) -> RDD[ScenarioRow]:
    if isinstance(source, Synthetic):
        return sources.synthetic(spark, source.n, source.seed)
    if isinstance(source, KafkaTopic):
        return sources.from_kafka(spark, source)
    return sources.from_files(spark, source)


def _error(message: str, code: int) -> int:
    print(f"segue simulate: error: {message}", file=sys.stderr)
    return code


def simulate(
    source: Source,
    policies: Sequence[PolicySpec],
    out: Path,
    *,
    master: str | None = None,
    packages: Sequence[str] = (),
    settings: Mapping[str, str] | None = None,
) -> int:
    if isinstance(source, KafkaTopic) and not session.has_kafka_connector(session.jars(), packages):
        return _error(
            f"reading {source} needs the Kafka connector jars: run stack/install/spark-jars.sh, "
            f"set SEGUE_SPARK_JARS, or pass --packages {session.KAFKA_CONNECTOR}",
            2,
        )
    started = time.monotonic()
    try:
        spark = session.build(master, packages, settings or {})
    except (PySparkException, Py4JError, OSError, RuntimeError) as exc:
        return _error(f"Spark did not start (master {master or 'local[*]'}): {_first(exc)}", 2)
    try:
        output = job.run(spark, read(spark, source), policies, out)
    except (PySparkException, Py4JError) as exc:
        return _error(f"reading {_name(source)} failed: {_first(exc)}", 1)
    finally:
        if not session.under_spark_submit():
            spark.stop()
    if output.units == 0:
        return _error(f"{_name(source)}: no scenario rows", 2)
    write_report(out / "report.html", output.results, output.summary, output.errors)
    for f in output.errors:
        under = f" under {f['policy']}" if f["policy"] else ""
        print(f"segue simulate: bad row: {f['where']}{under}: {f['message']}", file=sys.stderr)
    took = time.monotonic() - started
    print(
        f"{output.units} scenarios x {len(policies)} policies in {took:.0f} s: "
        f"{len(output.results)} results, {len(output.errors)} errors; "
        f"{out / 'results'}, {out / 'summary'}, {out / 'errors'}, {out / 'report.html'}"
    )
    return 0


def _name(source: Source) -> str:
    if isinstance(source, list):
        return ", ".join(str(p) for p in source)
    return str(source)


def _first(exc: BaseException) -> str:
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__
