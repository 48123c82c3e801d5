#!/usr/bin/env bash
# The assignor benchmark (docs/benchmarks.md, "Assignor"): builds the Java harness around
# Kafka Streams 4.3.1's HighAvailabilityTaskAssignor, then runs both assignors on the same
# cases. Extra arguments go to the driver, e.g. --quick or --markdown FILE.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/../java.sh" assignor bench.assignor.run "$@"
