#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager and kubectl from the Go module
# proxy. k8s.io/kubernetes points its staging modules at ./staging/src; a module
# that depends on it must replace each with the published k8s.io/<name> v0.<minor>.<patch>,
# so the replace lines are generated from the proxy's own go.mod.
source "$(dirname "$0")/common.sh"
dest="$SEGUE_CACHE/kubernetes-$KUBERNETES_VERSION"
if done_stamp "$dest"; then exit 0; fi
log "building Kubernetes $KUBERNETES_VERSION (kube-apiserver, kube-controller-manager, kubectl); cold: about 7 min on 2 cores"
work="$dest/src"
mkdir -p "$work" "$dest/bin"
cd "$work"
staging_version="v0.${KUBERNETES_VERSION#v1.}"
go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" >/dev/null
upstream_mod="$GOMODCACHE/cache/download/k8s.io/kubernetes/@v/$KUBERNETES_VERSION.mod"
{
  echo "module segue.local/kubebuild"
  echo
  echo "go $(awk '$1 == "go" {print $2; exit}' "$upstream_mod")"
  echo
  echo "require k8s.io/kubernetes $KUBERNETES_VERSION"
  echo
  echo "replace ("
  awk -v v="$staging_version" '$2 == "=>" && $3 ~ /^\.\/staging\/src\// {printf "\t%s => %s %s\n", $1, $1, v}' "$upstream_mod"
  echo ")"
} > go.mod
: > go.sum
IFS=. read -r major minor _ <<< "${KUBERNETES_VERSION#v}"
pkg=k8s.io/component-base/version
ldflags="-s -w"
for p in "$pkg" k8s.io/client-go/pkg/version; do
  ldflags+=" -X $p.gitVersion=$KUBERNETES_VERSION -X $p.gitMajor=$major -X $p.gitMinor=$minor"
  ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
go build -trimpath -ldflags "$ldflags" -o "$dest/bin/" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kubectl
"$dest/bin/kube-apiserver" --version >&2
mark_done "$dest"
