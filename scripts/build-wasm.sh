#!/usr/bin/env bash
# Builds the five WebAssembly variants into dist/wasm/: per variant one glue file, the ES module
# factory <v>.mjs (imported by browsers, bundlers, Node and pthread workers alike), the .wasm, and
# for threads the pthread workers' bootstrap <v>.worker.js.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ATTNLAB_ROOT"
out=dist/wasm
mkdir -p "$out"
# The pthread bootstrap (.worker.js) is a classic script that Node runs as CommonJS: this keeps
# Node from reading it as ESM under the project's "type": "module".
echo '{ "type": "commonjs" }' > "$out/package.json"
# ship DIR NAME: one module's glue, .wasm and pthread bootstrap from DIR into dist/wasm/.
# attnlab-<v> is the library's core; attnlab-nn-<v> its translators and trainer (loaded on first
# use); attnlab-pretrained-<v> the checkpoint module loadModel() loads.
ship() {
  local dir=$1 m=$2
  # Node: worker_threads' Worker goes into the factory's own `Worker` (cpp/wasm/pre.js), not
  # into globalThis. Checked: the glue may touch no process-wide handler or global.
  sed 's/global\.Worker=nodeWorkerThreads\.Worker/Worker=nodeWorkerThreads.Worker/' "$dir/$m.mjs" > "$out/$m.mjs"
  if grep -Eq 'global\.Worker|process\["on"\]' "$out/$m.mjs"; then
    echo "build-wasm: $m.mjs still sets globalThis.Worker or a process handler" >&2
    exit 1
  fi
  cp "$dir/$m.wasm" "$out/"
  if [ -f "$dir/$m.worker.js" ]; then
    # A pthread worker import()s the glue; if that fails (a host that serves the bootstrap but not
    # the glue with CORS), say so to the main thread, whose loader turns the message into load()'s
    # rejection, instead of leaving an unhandled rejection in the worker and load() pending.
    sed 's/\.then(function(instance){Module=instance})/.then(function(instance){Module=instance},function(err){postMessage({cmd:"attnlab: the glue did not load ("+err+")"})})/' \
      "$dir/$m.worker.js" > "$out/$m.worker.js"
    if ! grep -q 'the glue did not load' "$out/$m.worker.js"; then
      echo "build-wasm: $m.worker.js: the glue's import() no longer looks as expected" >&2
      exit 1
    fi
  fi
  # Glue of older builds (the classic .js twin) would ship with the package.
  rm -f "$out/$m.js"
}
# relaxed-*: the kernels use f32x4.relaxed_madd (issue 19; CMakeLists.txt runs scripts/relax-wasm.mjs).
for variant in ${ATTNLAB_VARIANTS:-scalar simd simd-threads relaxed-simd relaxed-simd-threads}; do
  dir=build/wasm-$variant
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    emcmake cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DATTNLAB_WASM_VARIANT="$variant" > /dev/null
  fi
  cmake --build "$dir" -j "$ATTNLAB_JOBS"
  # The simd build's C++ test runner (a guard; see keep_import_names in CMakeLists.txt): in CI a link came out with a JS
  # glue whose import names were not minified while its embedded .wasm's were (LinkError on
  # start), and the same link rerun alone was right; cause not found in Emscripten 3.1.6. Check
  # that it starts, and relink it alone if not.
  if [ -f "$dir/attnlab_wasm_tests.js" ] && ! node "$dir/attnlab_wasm_tests.js" --gtest_list_tests > /dev/null 2>&1; then
    echo "build-wasm: $dir/attnlab_wasm_tests.js does not start; relinking it alone" >&2
    rm -f "$dir/attnlab_wasm_tests.js"
    cmake --build "$dir" --target attnlab_wasm_tests -j 1
    node "$dir/attnlab_wasm_tests.js" --gtest_list_tests > /dev/null
  fi
  for m in attnlab-$variant attnlab-nn-$variant attnlab-pretrained-$variant; do ship "$dir" "$m"; done
done
