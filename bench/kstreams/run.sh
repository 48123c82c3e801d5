#!/usr/bin/env bash
# Side by side with Kafka Streams (docs/benchmarks.md): builds the Java WordCount around
# Kafka Streams 4.3.1 with Maven (jars cached outside the checkout), then runs both sides on
# one local stack. Extra arguments go to the driver, e.g. --markdown FILE.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
m2="${SEGUE_CACHE:-$HOME/.cache/segue}/m2"
python="${PYTHON:-$root/.venv/bin/python}"
mvn -q -B -Dmaven.repo.local="$m2" -f "$root/bench/kstreams/java/pom.xml" \
  package dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
cd "$root"
exec "$python" -m bench.kstreams.run "$@"
