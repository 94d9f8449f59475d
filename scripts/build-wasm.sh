#!/usr/bin/env bash
# Builds the five WebAssembly variants into dist/wasm/: per variant the classic Emscripten
# factory (<v>.js, loaded by Node through require and by pthread workers through importScripts),
# an ES module twin (<v>.mjs, for browsers and bundlers), the .wasm, and for threads .worker.js.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ATTNLAB_ROOT"
out=dist/wasm
mkdir -p "$out"
# The glue is CommonJS-flavoured; this keeps Node from reading it as ESM under "type": "module".
echo '{ "type": "commonjs" }' > "$out/package.json"
# relaxed-*: the kernels use f32x4.relaxed_madd (issue 19; CMakeLists.txt runs scripts/relax-wasm.mjs).
for variant in ${ATTNLAB_VARIANTS:-scalar simd simd-threads relaxed-simd relaxed-simd-threads}; do
  dir=build/wasm-$variant
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    emcmake cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DATTNLAB_WASM_VARIANT="$variant" > /dev/null
  fi
  cmake --build "$dir" -j "$ATTNLAB_JOBS"
  # Node: worker_threads' Worker goes into the factory's own `Worker` (cpp/bindings/pre.js), not
  # into globalThis. Checked: the glue may touch no process-wide handler or global.
  sed 's/global\.Worker=nodeWorkerThreads\.Worker/Worker=nodeWorkerThreads.Worker/' "$dir/attnlab-$variant.js" > "$out/attnlab-$variant.js"
  if grep -Eq 'global\.Worker|process\["on"\]' "$out/attnlab-$variant.js"; then
    echo "build-wasm: attnlab-$variant.js still sets globalThis.Worker or a process handler" >&2
    exit 1
  fi
  cp "$dir/attnlab-$variant.wasm" "$out/"
  [ -f "$dir/attnlab-$variant.worker.js" ] && cp "$dir/attnlab-$variant.worker.js" "$out/"
  { cat "$out/attnlab-$variant.js"; echo; echo 'export default createAttnlabModule;'; } > "$out/attnlab-$variant.mjs"
done
