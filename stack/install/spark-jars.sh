#!/usr/bin/env bash
# Resolves the jars Spark's Kafka source needs (`segue simulate --scenarios kafka://...`)
# into $SEGUE_CACHE/spark-jars-<version>, where segue.pipeline.spark.session finds them
# and hands them to Spark as spark.jars: offline at run time. Only the four jars
# pyspark's jars/ lacks, each without its dependencies (-Dtransitive=false is not
# enough for the connector's test-jar dependencies, so each is copied by name); the
# rest of its runtime closure (scala-parallel-collections, jsr305, zstd, lz4, snappy,
# slf4j) ships inside pyspark.
source "$(dirname "$0")/common.sh"
dest="$SEGUE_CACHE/spark-jars-$SPARK_VERSION"
if done_stamp "$dest"; then exit 0; fi
log "resolving Spark $SPARK_VERSION's Kafka connector from Maven Central"
rm -rf "$dest"
mkdir -p "$dest"
for artifact in \
  "org.apache.spark:spark-sql-kafka-0-10_2.13:$SPARK_VERSION" \
  "org.apache.spark:spark-token-provider-kafka-0-10_2.13:$SPARK_VERSION" \
  "org.apache.kafka:kafka-clients:$SPARK_KAFKA_CLIENTS_VERSION" \
  "org.apache.commons:commons-pool2:$SPARK_COMMONS_POOL2_VERSION"; do
  mvn -B -q -Dmaven.repo.local="$SEGUE_CACHE/m2" \
    dependency:copy -Dartifact="$artifact" -DoutputDirectory="$dest" -Dmdep.overWriteReleases=true
done
count=$(find "$dest" -name '*.jar' | wc -l)
[ "$count" -eq 4 ] || { log "expected 4 jars in $dest, found $count"; exit 1; }
mark_done "$dest"
