#!/usr/bin/env bash
# Installs this directory's pinned npm package (the official MCP TypeScript SDK 2.x client,
# @modelcontextprotocol/client) into tests/ts2/node_modules, once: `npm ci` from
# package-lock.json, again only when the lock changed. Safe to run concurrently (a lock
# serialises it). The tests crate's TypeScript 2.x interop test (tests/tests/issue39_ts2.rs)
# calls it on first use, so `cargo test` needs no step of its own.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command -v node >/dev/null || { echo "setup.sh: node is required (>= 20)" >&2; exit 2; }
command -v npm >/dev/null || { echo "setup.sh: npm is required" >&2; exit 2; }
exec 9>"$here/.setup.lock"
flock 9
marker="$here/node_modules/.mcpl-installed"
if [ -f "$marker" ] && cmp -s "$here/package-lock.json" "$marker"; then
  exit 0
fi
npm ci --prefix "$here" --no-audit --no-fund --loglevel=error
cp "$here/package-lock.json" "$marker"
echo "npm packages ready: $here/node_modules"
