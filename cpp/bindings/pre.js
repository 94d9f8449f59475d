// Prepended inside the Emscripten factory (--pre-js).

// The pthread code says `new Worker(…)`. In Node, Emscripten 3.1.6 makes that name resolve by
// setting the process-wide globalThis.Worker to worker_threads' Worker; scripts/build-wasm.sh
// rewrites that assignment to this factory-local name, so the host's globals stay as they were.
var Worker = globalThis.Worker;
