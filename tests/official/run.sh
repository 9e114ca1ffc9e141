#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, the version
# pinned in package-lock.json) against mcpl-fixture-server over Streamable HTTP, and its
# client scenarios against mcpl-host (driven by host_client.py), once per
# MCP revision the SDK serves: `--requirements 2025-11-25` (the legacy era: initialize and
# sessions) and `--requirements 2026-07-28` (the modern era: no handshake, per-request
# `_meta`), each with its baseline of expected failures (baseline-REVISION.yml).
#
#   bash tests/official/run.sh
#
# Needs node and npm; installs the suite with `npm ci` into tests/official/node_modules,
# with a pinned Node 22 from npm beside it (the suite needs Node >= 22; the machine's node
# only runs npm). A requirement set runs exactly the scenarios its revision requires, frozen
# at its release; scenarios of extensions and pending ones run too but are not scored. The
# run exits non-zero when a scored scenario not in the baseline fails, or one in it passes
# (a stale entry: remove it). Per-scenario checks are written to
# tests/official/results/REVISION/ (git-ignored).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

command -v node >/dev/null || { echo "run.sh: node is required (>= 20)" >&2; exit 2; }
command -v npm >/dev/null || { echo "run.sh: npm is required" >&2; exit 2; }

echo "== official suite: npm ci (node $(node --version), npm $(npm --version))"
npm ci --prefix "$here" --no-audit --no-fund --loglevel=error
# The suite's own shebang finds the pinned Node 22 first.
export PATH="$here/node_modules/.bin:$PATH"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 22 ]; then
    echo "run.sh: node $(node --version) from node_modules is too old (npm did not run the node package's install script?); the suite needs node >= 22" >&2
    exit 2
fi
suite="$here/node_modules/.bin/conformance"
echo "suite: @modelcontextprotocol/conformance $("$suite" --version) on node $(node --version)"

echo "== build mcpl-fixture-server and mcpl-host"
cargo build --quiet -p mcpl-tests --bin mcpl-fixture-server -p mcpl-host --bin mcpl-host
server_bin="${CARGO_TARGET_DIR:-$root/target}/debug/mcpl-fixture-server"
[ -x "$server_bin" ] || { echo "run.sh: $server_bin was not built" >&2; exit 2; }
export MCPL_HOST="${CARGO_TARGET_DIR:-$root/target}/debug/mcpl-host"
[ -x "$MCPL_HOST" ] || { echo "run.sh: $MCPL_HOST was not built" >&2; exit 2; }

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

rm -rf "$here/results"
for revision in 2025-11-25 2026-07-28; do
    echo "== conformance server --requirements $revision --expected-failures baseline-$revision.yml"
    status=0
    "$suite" server --url "$url" --requirements "$revision" \
        --expected-failures "$here/baseline-$revision.yml" -o "$here/results/$revision" || status=$?
    if ! kill -0 "$server_pid" 2>/dev/null; then
        echo "run.sh: the fixture server died during the $revision run; its stderr:" >&2
        cat "$work/server.stderr" >&2
        exit 1
    fi
    if [ "$status" -ne 0 ]; then
        echo "run.sh: the official suite failed for $revision (exit $status); the fixture server's stderr:" >&2
        cat "$work/server.stderr" >&2
        exit "$status"
    fi
done

# The client side: the suite serves each scenario's mock server and runs host_client.py,
# which drives mcpl-host (the client under test) through its console.
for revision in 2025-11-25 2026-07-28; do
    echo "== conformance client --requirements $revision --expected-failures baseline-client-$revision.yml"
    status=0
    "$suite" client --command "python3 $here/host_client.py" --requirements "$revision" \
        --expected-failures "$here/baseline-client-$revision.yml" \
        -o "$here/results/client-$revision" || status=$?
    if [ "$status" -ne 0 ]; then
        echo "run.sh: the official suite failed the host for $revision (exit $status)" >&2
        exit "$status"
    fi
done
echo "== official suite: every scored scenario of both revisions, server and client, passed or is in its baseline"
