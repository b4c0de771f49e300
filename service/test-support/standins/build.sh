#!/usr/bin/env bash
# Test fixture, not part of the product: makes the images that docker-compose.yml and the
# Dockerfile name available to the compose end-to-end test (service/compose.test.ts) on a machine
# whose Docker engine reaches no image registry.
#
# For each image the stack needs (read from docker-compose.yml and the Dockerfile's NODE_IMAGE):
#   1. already present (a real image, or a stand-in built earlier): kept as it is;
#   2. else pulled, when a registry answers: the real image, as on any developer's machine;
#   3. else a local stand-in is built and tagged with the exact name the files use, from packages:
#      a Debian base made with debootstrap, Node and npm from the npm registry, Redis and nginx
#      from Debian, Meilisearch around a `meilisearch` binary on PATH (or MEILI_BIN).
# Stand-ins behave like the real images where the stack relies on them (commands, users, ports,
# the tools the health checks call); they are not those images. They carry the label
# quotes.test-fixture=stand-in, and `docker image ls --filter label=quotes.test-fixture` lists them.
#
# The base trusts the host's CA bundle, so that a build inside it reaches package registries
# through a proxy that re-signs TLS; the project's Dockerfile needs no such thing.
#
# Usage: service/test-support/standins/build.sh        (root, or a user who may run debootstrap)
# Exit status 0 when every image is present at the end; 1 otherwise, naming what is missing.
# A missing Meilisearch binary is not an error: that image is reported missing and the test
# skips its Meilisearch parts.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../../.." && pwd)"
HERE="$ROOT/service/test-support/standins"
SUITE="${STANDIN_SUITE:-testing}"
MIRROR="${STANDIN_MIRROR:-http://deb.debian.org/debian}"
BASE="quotes-standin-base:$SUITE"
LABEL="quotes.test-fixture=stand-in"

log() { echo "[stand-ins] $*"; }

have() { docker image inspect "$1" >/dev/null 2>&1; }

# Images named by the compose file (k6 runs through the project's own runner instead) and the
# Dockerfile's base image.
images() {
  grep -E '^\s+image:\s' "$ROOT/docker-compose.yml" | sed -E 's/^\s+image:\s*//; s/\s*#.*$//; s/"//g' |
    grep -v -E '^(quotes-service:|grafana/k6:)'
  sed -n -E 's/^ARG NODE_IMAGE=(.+)$/\1/p' "$ROOT/Dockerfile"
}

pullable() {
  timeout 120 docker pull -q "$1" >/dev/null 2>&1
}

ca_bundle() {
  for f in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt; do
    [ -r "$f" ] && { echo "$f"; return; }
  done
}

build_base() {
  have "$BASE" && return 0
  command -v debootstrap >/dev/null || { log "debootstrap is missing (apt-get install debootstrap)"; return 1; }
  local dir
  dir="$(mktemp -d)"
  log "building $BASE: debootstrap --variant=minbase $SUITE"
  debootstrap --variant=minbase "$SUITE" "$dir/rootfs" "$MIRROR" >"$dir/debootstrap.log" 2>&1 || {
    tail -20 "$dir/debootstrap.log"
    rm -rf "$dir"
    return 1
  }
  local ca
  ca="$(ca_bundle)"
  if [ -n "$ca" ]; then
    mkdir -p "$dir/rootfs/etc/ssl/certs"
    cp "$ca" "$dir/rootfs/etc/ssl/certs/ca-certificates.crt"
  fi
  # Mirrors may serve a snapshot whose Release file has expired; the packages are still signed.
  echo 'Acquire::Check-Valid-Until "false";' >"$dir/rootfs/etc/apt/apt.conf.d/99standin-snapshot"
  rm -rf "$dir/rootfs/var/cache/apt/archives/"*.deb "$dir/rootfs/var/lib/apt/lists/"*
  tar -C "$dir/rootfs" -c . | docker import \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    -c "LABEL $LABEL" -c 'CMD ["bash"]' - "$BASE" >/dev/null
  rm -rf "$dir"
}

# Builds <tag> from service/test-support/standins/<kind>.Dockerfile with <context dir>.
build_from() {
  local tag="$1" kind="$2" context="$3"
  docker build -q --label "$LABEL" --build-arg "BASE=$BASE" -t "$tag" \
    -f "$HERE/$kind.Dockerfile" "$context" >/dev/null
}

build_node() {
  local tag="$1" context
  context="$(mktemp -d)"
  # The Node 24 the project pins (installed from the npm registry by npm ci), and npm itself.
  local node_bin
  node_bin="$(readlink -f "$ROOT/node_modules/node/bin/node" 2>/dev/null || true)"
  if [ ! -x "$node_bin" ]; then
    log "node_modules/node is missing: run npm ci first"
    rm -rf "$context"
    return 1
  fi
  cp "$node_bin" "$context/node"
  (cd "$context" && npm pack --silent "npm@${STANDIN_NPM_VERSION:-11}" >/dev/null && mv npm-*.tgz npm.tgz)
  build_from "$tag" node "$context"
  rm -rf "$context"
}

build_meilisearch() {
  local tag="$1" bin="${MEILI_BIN:-}"
  [ -n "$bin" ] || bin="$(command -v meilisearch || true)"
  if [ -z "$bin" ] || [ ! -x "$bin" ]; then
    log "no meilisearch binary on PATH (or MEILI_BIN): $tag not built"
    return 1
  fi
  local context
  context="$(mktemp -d)"
  cp "$(readlink -f "$bin")" "$context/meilisearch"
  build_from "$tag" meilisearch "$context"
  rm -rf "$context"
}

missing=()
for image in $(images | sort -u); do
  if have "$image"; then
    log "$image: present"
    continue
  fi
  if pullable "$image"; then
    log "$image: pulled"
    continue
  fi
  build_base || { missing+=("$image"); continue; }
  started=$SECONDS
  case "$image" in
    node:*) kind=node ;;
    redis:*) kind=redis ;;
    nginx:*) kind=nginx ;;
    getmeili/meilisearch:*) kind=meilisearch ;;
    *) kind="" ;;
  esac
  ok=0
  case "$kind" in
    node) build_node "$image" && ok=1 ;;
    meilisearch) build_meilisearch "$image" && ok=1 ;;
    redis | nginx) build_from "$image" "$kind" "$HERE" && ok=1 ;;
    *) log "$image: no stand-in recipe" ;;
  esac
  if [ "$ok" = 1 ]; then
    log "$image: stand-in built in $((SECONDS - started)) s"
  else
    missing+=("$image")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  log "missing: ${missing[*]}"
  exit 1
fi
