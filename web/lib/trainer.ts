// createTrainer(): trains a small attention model on a toy task with attnlab's C++ engine, in a
// Worker (a browser module Worker, or worker_threads in Node) with its own WebAssembly instance,
// or on the calling thread in slices between event-loop turns. A Worker that cannot start (a
// sandboxed frame, a policy) leaves the training to the calling thread. Nothing runs before
// createTrainer() has returned; cancel() settles `done` at once from a Worker (it is terminated,
// the result carries the step it had reached) and at the next turn on the calling thread.
import { disposeSymbol } from './dispose.js';
import { isNode } from './loader.js';
import { initialTick, runTraining, type TrainerOptions, type TrainerProgress, type TrainerResult, type TrainerTick } from './trainer-core.js';
import { checkTrainerOptions } from './trainer-options.js';
import { trainerError } from './trainer-protocol.js';
import { spawnTrainerWorker, type TrainerWorker } from './trainer-spawn.js';
import type { NnModule } from './wasm-module.js';

export type { TrainerExample, TrainerOptions, TrainerProgress, TrainerResult, TrainerTask } from './trainer-core.js';

export interface CreateTrainerOptions extends TrainerOptions {
  /** Called after every evaluation, never before createTrainer() has returned. If it throws, training stops and `done` rejects with that error. */
  onProgress?: (p: TrainerProgress) => void;
  /** Run in a Worker (default: true in browsers, false in Node, where it means worker_threads). */
  worker?: boolean;
}

export interface TrainerSession {
  /** Resolves when the target accuracy or the time limit is reached, or after cancel(). */
  readonly done: Promise<TrainerResult>;
  /** Stops the training; `done` resolves with reason 'cancelled' (no progress event follows). */
  cancel(): void;
  /** `using`: cancel() at the end of the block. */
  [Symbol.dispose](): void;
}

/**
 * The calling thread's slice: about 8 ms of steps or evaluations between event-loop turns (one
 * step at least). Measured in Node, SIMD build, default options: see tests/js/trainer-inprocess.test.ts.
 */
const MAIN_SLICE_MS = 8;

/**
 * `nn`: the instance's nn module, instantiated (on first use) only when training on this thread;
 * `settled`: called once as `done` settles.
 */
export function createTrainer(nn: () => Promise<NnModule>, options?: CreateTrainerOptions, relaxed = false,
  settled?: () => void): TrainerSession {
  const { training, onProgress, worker } = checkTrainerOptions(options);
  let settle: { resolve: (r: TrainerResult) => void; reject: (e: unknown) => void } | null = null;
  const done = new Promise<TrainerResult>((resolve, reject) => (settle = { resolve, reject }));
  let cancelled = false, inWorker = false;
  let w: TrainerWorker | null = null;
  let tick: TrainerTick = initialTick();
  let last: Pick<TrainerProgress, 'exactMatch' | 'example'> = { exactMatch: 0, example: null };

  const finish = (f: (s: NonNullable<typeof settle>) => void) => {
    const s = settle;
    settle = null;
    w?.terminate();
    w = null;
    if (s) {
      settled?.();
      f(s);
    }
  };
  const progress = (p: TrainerProgress) => {
    if (!settle) return;
    tick = p;
    last = { exactMatch: p.exactMatch, example: p.example };
    try {
      onProgress?.(p);
    } catch (e) {
      cancelled = true;
      finish((s) => s.reject(e));
    }
  };
  const onMainThread = (workerError?: string) => {
    inWorker = false;
    const why = <T extends TrainerProgress>(p: T): T => (workerError ? { ...p, workerError } : p);
    runTraining(nn, training, 'main', { progress: (p) => progress(why(p)) }, () => cancelled || !settle, MAIN_SLICE_MS)
      .then((r) => finish((s) => s.resolve(why(r))), (e) => finish((s) => s.reject(e)));
  };

  if (worker ?? !isNode) {
    inWorker = true;
    spawnTrainerWorker({
      message: (msg) => {
        if (msg.type === 'tick') tick = msg.tick;
        else if (msg.type === 'progress') progress(msg.progress);
        else if (msg.type === 'done') finish((s) => s.resolve(msg.result));
        else if (msg.type === 'error') finish((s) => s.reject(trainerError(msg.message)));
      },
      failed: (reason) => finish((s) => s.reject(new Error(`createTrainer: the training Worker failed: ${reason}`))),
    }).then((started) => {
      if (!settle) started.terminate();
      else {
        w = started;
        w.post({ type: 'start', options: training, relaxed });
      }
    }, (e: Error) => {
      // No Worker could start here: train on this thread, in slices.
      if (settle) onMainThread(`createTrainer: no Worker could start, training on the main thread: ${e.message}`);
    });
  } else onMainThread();

  const cancel = () => {
    cancelled = true;
    if (inWorker) finish((s) => s.resolve({ ...tick, ...last, thread: 'worker', reason: 'cancelled' }));
  };
  return { done, cancel, [disposeSymbol]: cancel };
}
