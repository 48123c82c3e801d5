#!/usr/bin/env bash
# Builds toxiproxy-server (Shopify's TCP proxy with latency and cut-off "toxics",
# driven over HTTP) from the Go module proxy. The fault suite puts it between one
# worker and the broker (tests/faults/test_network.py). A build module, as for etcd,
# so the binary gets its own name and the version ldflag.
source "$(dirname "$0")/common.sh"
dest="$SEGUE_CACHE/toxiproxy-$TOXIPROXY_VERSION"
if done_stamp "$dest"; then exit 0; fi
log "building toxiproxy $TOXIPROXY_VERSION"
mkdir -p "$dest/src" "$dest/bin"
cd "$dest/src"
printf 'module segue.local/toxiproxybuild\n\ngo 1.23\n\nrequire github.com/Shopify/toxiproxy/v2 %s\n' \
  "$TOXIPROXY_VERSION" > go.mod
: > go.sum
go build -trimpath -ldflags "-s -w -X github.com/Shopify/toxiproxy/v2.Version=$TOXIPROXY_VERSION" \
  -o "$dest/bin/toxiproxy-server" github.com/Shopify/toxiproxy/v2/cmd/server
"$dest/bin/toxiproxy-server" -version >&2
mark_done "$dest"
