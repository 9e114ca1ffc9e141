#!/usr/bin/env bash
# Issue #38's duplicates measure over the non-test code, as one command.
#
# Copies each workspace crate's `src/` into DIR (outside the repo; default
# /tmp/duplicates-src-$USER), leaving out `tests.rs`, `proptests.rs`,
# `host-core/src/state/fixtures.rs` and the test-support crates `testkit/` and
# `testkit-msg/`, then runs `duplicates --repo DIR --most 200 --seconds 120`.
# Extra arguments go to `duplicates` after those (e.g. `--min-lines 8`).
#
# Usage: scripts/duplicates-src.sh [DIR] [-- DUPLICATES-ARGS...]
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="/tmp/duplicates-src-${USER:-$(id -un)}"
if [[ $# -gt 0 && "$1" != "--" ]]; then
  dir="$1"
  shift
fi
[[ $# -gt 0 && "$1" == "--" ]] && shift

case "$dir" in
  "$root"|"$root"/*) echo "DIR must be outside the repo: $dir" >&2; exit 2 ;;
esac

rm -rf "$dir"
mkdir -p "$dir"
for src in "$root"/*/src; do
  crate="$(basename "$(dirname "$src")")"
  case "$crate" in
    testkit|testkit-msg) continue ;;
  esac
  while IFS= read -r -d '' f; do
    rel="${f#"$root"/}"
    case "$rel" in
      host-core/src/state/fixtures.rs) continue ;;
    esac
    mkdir -p "$dir/$(dirname "$rel")"
    cp "$f" "$dir/$rel"
  done < <(find "$src" -type f ! -name tests.rs ! -name proptests.rs -print0)
done

exec duplicates --repo "$dir" --most 200 --seconds 120 "$@"
