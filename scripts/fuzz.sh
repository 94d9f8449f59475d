#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) and, for each cpp/fuzz/fuzz_<name>.cpp:
#   1. replays tests/fuzz/regressions/* (every crash ever found) and its committed corpus;
#   2. fuzzes for FUZZ_SECONDS (default 60) from a copy of the corpus, two targets at a time.
# A crash leaves crash-* in build/fuzz/work/<name>/: fix it, then add the file to regressions.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ATTNLAB_ROOT"
seconds="${FUZZ_SECONDS:-60}"
cmake -S . -B build/fuzz -DCMAKE_CXX_COMPILER=clang++-14 -DATTNLAB_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build build/fuzz -j "$ATTNLAB_JOBS" > /dev/null

targets=()
for src in cpp/fuzz/fuzz_*.cpp; do targets+=("$(basename "$src" .cpp)"); done

for t in "${targets[@]}"; do
  echo "fuzz: $t: replaying regressions and corpus"
  # Files only: a target without a committed corpus yet would pass libFuzzer an unexpanded glob,
  # which it reads as a directory and refuses.
  inputs=()
  for f in tests/fuzz/regressions/* tests/fuzz/corpus/"${t#fuzz_}"/*; do [ -f "$f" ] && inputs+=("$f"); done
  ./build/fuzz/"$t" "${inputs[@]}" > /dev/null 2>&1 ||
    { echo "fuzz: $t: a committed input fails" >&2; ./build/fuzz/"$t" "${inputs[@]}" 2>&1 | tail -30; exit 1; }
done

run() {
  local t=$1 work=build/fuzz/work/$1
  rm -rf "$work" && mkdir -p "$work/corpus"
  cp tests/fuzz/corpus/"${t#fuzz_}"/* "$work/corpus/" 2>/dev/null || true
  if (cd "$work" && ../../"$t" -max_total_time="$seconds" -max_len=512 -print_final_stats=1 corpus > log 2>&1); then
    echo "fuzz: $t: ${seconds}s clean, $(grep -o 'stat::number_of_executed_units: [0-9]*' "$work/log" | grep -o '[0-9]*$') runs"
  else
    echo "fuzz: $t: FAILED; see $work/log" >&2; grep -E 'ERROR|runtime error|SUMMARY' "$work/log" >&2; return 1
  fi
}
# Two at a time (CI has two cores). Every target runs to its end even when another fails, so one
# run reports every failure and no fuzzer is left running behind a failed stage.
pids=() failures=0
for t in "${targets[@]}"; do
  run "$t" & pids+=($!)
  if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}" || failures=$((failures + 1)); pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p" || failures=$((failures + 1)); done
if [ "$failures" -gt 0 ]; then echo "fuzz: $failures target(s) failed" >&2; exit 1; fi
