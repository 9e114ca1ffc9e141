#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, the version
# pinned in package-lock.json) against mcpl-fixture-server over Streamable HTTP.
#
#   bash tests/official/run.sh
#
# Needs node (>= 20) and npm; installs the suite with `npm ci` into tests/official/node_modules.
# Runs every server scenario (`--suite all`: the active ones and the two pending ones,
# json-schema-2020-12 and server-sse-polling) with baseline.yml as the expected failures, so
# it exits non-zero when a scenario not in the baseline fails or one in it passes (stale).
# Per-scenario checks are written to tests/official/results/ (git-ignored).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

command -v node >/dev/null || { echo "run.sh: node is required (>= 20)" >&2; exit 2; }
command -v npm >/dev/null || { echo "run.sh: npm is required" >&2; exit 2; }
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
    echo "run.sh: node $(node --version) is too old; the suite needs node >= 20" >&2
    exit 2
fi

echo "== official suite: npm ci (node $(node --version), npm $(npm --version))"
npm ci --prefix "$here" --no-audit --no-fund --loglevel=error
suite="$here/node_modules/.bin/conformance"
echo "suite: @modelcontextprotocol/conformance $("$suite" --version)"

echo "== build mcpl-fixture-server"
cargo build --quiet -p mcpl-tests --bin mcpl-fixture-server
server_bin="${CARGO_TARGET_DIR:-$root/target}/debug/mcpl-fixture-server"
[ -x "$server_bin" ] || { echo "run.sh: $server_bin was not built" >&2; exit 2; }

work="$(mktemp -d)"
server_pid=""
stop() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap stop EXIT

echo "== start the fixture server on 127.0.0.1:0 (Streamable HTTP)"
# The server prints its URL as stdout's first line once bound; reading it through a process
# substitution waits for exactly that, with no polling.
exec 3< <(exec "$server_bin" --http 127.0.0.1:0 2>"$work/server.stderr")
server_pid=$!
if ! IFS= read -r -t 60 url <&3 || [ -z "$url" ]; then
    echo "run.sh: the fixture server did not print its URL; its stderr:" >&2
    cat "$work/server.stderr" >&2
    exit 1
fi
echo "server: $url (pid $server_pid)"

echo "== conformance server --suite all --expected-failures baseline.yml"
rm -rf "$here/results"
status=0
"$suite" server --url "$url" --suite all \
    --expected-failures "$here/baseline.yml" -o "$here/results" || status=$?

if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "run.sh: the fixture server died during the run; its stderr:" >&2
    cat "$work/server.stderr" >&2
    exit 1
fi
if [ "$status" -ne 0 ]; then
    echo "run.sh: the official suite failed (exit $status); the fixture server's stderr:" >&2
    cat "$work/server.stderr" >&2
    exit "$status"
fi
echo "== official suite: every scenario passed or is in the baseline"
