// The Worker behind createTrainer() in browsers: its own WebAssembly instance, so training never
// blocks the page. Messages in: {type: 'start', options}, {type: 'cancel'}. Out: progress, done, error.
import { instantiate, simdSupported } from './loader.js';
import { runTraining, type TrainerOptions } from './trainer-core.js';

let cancelled = false;
const post = (msg: unknown) => (globalThis as unknown as { postMessage: (m: unknown) => void }).postMessage(msg);

(globalThis as unknown as { onmessage: (e: { data: { type: string; options?: TrainerOptions } }) => void }).onmessage = (e) => {
  if (e.data.type === 'cancel') {
    cancelled = true;
    return;
  }
  if (e.data.type !== 'start') return;
  (async () => {
    try {
      const m = await instantiate(simdSupported() ? 'simd' : 'scalar', 0);
      const result = await runTraining(m, e.data.options ?? {}, (p) => post({ type: 'progress', progress: p }), () => cancelled);
      post({ type: 'done', result });
    } catch (err) {
      post({ type: 'error', message: err instanceof Error ? err.message : String(err) });
    }
  })();
};
