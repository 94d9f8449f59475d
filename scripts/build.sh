#!/usr/bin/env bash
# Builds everything without testing: the native core and tests (build/native), the five
# WebAssembly variants (dist/wasm), the TypeScript API (dist/), the widgets (dist/components) and
# the static demo site (web/demo/dist).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ATTNLAB_ROOT"

echo "== native (cmake, g++)"
cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build/native -j "$ATTNLAB_JOBS"

echo "== wasm (emscripten: scalar, simd, simd-threads, relaxed-simd, relaxed-simd-threads)"
bash scripts/build-wasm.sh

echo "== typescript (dist/)"
npx --no-install tsc -p tsconfig.json
# The translation models are not in dist/: they are the attnlab-models workspace (web/models),
# which loadTranslator('fra-eng') imports by name. Left over from older builds, they would ship.
rm -rf dist/models

echo "== widgets (dist/components)"
npx --no-install tsc -p tsconfig.components.json
node scripts/fix-component-imports.mjs

echo "== API reference (web/demo/public/api: served by npm start, copied into the built site)"
npx --no-install typedoc --out web/demo/public/api --logLevel Warn

echo "== demo site (web/demo/dist)"
# Vite only strips types: check them first.
npx --no-install tsc -p web/demo/tsconfig.json
npx --no-install vite build --config web/demo/vite.config.ts --logLevel warn
