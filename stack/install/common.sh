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

# kafka_jars DEST POM JAR WHAT: the runtime closure of the Maven project POM (Kafka's
# version from versions.env) into DEST/libs, checked to hold JAR and stamped; at once
# when the stamp is there. WHAT says what is being resolved.
kafka_jars() {
  local dest="$1" pom="$2" jar="$3" what="$4"
  if done_stamp "$dest"; then return 0; fi
  log "resolving $what $KAFKA_VERSION from Maven Central"
  rm -rf "$dest/libs"
  mkdir -p "$dest/libs"
  mvn -B -q -f "$pom" \
    -Dmaven.repo.local="$SEGUE_CACHE/m2" \
    -Dkafka.version="${KAFKA_VERSION}" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$dest/libs"
  ls "$dest/libs" | grep -q "^$jar$" || { log "$jar missing"; exit 1; }
  mark_done "$dest"
}

# go_binary DIR NAME MODULE VERSION PACKAGE GO [LDFLAGS]: builds PACKAGE of MODULE@VERSION
# from the Go module proxy into $SEGUE_CACHE/DIR-VERSION/bin/NAME, through a throwaway
# build module (so the binary gets its own name and the flags), checked by running it
# with its version flag ($VERSION_FLAG, default -version) and stamped; at once when the
# stamp is there.
go_binary() {
  local dir="$1" name="$2" module="$3" version="$4" package="$5" go="$6" ldflags="${7:-}"
  local dest="$SEGUE_CACHE/$dir-$version"
  if done_stamp "$dest"; then return 0; fi
  log "building $name $version"
  mkdir -p "$dest/src" "$dest/bin"
  printf 'module segue.local/%sbuild\n\ngo %s\n\nrequire %s %s\n' \
    "$name" "$go" "$module" "$version" > "$dest/src/go.mod"
  : > "$dest/src/go.sum"
  (cd "$dest/src" && go build -trimpath -ldflags "-s -w $ldflags" -o "$dest/bin/$name" "$package")
  "$dest/bin/$name" "${VERSION_FLAG:--version}" >&2
  mark_done "$dest"
}
