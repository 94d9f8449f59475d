#!/usr/bin/env bash
# Builds tests/bench/wasm/q8_rows.cpp with Emscripten (SIMD128, -O3) and runs it in Node with the
# optimising compiler only (--no-liftoff: main() is one long call, which Liftoff would keep).
set -euo pipefail
cd "$(dirname "$0")/../../.."
source scripts/env.sh
out=build/bench-wasm
mkdir -p "$out"
echo '{ "type": "commonjs" }' > "$out/package.json"
em++ -O3 -msimd128 -std=c++17 -Icpp/kernels tests/bench/wasm/q8_rows.cpp -o "$out/q8_rows.js" \
  -sENVIRONMENT=node -sSINGLE_FILE=1 -sINITIAL_MEMORY=64MB 2>/dev/null
echo "q8_rows at $(git rev-parse --short HEAD); $(date -u); $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); node $(node --version); load $(cut -d' ' -f1-3 /proc/loadavg)"
node --no-liftoff "$out/q8_rows.js"
