// The Worker behind createTrainer(): a browser module Worker or a Node worker_threads Worker, with
// its own WebAssembly instance, so training never blocks the caller. Posts 'ready' once loaded (the
// session falls back to the main thread if a Worker never gets that far). In: {type: 'start',
// options}. Out: ready, tick (after every slice), progress (after every evaluation), done, error.
// Cancel is the session terminating this Worker: nothing here needs to listen for it.
import { fastestSingleThreaded, instantiateNn, simdSupported } from './loader.js';
import { runTraining } from './trainer-core.js';
import type { TrainerMessage, TrainerRequest } from './trainer-protocol.js';
import { workerPort } from './worker-spawn.js';

// A slice of ~50 ms: the session reads the step count from the ticks when it cancels (by terminating).
const SLICE_MS = 50;

const p = workerPort<TrainerRequest, TrainerMessage>('trainer-worker.js');
p.listen((msg) => {
  if (msg.type !== 'start') return;
  const options = msg.options;
  (async () => {
    try {
      // The session's rounding: a relaxed build only when the session's instance runs one, so the
      // Worker's numbers equal the main thread's.
      const variant = msg.relaxed ? fastestSingleThreaded() : simdSupported() ? 'simd' : 'scalar';
      const result = await runTraining(() => instantiateNn(variant), options, 'worker', {
        progress: (progress) => p.post({ type: 'progress', progress }),
        tick: (tick) => p.post({ type: 'tick', tick }),
      }, () => false, SLICE_MS);
      p.post({ type: 'done', result });
    } catch (err) {
      p.post({ type: 'error', message: err instanceof Error ? err.message : String(err) });
    }
  })();
});
p.post({ type: 'ready' });
