"""Where scenario rows come from: a synthetic fleet, files, or a Kafka topic.

Every source yields :class:`~segue.pipeline.rows.ScenarioRow` s (JSON text and where it
came from), so an error can always name its row: a JSON-lines file by line (from 1,
blank lines skipped but counted), a Parquet file by row (from 1; nested columns are
turned back into the JSON a Scenario or HistoryRecord reads), a Kafka record by
partition and offset. Kafka is read in batch mode, earliest to latest offsets, with
Spark's own Kafka source (the ``spark-sql-kafka`` connector jars: .session).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pyspark import RDD
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from segue.pipeline.fleet import fleet
from segue.pipeline.rows import ScenarioRow

TEXT_SUFFIXES = (".jsonl", ".ndjson", ".json")
PARQUET_SUFFIX = ".parquet"


class SourceError(ValueError):
    """The input cannot be read at all (a missing path, an unknown file type)."""


@dataclass(frozen=True)
class KafkaTopic:
    bootstrap: str  # host:port[,host:port...]
    topic: str

    @classmethod
    def parse(cls, url: str) -> KafkaTopic:
        rest = url.removeprefix("kafka://")
        bootstrap, _, topic = rest.partition("/")
        if not bootstrap or not topic or "/" in topic:
            raise SourceError(f"{url}: expected kafka://HOST:PORT/TOPIC")
        return cls(bootstrap, topic)

    def __str__(self) -> str:
        return f"kafka://{self.bootstrap}/{self.topic}"


def synthetic(spark: SparkSession, n: int, seed: int) -> RDD[ScenarioRow]:
    source = f"synthetic(n={n},seed={seed})"
    rows = [ScenarioRow(source, i + 1, s.model_dump_json()) for i, s in enumerate(fleet(n, seed))]
    return spark.sparkContext.parallelize(rows, max(1, min(n, 64)))


def files(path: Path) -> list[Path]:
    """The files a PATH names: itself, or every scenario file below a folder, sorted."""
    if not path.exists():
        raise SourceError(f"{path}: no such file or directory")
    if path.is_file():
        return [path]
    found = sorted(
        p
        for p in path.rglob("*")
        if p.is_file()
        and p.suffix in (*TEXT_SUFFIXES, PARQUET_SUFFIX)
        and not any(part.startswith((".", "_")) for part in p.relative_to(path).parts)
    )
    if not found:
        raise SourceError(f"{path}: no {', '.join((*TEXT_SUFFIXES, PARQUET_SUFFIX))} files")
    return found


def from_files(spark: SparkSession, paths: list[Path]) -> RDD[ScenarioRow]:
    parts = [_parquet(spark, p) if p.suffix == PARQUET_SUFFIX else _text(spark, p) for p in paths]
    return spark.sparkContext.union(parts)


def _text(spark: SparkSession, path: Path) -> RDD[ScenarioRow]:
    source = str(path)
    lines = spark.sparkContext.textFile(path.resolve().as_uri()).zipWithIndex()
    return lines.filter(lambda x: bool(x[0].strip())).map(
        lambda x: ScenarioRow(source, x[1] + 1, x[0])
    )


def _parquet(spark: SparkSession, path: Path) -> RDD[ScenarioRow]:
    source = str(path)
    frame = spark.read.parquet(path.resolve().as_uri())
    text = frame.select(F.to_json(F.struct(*frame.columns)).alias("text"))
    return text.rdd.zipWithIndex().map(lambda x: ScenarioRow(source, x[1] + 1, x[0]["text"]))


def from_kafka(spark: SparkSession, topic: KafkaTopic) -> RDD[ScenarioRow]:
    frame = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", topic.bootstrap)
        .option("subscribe", topic.topic)
        .option("startingOffsets", "earliest")
        .option("endingOffsets", "latest")
        .load()
        .select("partition", "offset", F.col("value").cast("string").alias("text"))
    )
    source = str(topic)
    return frame.rdd.map(
        lambda r: ScenarioRow(
            f"{source} partition {r['partition']}", r["offset"], r["text"] or "", "offset"
        )
    )
