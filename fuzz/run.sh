#!/usr/bin/env bash
# Builds every fuzz target and runs each for SECONDS (default 60) on its corpus.
# Exits non-zero if any target crashed (a panic is a failed property), hung or ran out of
# memory, and prints where the crash input was saved. See README.md.
#
# Environment:
#   FUZZ_TARGETS    space-separated targets to run (default: all, from `cargo fuzz list`)
#   FUZZ_SANITIZER  none (default) or address
set -uo pipefail

secs="${1:-60}"
case "$secs" in
  '' | *[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")"

# Stable Rust: cargo fuzz passes unstable rustc flags (-Zsanitizer, coverage passes);
# RUSTC_BOOTSTRAP lets stable accept them. Harmless on a nightly toolchain.
export RUSTC_BOOTSTRAP=1
sanitizer="${FUZZ_SANITIZER:-none}"

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "cargo fuzz is not installed: cargo install cargo-fuzz --version 0.13.2 --locked" >&2
  exit 2
fi

echo "== building (sanitizer: $sanitizer)"
cargo fuzz build -s "$sanitizer" || { echo "build failed" >&2; exit 2; }

targets="${FUZZ_TARGETS:-$(cargo fuzz list)}"
# Run the built binaries directly: `cargo fuzz run` would rebuild whenever a workspace
# crate changed since the build above (others edit the tree while this runs).
bins="target/$(rustc -vV | sed -n 's/^host: //p')/release"
logs=target/fuzz-logs
mkdir -p "$logs"
failed=0
summary=()
for t in $targets; do
  mkdir -p "corpus/$t" "artifacts/$t"
  marker=$(mktemp)
  echo "== $t for ${secs}s"
  # -timeout: one input taking longer than 30 s is a hang, reported like a crash.
  "$bins/$t" -artifact_prefix="artifacts/$t/" -max_total_time="$secs" -timeout=30 \
    -print_final_stats=1 "corpus/$t" 2>&1 | tee "$logs/$t.log" |
    grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|==[0-9]+==|SUMMARY|thread .* panicked|Test unit written|stat::)'
  rc=${PIPESTATUS[0]}
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logs/$t.log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$logs/$t.log" | tail -1)
  if [ "$rc" -ne 0 ]; then
    failed=1
    summary+=("$t: FAILED (exit $rc) after ${runs:-?} runs")
    echo "!! $t failed (exit $rc); full log: fuzz/$logs/$t.log"
    grep -m1 -A12 -E 'panicked at|ERROR: libFuzzer' "$logs/$t.log" | sed 's/^/   | /'
    found=$(find "artifacts/$t" -type f -newer "$marker" 2>/dev/null)
    if [ -n "$found" ]; then
      for f in $found; do
        echo "!! crash input: fuzz/$f"
        echo "   reproduce:   (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run -s $sanitizer $t $f)"
        echo "   or:          fuzz/$bins/$t fuzz/$f"
      done
    else
      echo "!! no crash input was saved (a build or setup failure?)"
    fi
  else
    summary+=("$t: ok, ${runs:-?} runs, ${rate:-?} exec/s")
  fi
  rm -f "$marker"
done

echo "== summary (${secs}s per target)"
printf '  %s\n' "${summary[@]}"
exit "$failed"
