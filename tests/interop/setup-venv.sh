#!/usr/bin/env bash
# Creates target/interop-venv with the pinned official MCP Python SDK, once. Idempotent and
# safe to run concurrently (a lock serialises the install). The Rust interop tests call it
# on first use, so `cargo test` works on a fresh machine without any other step.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${MCPL_INTEROP_VENV:-$root/target/interop-venv}"
req="$root/tests/interop/requirements.txt"
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if [ -f "$venv/.installed" ] && cmp -s "$req" "$venv/.installed"; then
  exit 0
fi
rm -rf "$venv"
# `venv`'s ensurepip step has failed once on a busy CI machine and passed when run again:
# one retry from scratch before giving up.
python3 -m venv "$venv" || { rm -rf "$venv"; python3 -m venv "$venv"; }
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
cp "$req" "$venv/.installed"
echo "interop venv ready: $venv"
