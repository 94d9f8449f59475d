#!/usr/bin/env bash
# Builds everything without testing: the native core and tests (build/native), the three
# WebAssembly variants (dist/wasm) and the TypeScript API (dist/).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ATTNLAB_ROOT"

echo "== native (cmake, g++)"
cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build/native -j "$ATTNLAB_JOBS"

echo "== wasm (emscripten: scalar, simd, simd-threads)"
bash scripts/build-wasm.sh

echo "== typescript (dist/)"
npx --no-install tsc -p tsconfig.json
# The shipped translation models (issue 4) travel inside dist/ so 'fra-eng' / 'eng-fra' load by name.
mkdir -p dist/models && cp web/models/*.atl dist/models/
