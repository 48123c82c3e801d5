#!/usr/bin/env bash
# Installs the pinned components of the local stack into $SEGUE_CACHE: those named
# (all.sh kafka kube ...), or every one. `make demo` names only what the show runs
# (Makefile, DEMO_PARTS); `make stack` installs them all for the tests.
# Idempotent: each script returns at once when its stamp is present.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
parts=(kafka kube etcd helm toxiproxy prometheus kafka-tools spark-jars)
[ "$#" -gt 0 ] && parts=("$@")
for part in "${parts[@]}"; do
  [ -f "$here/$part.sh" ] || { echo "segue: no stack component named '$part' (stack/install/*.sh)" >&2; exit 2; }
done
command -v go >/dev/null || { echo "segue: Go is needed to build Kubernetes, etcd, helm, toxiproxy and Prometheus" >&2; exit 1; }
command -v mvn >/dev/null || { echo "segue: Maven is needed to resolve Kafka's jars" >&2; exit 1; }
command -v java >/dev/null || { echo "segue: Java 17 is needed to run Kafka" >&2; exit 1; }
for part in "${parts[@]}"; do
  bash "$here/$part.sh"
done
