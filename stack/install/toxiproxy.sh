#!/usr/bin/env bash
# Builds toxiproxy-server (Shopify's TCP proxy with latency and cut-off "toxics",
# driven over HTTP) from the Go module proxy. The fault suite puts it between one
# worker and the broker (tests/faults/test_network.py).
source "$(dirname "$0")/common.sh"
go_binary toxiproxy toxiproxy-server github.com/Shopify/toxiproxy/v2 "$TOXIPROXY_VERSION" \
  github.com/Shopify/toxiproxy/v2/cmd/server 1.23 \
  "-X github.com/Shopify/toxiproxy/v2.Version=$TOXIPROXY_VERSION"
