// Prepended inside the Emscripten factory (--pre-js).

// The pthread code says `new Worker(…)`. In Node, Emscripten 3.1.6 makes that name resolve by
// setting the process-wide globalThis.Worker to worker_threads' Worker; scripts/build-wasm.sh
// rewrites that assignment to this factory-local name, so the host's globals stay as they were.
var Worker = globalThis.Worker;

// The glue is an ES module (EXPORT_ES6), but 3.1.6's Node paths say require('fs'), require('path'),
// require('worker_threads') and __dirname, which only CommonJS defines. Give them this factory's
// own: a require rooted at the glue's URL (_scriptDir is import.meta.url), through
// process.getBuiltinModule (Node >= 20.16) because a static `import` of node:module would break
// browsers. Elsewhere both stay undefined, as the glue expects.
var require, __dirname;
if (typeof process == 'object' && typeof process.versions == 'object' && typeof process.versions.node == 'string') {
  require = process.getBuiltinModule('module').createRequire(_scriptDir);
  __dirname = require('path').dirname(require('url').fileURLToPath(_scriptDir));
}
