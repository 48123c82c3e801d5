#!/usr/bin/env bash
# Builds etcd from the Go module proxy (Debian's etcd 3.4 is older than what
# Kubernetes 1.34 supports). go.etcd.io/etcd/server/v3 holds etcd's main package.
source "$(dirname "$0")/common.sh"
go_binary etcd etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION" go.etcd.io/etcd/server/v3 1.24
