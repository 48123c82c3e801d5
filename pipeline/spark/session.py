"""The SparkSession ``segue simulate`` runs on: offline, quiet, on this Python.

On a ``local`` master everything stays on this machine: no UI server, the driver on
127.0.0.1 (a laptop's hostname may not resolve), and the Python workers are this very
interpreter (``PYSPARK_PYTHON``), so executors import the same ``segue``. Under
``spark-submit`` (``PYSPARK_GATEWAY_PORT`` set) the master comes from spark-submit
unless one is given here. Jars (the Kafka connector) are local files (``spark.jars``):
``SEGUE_SPARK_JARS`` (a folder or a comma list), else the folder ``make`` resolves into
``$SEGUE_CACHE`` (stack/install/spark-jars.sh); ``packages`` (Maven coordinates) are
resolved by Spark itself through Ivy, which needs a reachable repository.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import pyspark
from pyspark.sql import SparkSession

APP_NAME = "segue-simulate"
LOG_CONFIG = Path(__file__).with_name("log4j2.properties")  # errors only
KAFKA_CONNECTOR = f"org.apache.spark:spark-sql-kafka-0-10_2.13:{pyspark.__version__}"
# local, local[4], local[*], local[4,2], local-cluster[..]; spark://, k8s://, yarn
MASTER = re.compile(r"^(local(\[(\*|\d+)(,\d+)?\])?|local-cluster\[.+\]|spark://.+|k8s://.+|yarn)$")


def under_spark_submit() -> bool:
    return "PYSPARK_GATEWAY_PORT" in os.environ


def cached_jars() -> Path:
    cache = Path(os.environ.get("SEGUE_CACHE") or Path.home() / ".cache" / "segue")
    return cache / f"spark-jars-{pyspark.__version__}"


def jars() -> list[str]:
    """The local jars to hand Spark: SEGUE_SPARK_JARS, else make's cache, else none."""
    given = os.environ.get("SEGUE_SPARK_JARS", "")
    if given and Path(given).is_dir():
        return sorted(str(p) for p in Path(given).glob("*.jar"))
    if given:
        return [j for j in given.split(",") if j]
    folder = cached_jars()
    if (folder / ".installed").exists():
        return sorted(str(p) for p in folder.glob("*.jar"))
    return []


def has_kafka_connector(jar_list: Sequence[str], packages: Sequence[str]) -> bool:
    names = [Path(j).name for j in jar_list] + list(packages)
    return any("spark-sql-kafka" in n for n in names)


def build(
    master: str | None, packages: Sequence[str] = (), given: Mapping[str, str] | None = None
) -> SparkSession:
    """A SparkSession (or the one spark-submit made) with Segue's settings; ``given``
    (``--conf``) wins over them."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # pyspark warns on import of pandas 3 (ortools brings it); nothing here uses pandas
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    builder = SparkSession.builder.appName(APP_NAME)
    if master is None and not under_spark_submit():
        master = "local[*]"
    if master is not None:
        builder = builder.master(master)
    settings = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",  # ours is in .progress
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "8",  # the summary is a few rows per policy
    }
    if master is not None and master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # before the JVM starts
        settings |= {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}
    if not under_spark_submit():
        settings["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile={LOG_CONFIG}"
    found = jars()
    if found:
        settings["spark.jars"] = ",".join(found)
    if packages:
        settings["spark.jars.packages"] = ",".join(packages)
        settings["spark.jars.ivy"] = str(cached_jars().parent / "ivy")
    for key, value in (settings | dict(given or {})).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
