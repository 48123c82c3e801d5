#!/usr/bin/env bash
# Builds one benchmark's Maven project against Kafka Streams from Maven Central (jars
# cached outside the checkout, in $SEGUE_CACHE/m2) and runs its Python driver:
#   bench/java.sh <bench folder> <driver module> [driver arguments...]
# Used by bench/assignor/run.sh and bench/kstreams/run.sh (docs/benchmarks.md).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
folder="$1" module="$2"
shift 2
m2="${SEGUE_CACHE:-$HOME/.cache/segue}/m2"
python="${PYTHON:-$root/.venv/bin/python}"
mvn -q -B -Dmaven.repo.local="$m2" -f "$root/bench/$folder/java/pom.xml" \
  package dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
cd "$root"
exec "$python" -m "$module" "$@"
