#!/usr/bin/env bash
# The assignor benchmark (docs/benchmarks.md, "Assignor"): builds the Java harness around
# Kafka Streams 4.3.1's HighAvailabilityTaskAssignor with Maven (jars cached outside the
# checkout), then runs both assignors on the same cases. Extra arguments go to the driver,
# e.g. --quick or --markdown FILE.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
m2="${SEGUE_CACHE:-$HOME/.cache/segue}/m2"
python="${PYTHON:-$root/.venv/bin/python}"
mvn -q -B -Dmaven.repo.local="$m2" -f "$root/bench/assignor/java/pom.xml" \
  package dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
cd "$root"
exec "$python" -m bench.assignor.run "$@"
