#!/usr/bin/env bash
# Resolves Kafka's command-line tools from Maven Central (kafka-tools/pom.xml), for the
# kafka-*.sh wrappers bin.sh puts in the virtualenv.
source "$(dirname "$0")/common.sh"
dest="$SEGUE_CACHE/kafka-tools-$KAFKA_VERSION"
if done_stamp "$dest"; then exit 0; fi
log "resolving Apache Kafka's tools $KAFKA_VERSION from Maven Central"
rm -rf "$dest/libs"
mkdir -p "$dest/libs"
mvn -B -q -f "$here/kafka-tools/pom.xml" \
  -Dmaven.repo.local="$SEGUE_CACHE/m2" \
  -Dkafka.version="${KAFKA_VERSION}" \
  dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$dest/libs"
ls "$dest/libs" | grep -q "^kafka-tools-$KAFKA_VERSION.jar$" || { log "kafka-tools-$KAFKA_VERSION.jar missing"; exit 1; }
mark_done "$dest"
