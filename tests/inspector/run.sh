#!/usr/bin/env bash
# Runs the official MCP Inspector's CLI mode (@modelcontextprotocol/inspector, the two
# versions pinned in package-lock.json) against `mcpl-arcade serve --http` with a bearer
# token (issue #16: "the MCP Inspector CLI, given a wrong token, prints the server's
# message"), then against the surface host `mcpl-surface serve` over stdio (issue #17:
# tools/list and a call of toolsets--look).
#
#   bash tests/inspector/run.sh
#
# Needs node (>= 20) and npm; installs the Inspectors with `npm ci` into
# tests/inspector/node_modules: 1.0.3, the last 1.x, and 2.12.0 (as `inspector-2`). Both
# declare node >= 22 (1.x for its web UI; 2.x and its undici and commander too), but their
# CLI mode runs on node 20, which is all this check uses. With each, `--cli URL --method
# tools/list`:
#   - the right token: exits 0 and lists the arcade's tools;
#   - a wrong token, then no token: exits non-zero, and what it prints holds the message of
#     the server's own 401 body (read from the server here with a plain request, not
#     written into this script); 2.x needs --stored-auth-only for that (see the end).
# The Inspectors' output is kept in tests/inspector/results/ (git-ignored).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

command -v node >/dev/null || { echo "run.sh: node is required (>= 20)" >&2; exit 2; }
command -v npm >/dev/null || { echo "run.sh: npm is required" >&2; exit 2; }
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
    echo "run.sh: node $(node --version) is too old; the Inspector's CLI needs node >= 20" >&2
    exit 2
fi

echo "== inspector: npm ci (node $(node --version), npm $(npm --version))"
# On node 20, npm warns EBADENGINE for the engines fields above; --loglevel=error hides it.
npm ci --prefix "$here" --no-audit --no-fund --loglevel=error
v1_pkg="$here/node_modules/@modelcontextprotocol/inspector"
v2_pkg="$here/node_modules/inspector-2"
v1="$v1_pkg/cli/build/cli.js"
v2="$v2_pkg/clients/launcher/build/index.js"
for p in "$v1_pkg" "$v2_pkg"; do
    echo "inspector: @modelcontextprotocol/inspector $(node -p "require('$p/package.json').version")"
