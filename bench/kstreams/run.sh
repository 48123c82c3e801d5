#!/usr/bin/env bash
# Side by side with Kafka Streams (docs/benchmarks.md): builds the Java WordCount around
# Kafka Streams 4.3.1, then runs both sides on one local stack. Extra arguments go to the
# driver, e.g. --markdown FILE.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/../java.sh" kstreams bench.kstreams.run "$@"
