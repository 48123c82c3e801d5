#!/usr/bin/env bash
# Resolves the Kafka broker's jars from Maven Central with Maven (pom.xml beside
# this file). Maven's own repository is kept under the cache as well.
source "$(dirname "$0")/common.sh"
dest="$SEGUE_CACHE/kafka-$KAFKA_VERSION"
if done_stamp "$dest"; then exit 0; fi
log "resolving Apache Kafka $KAFKA_VERSION from Maven Central"
rm -rf "$dest/libs"
mkdir -p "$dest/libs"
mvn -B -q -f "$here/kafka/pom.xml" \
  -Dmaven.repo.local="$SEGUE_CACHE/m2" \
  -Dkafka.version="${KAFKA_VERSION}" \
  dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$dest/libs"
ls "$dest/libs" | grep -q "^kafka_2.13-$KAFKA_VERSION.jar$" || { log "kafka_2.13-$KAFKA_VERSION.jar missing"; exit 1; }
mark_done "$dest"
