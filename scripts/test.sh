#!/usr/bin/env bash
# `npm test` (and CI): setup if needed, build, then native, JS and browser tests. Stops at the
# first failing stage; always ends with how long each stage took.
set -euo pipefail
cd "$(dirname "$0")/.."

names=() secs=() failed=""
summary() {
  local rc=$?
  echo
  echo "=== summary"
  for i in "${!names[@]}"; do printf '  %-8s %7ss\n' "${names[$i]}" "${secs[$i]}"; done
  [ -n "$failed" ] && printf '  %-8s FAILED (exit %s)\n' "$failed" "$rc"
  echo "stages: ${#names[@]} passed, $([ -n "$failed" ] && echo 1 || echo 0) failed"
}
trap summary EXIT

# stage NAME COMMAND...: runs COMMAND under a header and records its time; a failure ends the run.
stage() {
  local name=$1 t0 us rc
  shift
  echo
  echo "=== $name: $*"
  t0=${EPOCHREALTIME//[^0-9]/} # microseconds, bash's own clock: no bc/date needed
  "$@" || { rc=$?; failed=$name; return "$rc"; }
  us=$((${EPOCHREALTIME//[^0-9]/} - t0))
  names+=("$name")
  secs+=("$((us / 1000000)).$((us / 100000 % 10))")
}

stage setup bash scripts/setup.sh --if-needed
stage build bash scripts/build.sh
stage native ctest --test-dir build/native --output-on-failure -j "$(nproc)"
stage sanitize bash scripts/sanitize.sh
stage fuzz bash scripts/fuzz.sh
# The browser tests have their own config and stage; keep the root config from picking them up.
stage js node_modules/.bin/vitest run --exclude 'tests/browser/**'
# Node 20 runs relaxed SIMD only behind a flag: the same suite again with it, so the relaxed
# builds meet every float64 reference and golden vector the others do (issue 19).
stage relaxed node_modules/.bin/vitest run --config tests/js/relaxed.vitest.config.ts --exclude 'tests/browser/**'
stage browser node_modules/.bin/vitest run --config tests/browser/vitest.config.ts
# Firefox ESR (Gecko, SpiderMonkey): the package, the widgets and the site, a few checks each.
stage firefox node_modules/.bin/vitest run --config tests/firefox/vitest.config.ts
