#!/usr/bin/env bash
# Installs this directory's pinned npm packages (the MCP Inspector, 1.x and 2.x, and the
# official MCP TypeScript SDK) into tests/inspector/node_modules, once: `npm ci` from
# package-lock.json, again only when the lock changed. Safe to run concurrently (a lock
# serialises it). The surface host's TypeScript interop test (surface/tests/typescript_sdk.rs)
# calls it on first use; run.sh runs `npm ci` itself.
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
# On node 20, npm warns EBADENGINE for the Inspectors' engines fields; --loglevel=error hides it.
npm ci --prefix "$here" --no-audit --no-fund --loglevel=error
cp "$here/package-lock.json" "$marker"
echo "npm packages ready: $here/node_modules"
