#!/usr/bin/env bash
# Resolves Kafka's command-line tools from Maven Central (kafka-tools/pom.xml), for the
# kafka-*.sh wrappers bin.sh puts in the virtualenv.
source "$(dirname "$0")/common.sh"
kafka_jars "$SEGUE_CACHE/kafka-tools-$KAFKA_VERSION" "$here/kafka-tools/pom.xml" \
  "kafka-tools-$KAFKA_VERSION.jar" "Apache Kafka's tools"
