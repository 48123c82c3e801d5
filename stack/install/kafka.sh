#!/usr/bin/env bash
# Resolves the Kafka broker's jars from Maven Central with Maven (pom.xml beside
# this file). Maven's own repository is kept under the cache as well.
source "$(dirname "$0")/common.sh"
kafka_jars "$SEGUE_CACHE/kafka-$KAFKA_VERSION" "$here/kafka/pom.xml" \
  "kafka_2.13-$KAFKA_VERSION.jar" "Apache Kafka"
