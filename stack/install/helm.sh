#!/usr/bin/env bash
# Builds helm with `go install` (its module has no replace directives).
source "$(dirname "$0")/common.sh"
dest="$SEGUE_CACHE/helm-$HELM_VERSION"
if done_stamp "$dest"; then exit 0; fi
log "building helm $HELM_VERSION"
mkdir -p "$dest/bin"
GOBIN="$dest/bin" GOFLAGS=-buildvcs=false go install -trimpath \
  -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" \
  "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
"$dest/bin/helm" version --short >&2
mark_done "$dest"
