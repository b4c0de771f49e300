#!/bin/sh
# Changes the compose deployment's service replicas one at a time, so that the proxy always has
# healthy replicas to send requests to: no request fails during a rollout or a change of scale.
#
#   deploy/rollout.sh                 replace every replica (new image or new .env), same count
#   deploy/rollout.sh --build         build the image first, then replace every replica
#   deploy/rollout.sh --scale N       only change the count to N (added or retired one by one)
#   deploy/rollout.sh --build --scale N   both: replace every replica and end with N
#   npm run deploy:rollout -- [options]   the same
#
# One replica is replaced thus: a new one is started from the current image and configuration;
# once Docker reports it healthy (its process answers) and its /ready answers 200 (it reads the
# catalogue: engine reachable, key accepted, index there), the script waits for the proxy to have
# re-resolved the service name (POOL_WAIT_S, default 6: nginx re-resolves every 5 s), then stops an
# old one (SIGTERM: it finishes what it serves; the proxy retries elsewhere a request it can no
# longer send there) and removes it. A new replica that is not healthy and ready within
# HEALTH_TIMEOUT_S (default 120) is removed and the rollout stops with exit 1, leaving the old
# replicas serving: a release or configuration that cannot read the catalogue replaces none.
#
# Compose is called as DOCKER_COMPOSE (default `docker compose`), e.g.
#   DOCKER_COMPOSE="docker compose -p quotes-staging" deploy/rollout.sh --scale 3
# New replicas are made with `up --no-deps --no-recreate`: the replicas already running are never
# recreated by Compose (which would stop all of them at once), and the one-shot jobs do not re-run.
set -eu

DC="${DOCKER_COMPOSE:-docker compose}"
SERVICE="${ROLLOUT_SERVICE:-service}"
POOL_WAIT_S="${POOL_WAIT_S:-6}"
HEALTH_TIMEOUT_S="${HEALTH_TIMEOUT_S:-120}"
STOP_TIMEOUT_S="${STOP_TIMEOUT_S:-15}"

usage() {
  echo "usage: $0 [--build] [--scale N]   (N: 1 or more replicas)" >&2
  exit 2
}

build=0
replace=1
target=""
while [ "$#" -gt 0 ]; do
  case "$1" in
    --build) build=1 ;;
    --scale)
      [ "$#" -ge 2 ] || usage
      target="$2"
      shift
      ;;
    --scale=*) target="${1#--scale=}" ;;
    -h | --help) usage ;;
    *) usage ;;
  esac
  shift
done
if [ -n "$target" ]; then
  case "$target" in '' | *[!0-9]*) usage ;; esac
  [ "$target" -ge 1 ] || usage
  [ "$build" = 1 ] || replace=0
fi

log() { echo "[rollout] $(date -u +%H:%M:%S) $*"; }

# Every container of the service, running or not, oldest first.
containers() {
  # shellcheck disable=SC2086
  containers_ids="$($DC ps -a -q "$SERVICE")"
  [ -n "$containers_ids" ] || return 0
  # shellcheck disable=SC2086
  docker inspect -f '{{.Created}} {{.Id}}' $containers_ids | sort | cut -d' ' -f2
}

count() { containers | grep -c . || true; }

short() { echo "$1" | cut -c1-12; }

# The /ready answer of replica $1, asked from inside it (replicas publish no port); fails unless 200.
ready_of() {
  docker exec "$1" node -e "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/ready', { signal: AbortSignal.timeout(3000) }).then(async (r) => { process.stdout.write(r.status + ' ' + (await r.text()).slice(0, 200)); process.exit(r.ok ? 0 : 1); }, (e) => { process.stdout.write(String(e.message)); process.exit(1); })" 2>/dev/null
}

# Starts one more replica and waits until it is healthy and ready, and the proxy can know of it.
# (Functions share the script's variables: theirs are prefixed, so no caller's loop is disturbed.)
add_one() {
  add_before="$(containers)"
  add_n="$(echo "$add_before" | grep -c . || true)"
  # shellcheck disable=SC2086
  $DC up -d --no-deps --no-recreate --scale "$SERVICE=$((add_n + 1))" "$SERVICE" >/dev/null 2>&1 || {
    # shellcheck disable=SC2086
    $DC up -d --no-deps --no-recreate --scale "$SERVICE=$((add_n + 1))" "$SERVICE"
    exit 1
  }
  new=""
  for add_id in $(containers); do
    echo "$add_before" | grep -q "^$add_id\$" || new="$add_id"
  done
  [ -n "$new" ] || { log "Compose started no new replica"; exit 1; }
  log "started $(short "$new"), waiting for it to be healthy and ready"
  add_waited=0
  while :; do
    add_state="$(docker inspect -f '{{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{end}}' "$new")"
    case "$add_state" in
      "running healthy")
        add_ready="$(ready_of "$new")" && break
        add_state="running healthy, not ready: $add_ready"
        ;;
      running*) ;;
      *)
        log "$(short "$new") is $add_state: removed; the old replicas keep serving"
        docker rm -f "$new" >/dev/null
        exit 1
        ;;
    esac
    if [ "$add_waited" -ge "$HEALTH_TIMEOUT_S" ]; then
      log "$(short "$new") not healthy and ready after ${HEALTH_TIMEOUT_S} s ($add_state): removed; the old replicas keep serving"
      docker logs --tail 20 "$new" >&2 || true
      docker rm -f "$new" >/dev/null
      exit 1
    fi
    sleep 1
    add_waited=$((add_waited + 1))
  done
  log "$(short "$new") healthy and ready; waiting ${POOL_WAIT_S} s for the proxy to re-resolve '$SERVICE'"
  sleep "$POOL_WAIT_S"
}

retire() {
  log "retiring $(short "$1")"
  docker stop -t "$STOP_TIMEOUT_S" "$1" >/dev/null
  docker rm "$1" >/dev/null
}

start=$(date +%s)
if [ "$build" = 1 ]; then
  log "building the image"
  # shellcheck disable=SC2086
  $DC build "$SERVICE"
fi

old="$(containers)"
current="$(echo "$old" | grep -c . || true)"
[ "$current" -ge 1 ] || { log "no '$SERVICE' container: start the deployment first (docker compose up -d)"; exit 1; }
[ -n "$target" ] || target="$current"
log "$current replica(s) now; $target wanted$([ "$replace" = 1 ] && echo ', each replaced')"

if [ "$replace" = 1 ]; then
  # One new for one old, oldest first; extra new ones when growing, extra old ones retired at the end.
  for old_id in $old; do
    if [ "$(count)" -le "$target" ]; then add_one; fi
    retire "$old_id"
  done
fi
while [ "$(count)" -lt "$target" ]; do add_one; done
while [ "$(count)" -gt "$target" ]; do
  retire "$(containers | head -n 1)"
done
log "done in $(($(date +%s) - start)) s: $(count) replica(s)"
