#!/bin/sh
# Runs a command with the Meilisearch key the compose key step wrote (deploy/meili-keys.ts):
#   with-meili-key.sh indexer <command...>   exports MEILI_ADMIN_KEY from indexer.key
#   with-meili-key.sh search <command...>    exports MEILI_API_KEY from search.key
# A key already set in the environment wins, so a deployment may pass its own.
set -eu
dir="${MEILI_KEYS_DIR:-/run/meili-keys}"
kind="${1:-}"
[ "$#" -ge 2 ] || { echo "usage: $0 indexer|search <command...>" >&2; exit 2; }
shift
case "$kind" in
  indexer) variable=MEILI_ADMIN_KEY; file="$dir/indexer.key" ;;
  search) variable=MEILI_API_KEY; file="$dir/search.key" ;;
  *) echo "usage: $0 indexer|search <command...>" >&2; exit 2 ;;
esac
eval "current=\${$variable:-}"
if [ -z "$current" ]; then
  [ -r "$file" ] || { echo "$file is missing: run the meili-keys step first (docker compose up meili-keys)" >&2; exit 1; }
  current="$(cat "$file")"
  export "$variable=$current"
fi
exec "$@"
