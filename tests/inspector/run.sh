#!/usr/bin/env bash
# Runs the official MCP Inspector's CLI mode (@modelcontextprotocol/inspector, the version
# pinned in package-lock.json) against `mcpl-arcade serve --http` with a bearer token
# (issue #16: "the MCP Inspector CLI, given a wrong token, prints the server's message").
#
#   bash tests/inspector/run.sh
#
# Needs node (>= 20) and npm; installs the Inspector with `npm ci` into
# tests/inspector/node_modules. Three runs of `--cli URL --method tools/list`:
#   - the right token: exits 0 and lists the arcade's tools;
#   - a wrong token, then no token: exits non-zero, and what it prints holds the message of
#     the server's own 401 body (read from the server here with a plain request, not
#     written into this script).
# The Inspector's output is kept in tests/inspector/results/ (git-ignored).
#
# Pinned to 1.0.3, the last 1.x: it declares node >= 22.7.5 (npm warns EBADENGINE) but its
# CLI mode runs on node 20, which this check needs; 2.x declares node >= 22.19.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

command -v node >/dev/null || { echo "run.sh: node is required (>= 20)" >&2; exit 2; }
command -v npm >/dev/null || { echo "run.sh: npm is required" >&2; exit 2; }
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
    echo "run.sh: node $(node --version) is too old; the Inspector needs node >= 20" >&2
    exit 2
fi

echo "== inspector: npm ci (node $(node --version), npm $(npm --version))"
# The pinned Inspector's engines field says node >= 22.7.5; its CLI mode runs on 20, so the
# EBADENGINE warning is expected (npm prints it at warn level, which this hides).
npm ci --prefix "$here" --no-audit --no-fund --loglevel=error
pkg="$here/node_modules/@modelcontextprotocol/inspector"
inspector="$pkg/cli/build/cli.js"
echo "inspector: @modelcontextprotocol/inspector $(node -p "require('$pkg/package.json').version")"

echo "== build mcpl-arcade"
cargo build --quiet -p mcpl-games --bin mcpl-arcade
arcade_bin="${CARGO_TARGET_DIR:-$root/target}/debug/mcpl-arcade"
[ -x "$arcade_bin" ] || { echo "run.sh: $arcade_bin was not built" >&2; exit 2; }

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

secret="inspector-$RANDOM$RANDOM"
echo "== start mcpl-arcade serve --http 127.0.0.1:0 with one token and an authorization server"
# The arcade prints `listening on URL` once bound; reading it through a process
# substitution waits for exactly that, with no polling. --authorization-server makes its
# 401s carry `resource_metadata`, as a deployment behind OAuth would.
exec 3< <(exec "$arcade_bin" serve --http 127.0.0.1:0 --token "alice=$secret" \
    --authorization-server https://auth.example 2>"$work/server.stderr")
server_pid=$!
if ! IFS= read -r -t 60 line <&3 || [ "${line#listening on }" = "$line" ]; then
    echo "run.sh: the arcade did not print its listening line; its stderr:" >&2
    cat "$work/server.stderr" >&2
    exit 1
fi
url="${line#listening on }"
echo "server: $url (pid $server_pid)"

rm -rf "$here/results"
mkdir -p "$here/results"
fail() {
    echo "run.sh: $1; the arcade's stderr:" >&2
    cat "$work/server.stderr" >&2
    exit 1
}

# inspect NAME [HEADER…]: the Inspector's tools/list, its stdout, stderr and exit status
# kept under results/NAME.*; sets $status.
inspect() {
    local name="$1"
    shift
    local headers=()
    for h in "$@"; do headers+=(--header "$h"); done
    status=0
    node "$inspector" --cli "$url" --transport http --method tools/list "${headers[@]}" \
        >"$here/results/$name.stdout" 2>"$here/results/$name.stderr" || status=$?
    echo "$status" >"$here/results/$name.status"
}

# refusal HEADER…: what the server itself answers an initialize with these headers: the
# status, WWW-Authenticate and the JSON-RPC error message of its body, one per line.
refusal() {
    node - "$url" "$@" <<'EOF'
const [url, ...headers] = process.argv.slice(2);
const h = { "content-type": "application/json", accept: "application/json, text/event-stream" };
for (const x of headers) { const i = x.indexOf(":"); h[x.slice(0, i).trim()] = x.slice(i + 1).trim(); }
const body = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "run.sh", version: "0" } } };
fetch(url, { method: "POST", headers: h, body: JSON.stringify(body) }).then(async (r) => {
  const text = await r.text();
  let message = "";
  try { message = JSON.parse(text).error.message; } catch {}
  console.log(r.status);
  console.log(r.headers.get("www-authenticate") ?? "");
  console.log(message);
}).catch((e) => { console.error(e); process.exit(1); });
EOF
}

echo "== the right token: tools/list"
inspect right-token "Authorization: Bearer $secret"
[ "$status" -eq 0 ] || { cat "$here/results/right-token.stderr" >&2; fail "the Inspector failed with the right token (exit $status)"; }
tools="$(node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(r.tools.map((t) => t.name).join(" "))' "$here/results/right-token.stdout")" \
    || fail "the Inspector's tools/list output is not a JSON tool list"
[ -n "$tools" ] || fail "the Inspector listed no tools"
echo "tools: $tools"

check_refused() {
    local name="$1" want_error="$2"
    shift 2
    local answer status_code challenge message
    answer="$(refusal "$@")" || fail "the plain request for $name did not get an answer"
    { IFS= read -r status_code; IFS= read -r challenge; IFS= read -r message; } <<<"$answer"
    echo "server: $status_code, WWW-Authenticate: $challenge, message: $message"
    [ "$status_code" = 401 ] || fail "$name: the server answered $status_code, not 401"
    [ -n "$message" ] || fail "$name: the server's 401 body has no JSON-RPC error message"
    case "$challenge" in
        "Bearer resource_metadata=\""*) ;;
        *) fail "$name: WWW-Authenticate does not name the resource metadata: $challenge" ;;
    esac
    if [ "$want_error" = invalid_token ] && [[ "$challenge" != *'error="invalid_token"'* ]]; then
        fail "$name: WWW-Authenticate does not say invalid_token: $challenge"
    fi

    inspect "$name" "$@"
    echo "inspector (exit $status): $(cat "$here/results/$name.stderr")"
    [ "$status" -ne 0 ] || fail "$name: the Inspector exited 0"
    grep -qF -- "$message" "$here/results/$name.stderr" \
        || fail "$name: the Inspector did not print the server's message \"$message\""
}

echo "== a wrong token: the Inspector prints the server's 401 message"
check_refused wrong-token invalid_token "Authorization: Bearer not-$secret"

echo "== no token: the Inspector prints the server's 401 message"
check_refused no-token ""

kill -0 "$server_pid" 2>/dev/null || fail "the arcade died during the run"
echo "== inspector: the right token lists the tools; a wrong or missing one shows the server's message"