done

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
exec 3< <(exec "$arcade_bin" serve --in-memory --http 127.0.0.1:0 --token "alice=$secret" \
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

# inspect NAME MAJOR [ARG…]: the Inspector MAJOR.x's tools/list with ARGs added, its
# stdout, stderr and exit status kept under results/NAME.*; sets $status. No TTY (stdin
# from /dev/null, output to files) and a HOME of its own: 2.x keeps a catalog and OAuth
# state under ~/.mcp-inspector.
inspect() {
    local name="$1" major="$2"
    shift 2
    local bin="$v1"
    [ "$major" = 2 ] && bin="$v2"
    status=0
    env -u MCP_AUTO_OPEN_ENABLED HOME="$work/home" \
        node "$bin" --cli "$url" --transport http --method tools/list "$@" </dev/null \
        >"$here/results/$name.stdout" 2>"$here/results/$name.stderr" || status=$?
    echo "$status" >"$here/results/$name.status"
}

# json FILE EXPR: EXPR (of `r`, the JSON in FILE) printed; fails when FILE is not JSON.
json() {
    node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(eval(process.argv[2]))' "$1" "$2"
}

# refusal [HEADER]: what the server itself answers an initialize with this header: the
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

for major in 1 2; do
    echo "== inspector $major.x, the right token: tools/list"
    inspect "right-token-$major" "$major" --header "Authorization: Bearer $secret"
    if [ "$status" -ne 0 ]; then
        cat "$here/results/right-token-$major.stderr" >&2
        fail "the Inspector $major.x failed with the right token (exit $status)"
    fi
    tools="$(json "$here/results/right-token-$major.stdout" 'r.tools.map((t) => t.name).join(" ")')" \
        || fail "the Inspector $major.x's tools/list output is not a JSON tool list"
    [ -n "$tools" ] || fail "the Inspector $major.x listed no tools"
    echo "tools: $tools"
done

# check_refused NAME invalid_token|"" [HEADER]: the server answers 401 with a message and a
# challenge naming its metadata (and invalid_token when asked), and each Inspector prints
# that message: 1.x on stderr as "Failed to connect to MCP server: Streamable HTTP error:
# Error POSTing to endpoint: BODY" (after its deprecation notice), exit 1; 2.x, with
# --stored-auth-only, as {"error":{"code":"auth_required","message":"Error POSTing to
# endpoint: BODY"}} on stderr, exit 3.
check_refused() {
    local name="$1" want_error="$2"
    shift 2
    local headers=() answer status_code challenge message printed
    if [ $# -gt 0 ]; then headers=(--header "$1"); fi
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

    inspect "$name-1" 1 "${headers[@]}"
    printed="$(grep -F 'Failed to connect' "$here/results/$name-1.stderr" || true)"
    echo "inspector 1.x (exit $status): $printed"
    [ "$status" -ne 0 ] || fail "$name: the Inspector 1.x exited 0"
    grep -qF -- "$message" <<<"$printed" \
        || fail "$name: the Inspector 1.x did not print the server's message \"$message\""

    inspect "$name-2" 2 "${headers[@]}" --stored-auth-only
    echo "inspector 2.x --stored-auth-only (exit $status): $(cat "$here/results/$name-2.stderr")"
    [ "$status" -ne 0 ] || fail "$name: the Inspector 2.x exited 0"
    printed="$(json "$here/results/$name-2.stderr" 'r.error.message')" \
        || fail "$name: the Inspector 2.x did not print a JSON error"
    grep -qF -- "$message" <<<"$printed" \
        || fail "$name: the Inspector 2.x did not print the server's message \"$message\""
}

echo "== a wrong token: the Inspectors print the server's 401 message"
check_refused wrong-token invalid_token "Authorization: Bearer not-$secret"

echo "== no token: the Inspectors print the server's 401 message"
check_refused no-token ""

# Without --stored-auth-only, 2.x takes any 401 as the start of an OAuth login, which needs
# a terminal: with none it prints {"error":{"code":"auth_required","message":"Interactive
# OAuth requires a TTY …"}}, not the server's message. That is the Inspector's choice (it
# does the same when the 401 names no resource metadata at all); checked so a change shows.
echo "== inspector 2.x, a wrong token, without --stored-auth-only and no TTY"
inspect wrong-token-2-interactive 2 --header "Authorization: Bearer not-$secret"
echo "inspector 2.x (exit $status): $(cat "$here/results/wrong-token-2-interactive.stderr")"
[ "$status" -ne 0 ] || fail "the Inspector 2.x exited 0 with a wrong token"
code="$(json "$here/results/wrong-token-2-interactive.stderr" 'r.error.code')" \
    || fail "the Inspector 2.x did not print a JSON error"
[ "$code" = auth_required ] || fail "the Inspector 2.x's error code is $code, not auth_required"

kill -0 "$server_pid" 2>/dev/null || fail "the arcade died during the run"

# The surface host (issue #17): each Inspector launches `mcpl-surface serve` over stdio, as
# an MCP client does, in front of the arcade on stdio; lists its tools (the four
# meta-tools) and calls toolsets--look, whose text names the arcade and what it offers. The
# surface host's own flags go after `--`, or the Inspector would take --config as its own.
echo "== build mcpl-surface"
cargo build --quiet -p mcpl-surface --bin mcpl-surface
surface_bin="${CARGO_TARGET_DIR:-$root/target}/debug/mcpl-surface"
[ -x "$surface_bin" ] || { echo "run.sh: $surface_bin was not built" >&2; exit 2; }
node -e 'console.log(JSON.stringify({mcpServers: {arcade: {command: process.argv[1], args: ["serve", "--in-memory", "--stdio"]}}}))' \
    "$arcade_bin" >"$work/surface.json"
# surface NAME MAJOR METHOD [ARG…]: the Inspector MAJOR.x's METHOD against the surface host.
surface() {
    local name="$1" major="$2" method="$3"
    shift 3
    local bin="$v1"
    [ "$major" = 2 ] && bin="$v2"
    status=0
    env -u MCP_AUTO_OPEN_ENABLED HOME="$work/home" \
        node "$bin" --cli --method "$method" "$@" "$surface_bin" -- serve --config "$work/surface.json" \
        </dev/null >"$here/results/$name.stdout" 2>"$here/results/$name.stderr" || status=$?
    echo "$status" >"$here/results/$name.status"
    if [ "$status" -ne 0 ]; then
        cat "$here/results/$name.stderr" >&2
        fail "the Inspector $major.x's $method at the surface host failed (exit $status)"
    fi
}
for major in 1 2; do
    echo "== inspector $major.x, the surface host over stdio: tools/list, toolsets--look"
    surface "surface-list-$major" "$major" tools/list
    tools="$(json "$here/results/surface-list-$major.stdout" 'r.tools.map((t) => t.name).join(" ")')" \
        || fail "the Inspector $major.x's tools/list of the surface host is not a JSON tool list"
    echo "tools: $tools"
    [ "$tools" = "toolsets--open toolsets--act toolsets--look toolsets--close" ] \
        || fail "the surface host listed $tools, not the four meta-tools"
    surface "surface-look-$major" "$major" tools/call --tool-name toolsets--look
    look="$(json "$here/results/surface-look-$major.stdout" 'r.content[0].text')" \
        || fail "the Inspector $major.x's toolsets--look is not a JSON result"
    echo "look: $(head -n 1 <<<"$look")"
    grep -qF '[arcade/tictactoe]' <<<"$look" || fail "toolsets--look does not show the arcade's games"
done

echo "== inspector: the right token lists the tools; a wrong or missing one shows the server's message; the surface host lists its tools and looks"
