// What a checkpoint's Worker (worker.ts) and its page-side engine (worker-engine.ts) say to each
// other. The weights arrive as a transferred ReadableStream (a fetch body, a File's stream), so the
// page never holds model.safetensors; results come back in transferred buffers. Cancel and
// dispose are the page terminating the Worker: nothing here needs to listen for them.
import type { PretrainedInfoOut, PretrainedRunOut } from './module.js';
import type { EngineOptions, RunCall } from './engine.js';

export type ModelWorkerRequest =
  | { type: 'load'; config: string; weights: ReadableStream<Uint8Array>; size: number; variant: 'scalar' | 'simd' | 'relaxed-simd'; threads: number; quantize: boolean; files: EngineOptions['files'] }
  | { type: 'run'; seq: number; run: RunCall };

export type ModelWorkerMessage =
  | { type: 'ready' }
  | { type: 'progress'; loaded: number; total: number }
  | { type: 'loaded'; info: PretrainedInfoOut; heapBytes: number }
  | { type: 'ran'; seq: number; out: PretrainedRunOut; heapBytes: number }
  /** seq: the run that failed; absent for the load. */
  | { type: 'error'; seq?: number; message: string };
