// Appended inside the Emscripten factory (--post-js): small hooks the TypeScript layer needs.

// The current memory buffer: views made from it stay valid even when another thread grew memory.
Module['memoryBuffer'] = function () { return wasmMemory.buffer; };

// Pthread workers, where this build has them: let Node exit while they idle, and end them on dispose.
Module['unrefWorkers'] = function () {
  if (typeof PThread === 'undefined') return;
  PThread.unusedWorkers.concat(PThread.runningWorkers).forEach(function (w) { if (w.unref) w.unref(); });
};
Module['terminateWorkers'] = function () {
  if (typeof PThread === 'undefined') return;
  PThread.unusedWorkers.concat(PThread.runningWorkers).forEach(function (w) { w.terminate(); });
  PThread.unusedWorkers = [];
  PThread.runningWorkers = [];
};
