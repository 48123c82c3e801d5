#!/usr/bin/env bash
# Builds the Prometheus server and promtool from the Go module proxy (no web UI assets:
# the tests use the HTTP API). promtool unit-tests the chart's alert rules
# (tests/monitoring); the server scrapes the operator and the app pods in the e2e.
source "$(dirname "$0")/common.sh"
ldflags="-X github.com/prometheus/common/version.Version=${PROMETHEUS_VERSION#v0.}"
for name in prometheus promtool; do
  VERSION_FLAG=--version go_binary "$name" "$name" github.com/prometheus/prometheus \
    "$PROMETHEUS_VERSION" "github.com/prometheus/prometheus/cmd/$name" 1.25 "$ldflags"
done
