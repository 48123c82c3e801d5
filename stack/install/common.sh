# Sourced by the install scripts: cache layout and a stamp helper.
# Everything built or downloaded lives under $SEGUE_CACHE (default ~/.cache/segue),
# outside the checkout, so a second run and a fresh clone on the same machine reuse it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"
SEGUE_CACHE="${SEGUE_CACHE:-$HOME/.cache/segue}"
mkdir -p "$SEGUE_CACHE"
# Go downloads and build artefacts stay inside the cache too, so deleting
# $SEGUE_CACHE gives an honest cold run.
export GOMODCACHE="$SEGUE_CACHE/go/mod"
export GOCACHE="$SEGUE_CACHE/go/build"
export GOFLAGS="-mod=mod -buildvcs=false"
export GOTOOLCHAIN=local
export CGO_ENABLED=0

log() { printf '[segue-stack] %s\n' "$*" >&2; }

# done_stamp DIR: true when DIR holds a finished install (written last, so a
# half-finished build is redone rather than trusted).
done_stamp() { [ -f "$1/.installed" ]; }
mark_done() { date -u +%FT%TZ > "$1/.installed"; }
