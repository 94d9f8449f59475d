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
# Its FMA twin: the marker import becomes f32x4.relaxed_madd, as in the relaxed builds.
emcc -O3 -msimd128 -DPEAK_FMA --no-entry -sSTANDALONE_WASM -sERROR_ON_UNDEFINED_SYMBOLS=0 -Wno-undefined \
  -o tests/bench/peak/peak_fma.wasm tests/bench/peak/peak.c 2> /dev/null
node scripts/relax-wasm.mjs tests/bench/peak/peak_fma.wasm > /dev/null
# Relaxed SIMD is behind this flag in Node 20 (on by default from 21, where the flag may be gone).
relaxed=()
if node --experimental-wasm-relaxed-simd -e 0 2> /dev/null; then relaxed=(--experimental-wasm-relaxed-simd); fi
native="$(mktemp)"
build/native/attnlab_bench --benchmark_format=json --benchmark_out="$native" --benchmark_out_format=json \
  --benchmark_min_time=0.5 > /dev/null
node --expose-gc "${relaxed[@]}" tests/bench/bench.mjs --native="$native" "$@"
rm -f "$native"
