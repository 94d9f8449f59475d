// createTrainer(): trains a small attention model on a toy task with attnlab's C++ engine. In a
// browser it runs in a module Worker (its own WebAssembly instance); elsewhere, or with
// { worker: false }, on the calling thread between event-loop turns.
import { isNode } from './loader.js';
import { runTraining, type TrainerOptions, type TrainerProgress, type TrainerResult } from './trainer-core.js';
import type { WasmModule } from './wasm-module.js';

export type { TrainerExample, TrainerOptions, TrainerProgress, TrainerResult, TrainerTask } from './trainer-core.js';

export interface CreateTrainerOptions extends TrainerOptions {
  /** Called after every evaluation. */
  onProgress?: (p: TrainerProgress) => void;
  /** Run in a Worker (default: true in browsers, false in Node). */
  worker?: boolean;
}

export interface TrainerSession {
  /** Resolves when the target accuracy or the time limit is reached, or after cancel(). */
  readonly done: Promise<TrainerResult>;
  /** Stops at the next evaluation; `done` then resolves with reason 'cancelled'. */
  cancel(): void;
}

export function createTrainer(m: WasmModule, options: CreateTrainerOptions = {}): TrainerSession {
  const { onProgress, worker, ...opts } = options;
  const useWorker = worker ?? (!isNode && typeof Worker !== 'undefined');
  if (useWorker) {
    const w = new Worker(new URL('./trainer-worker.js', import.meta.url), { type: 'module' });
    const done = new Promise<TrainerResult>((resolve, reject) => {
      w.onmessage = (e: MessageEvent) => {
        const d = e.data as { type: string; progress?: TrainerProgress; result?: TrainerResult; message?: string };
        if (d.type === 'progress' && d.progress) onProgress?.(d.progress);
        else if (d.type === 'done' && d.result) {
          w.terminate();
          resolve(d.result);
        } else if (d.type === 'error') {
          w.terminate();
          reject(new Error(d.message));
        }
      };
      w.onerror = (e) => {
        w.terminate();
        reject(new Error(`createTrainer: worker failed: ${e.message}`));
      };
    });
    w.postMessage({ type: 'start', options: opts });
    return { done, cancel: () => w.postMessage({ type: 'cancel' }) };
  }
  let cancelled = false;
  const done = runTraining(m, opts, (p) => onProgress?.(p), () => cancelled);
  return { done, cancel: () => { cancelled = true; } };
}
