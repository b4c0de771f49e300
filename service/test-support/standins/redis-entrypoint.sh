#!/bin/sh
# Test fixture (see build.sh): what the real redis image's entry point does for a server started
# without a configuration file.
if [ "${1:-}" = "redis-server" ]; then
  shift
  exec redis-server --bind '* -::*' --protected-mode no "$@"
fi
exec "$@"
