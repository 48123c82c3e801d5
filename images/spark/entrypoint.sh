#!/usr/bin/env bash
# The Spark image's entry point (images/spark/Dockerfile). Spark on Kubernetes starts
# its pods with the argument `driver` or `executor` and the SPARK_* environment used
# below, and leaves it to the image to start the JVM; anything else (`segue simulate
# ...`) runs as given. The two branches follow the entrypoint.sh of Spark's own images
# (resource-managers/kubernetes/docker in the Spark source, Apache-2.0), with pyspark's
# pip layout for SPARK_HOME and the Kafka connector jars on the executors' classpath.
set -euo pipefail
SPARK_HOME="${SPARK_HOME:-$(python -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')}"
JAVA_HOME="${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}"
export SPARK_HOME JAVA_HOME
export PYSPARK_PYTHON="${PYSPARK_PYTHON:-$(command -v python)}"
export PYSPARK_DRIVER_PYTHON="${PYSPARK_DRIVER_PYTHON:-$PYSPARK_PYTHON}"

# SPARK_JAVA_OPT_0, SPARK_JAVA_OPT_1, ...: the executor's JVM options, in order.
java_opts() {
  env | grep '^SPARK_JAVA_OPT_' | sort -t_ -k4 -n | sed 's/^[^=]*=//' || true
}

case "${1:-}" in
  driver)
    shift
    exec "$SPARK_HOME/bin/spark-submit" \
      --conf "spark.driver.bindAddress=${SPARK_DRIVER_BIND_ADDRESS}" \
      --conf "spark.executorEnv.SPARK_DRIVER_POD_IP=${SPARK_DRIVER_BIND_ADDRESS}" \
      --deploy-mode client "$@"
    ;;
  executor)
    shift
    mapfile -t opts < <(java_opts)
    exec "$JAVA_HOME/bin/java" "${opts[@]}" \
      -Xms"${SPARK_EXECUTOR_MEMORY}" -Xmx"${SPARK_EXECUTOR_MEMORY}" \
      -cp "$SPARK_HOME/jars/*:${SEGUE_SPARK_JARS:-/nonexistent}/*:${SPARK_CLASSPATH:-}" \
      org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend \
      --driver-url "${SPARK_DRIVER_URL}" \
      --executor-id "${SPARK_EXECUTOR_ID}" \
      --cores "${SPARK_EXECUTOR_CORES}" \
      --app-id "${SPARK_APPLICATION_ID}" \
      --hostname "${SPARK_EXECUTOR_POD_IP}" \
      --resourceProfileId "${SPARK_RESOURCE_PROFILE_ID}" \
      --podName "${SPARK_EXECUTOR_POD_NAME}"
    ;;
  *)
    exec "$@"
    ;;
esac
