#!/usr/bin/env bash
# Installs every pinned component of the local stack into $SEGUE_CACHE.
# Idempotent: each script returns at once when its stamp is present.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v go >/dev/null || { echo "segue: Go is needed to build Kubernetes, etcd, helm, toxiproxy and Prometheus" >&2; exit 1; }
command -v mvn >/dev/null || { echo "segue: Maven is needed to resolve Kafka's jars" >&2; exit 1; }
command -v java >/dev/null || { echo "segue: Java 17 is needed to run Kafka" >&2; exit 1; }
bash "$here/kafka.sh"
bash "$here/kube.sh"
bash "$here/etcd.sh"
bash "$here/helm.sh"
bash "$here/toxiproxy.sh"
bash "$here/prometheus.sh"
bash "$here/kafka-tools.sh"
bash "$here/spark-jars.sh"
