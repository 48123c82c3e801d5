#!/usr/bin/env bash
# Builds etcd from the Go module proxy (Debian's etcd 3.4 is older than what
# Kubernetes 1.34 supports). go.etcd.io/etcd/server/v3 holds etcd's main package.
source "$(dirname "$0")/common.sh"
dest="$SEGUE_CACHE/etcd-$ETCD_VERSION"
if done_stamp "$dest"; then exit 0; fi
log "building etcd $ETCD_VERSION"
mkdir -p "$dest/src" "$dest/bin"
cd "$dest/src"
printf 'module segue.local/etcdbuild\n\ngo 1.24\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" > go.mod
: > go.sum
go build -trimpath -ldflags "-s -w" -o "$dest/bin/etcd" go.etcd.io/etcd/server/v3
"$dest/bin/etcd" --version >&2
mark_done "$dest"
