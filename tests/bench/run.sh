#!/usr/bin/env bash
# npm run bench: builds what the benchmark needs (scripts/build.sh is incremental), runs the
# native Google Benchmark, then the Node benchmark, which records both in tests/bench/results/.
# Extra arguments go to bench.mjs (--quick for a smoke run).
set -euo pipefail
source "$(dirname "$0")/../../scripts/env.sh"
cd "$ATTNLAB_ROOT"
bash scripts/build.sh
# The mul+add peak kernel: tiny, rebuilt so the numbers come from this toolchain.
emcc -O3 -msimd128 --no-entry -sSTANDALONE_WASM -o tests/bench/peak/peak.wasm tests/bench/peak/peak.c
native="$(mktemp)"
build/native/attnlab_bench --benchmark_format=json --benchmark_out="$native" --benchmark_out_format=json \
  --benchmark_min_time=0.5 > /dev/null
node --expose-gc tests/bench/bench.mjs --native="$native" "$@"
rm -f "$native"
