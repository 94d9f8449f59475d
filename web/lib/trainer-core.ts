// The training loop behind createTrainer(), shared by the Worker and the main-thread trainer. It
// runs in slices of about `sliceMs` (as many whole steps, or held-out sequences, as fit, at least
// one) and yields to the event loop between them: on a main thread the page or the Node process
// stays responsive and cancel() is seen at the next turn; in a Worker each slice ends with a tick
// so the session knows the current step when it is cancelled.
import { filled } from './filled.js';
import type { CheckedTrainerOptions } from './trainer-options.js';
import { trainerError } from './trainer-protocol.js';
import { hasTrapped, trapGuarded } from './trap.js';
import type { NnModule, TrainerEvaluationOut, TrainerStepOut } from './wasm-module.js';

export type TrainerTask = 'reverse' | 'sort' | 'copy';

export interface TrainerOptions {
  /** The toy task: reverse, sort or copy a random sequence of letters. Default 'reverse'. */
  task?: TrainerTask;
  /** Default 'gru' (Bahdanau attention); 'gru-luong' or 'transformer' also train. */
  arch?: 'gru' | 'gru-luong' | 'transformer';
  /** Hidden size, a multiple of 4 in [4, 512]. Default 64. */
  hidden?: number;
  /** Alphabet size (letters a..), in [2, 26]. Default 8. */
  symbols?: number;
  /** Shortest sequence, in [1, 30]. Default 3. */
  minLength?: number;
  /** Longest sequence, in [minLength, 30]. Default 6 (or minLength if larger). */
  maxLength?: number;
  /** Sequences per step, in [1, 512]. Default 32. */
  batch?: number;
  /** Adam's learning rate, > 0. Default 3e-3. */
  lr?: number;
  /** Initial weights and data stream, an integer in [0, 2^31 - 1]. Default 1. */
  seed?: number;
  /** Stop after this long (> 0; Infinity: no limit). Default 60. */
  maxSeconds?: number;
  /** Stop once exact match on held-out sequences reaches this, in [0, 1]. Default 0.95. */
  targetAccuracy?: number;
  /** Steps between evaluations (and progress events). Default 50. */
  evalEvery?: number;
  /** Held-out sequences per evaluation. Default 200. */
  evalSize?: number;
}

export interface TrainerExample {
  source: string[];
  target: string[];
  output: string[];
  /** Cross-attention [output.length, source.length] (head-averaged, last layer). */
  attention: number[];
}

export interface TrainerProgress {
  step: number;
  /** Mean training loss over the steps since the previous event (NaN before the first step). */
  loss: number;
  /** Exact match on the held-out sequences at the latest evaluation (0 before the first). */
  exactMatch: number;
  elapsedMs: number;
  tokensPerSecond: number;
  /** The first held-out sequence at the latest evaluation, with its attention. */
  example: TrainerExample | null;
  /** Where the training runs: a Worker, or the calling thread in slices. */
  thread: 'worker' | 'main';
  /** Why no Worker could start, when one was asked for (the default in browsers) and none did. */
  workerError?: string;
}

export interface TrainerResult extends TrainerProgress {
  reason: 'target' | 'time' | 'cancelled';
}

/** The part of the progress that changes at every slice (a Worker's tick). */
export type TrainerTick = Pick<TrainerProgress, 'step' | 'loss' | 'elapsedMs' | 'tokensPerSecond'>;

export interface TrainerHooks {
  /** After every evaluation. */
  progress(p: TrainerProgress): void;
  /** After every slice of steps. */
  tick?(t: TrainerTick): void;
}

/** Held-out example i is drawn from its own seed, so an evaluation can stop after any example. */
const EVAL_SEED = 12345;
/** After a trap (trap.ts): where a working trainer comes from (a fresh nn module, or Worker). */
const AGAIN = 'call lib.createTrainer() for a new trainer';

declare const setImmediate: ((f: () => void) => unknown) | undefined;

/**
 * One event-loop turn. Node: setImmediate (timers and I/O run first; a MessagePort would keep the
 * process alive). Browsers: a MessageChannel task (setTimeout(0) is clamped to 4 ms once nested).
 */
function turns(): { next: () => Promise<void>; close: () => void } {
  if (typeof setImmediate === 'function') return { next: () => new Promise((r) => setImmediate(r)), close: () => {} };
  const ch = new MessageChannel();
  const waiting: (() => void)[] = [];
  ch.port1.onmessage = () => waiting.shift()?.();
  return {
    next: () => new Promise<void>((r) => {
      waiting.push(r);
      ch.port2.postMessage(0);
    }),
    close: () => ch.port1.close(),
  };
}

export const initialTick = (): TrainerTick => ({ step: 0, loss: NaN, elapsedMs: 0, tokensPerSecond: 0 });

/** `nn`: the nn module, awaited only once the training has not been cancelled before its first turn. */
export async function runTraining(nn: () => Promise<NnModule>, o: CheckedTrainerOptions, thread: TrainerProgress['thread'], hooks: TrainerHooks,
  cancelled: () => boolean, sliceMs: number): Promise<TrainerResult> {
  const turn = turns();
  // Nothing runs before createTrainer() has returned its session.
  await turn.next();
  let tick = initialTick();
  let evaluated: Pick<TrainerProgress, 'exactMatch' | 'example'> = { exactMatch: 0, example: null };
  const result = (reason: TrainerResult['reason']): TrainerResult => ({ ...tick, ...evaluated, thread, reason });
  if (cancelled()) {
    turn.close();
    return result('cancelled');
  }
  let m: NnModule;
  try {
    m = await nn();
  } catch (e) {
    turn.close();
    // Cancelled while the module loaded (the instance's dispose() cancels its trainers, and then
    // the load refuses): done says so, as at any other point.
    if (cancelled()) return result('cancelled');
    throw e;
  }
  if (cancelled()) {
    turn.close();
    return result('cancelled');
  }
  // The time limit counts from here: fetching and compiling the module is not training.
  const t0 = performance.now();
  // Every engine call, not only the first: the module may have trapped between turns (in another
  // trainer, or a translator of the same instance); a trap in it rejects `done` naming createTrainer.
  const run = <T>(call: (out: Partial<T>) => string) => trapGuarded(m, 'createTrainer', AGAIN, () => filled<T>(call, trainerError));
  const { id } = run<{ id: number }>((out) => m.trainerCreate(o, out));
  const maxMs = o.maxSeconds * 1000;
  const elapsed = () => performance.now() - t0;
  // Runs work(i) for i in [0, units) (steps or held-out sequences, one engine call each, so the
  // numbers do not depend on how the slices fall) in slices of about sliceMs, yielding between
  // slices. False when cancelled; training also stops at maxSeconds.
  const sliced = async (units: number, work: (i: number) => void, stopAtTime: boolean) => {
    for (let i = 0; i < units;) {
      const sliceStart = performance.now();
      do work(i++);
      while (i < units && performance.now() - sliceStart < sliceMs);
      hooks.tick?.(tick);
      await turn.next();
      if (cancelled()) return false;
      if (stopAtTime && elapsed() >= maxMs) return true;
    }
    return true;
  };
  try {
    for (;;) {
      // Train evalEvery steps (fewer if the time runs out).
      let lossSum = 0, steps = 0, tokens = 0, stepMs = 0;
      const trained = await sliced(o.evalEvery, () => {
        const s0 = performance.now();
        const s = run<TrainerStepOut>((out) => m.trainerStep(id, 1, out));
        const dt = performance.now() - s0;
        lossSum += s.loss;
        steps++;
        stepMs += dt;
        tokens += s.tokensPerSecond * dt / 1000;
        tick = { step: s.step, loss: lossSum / steps, elapsedMs: elapsed(), tokensPerSecond: stepMs > 0 ? tokens / (stepMs / 1000) : 0 };
      }, true);
      if (!trained) return result('cancelled');
      // Evaluate on evalSize held-out sequences (all of them, even past maxSeconds).
      let correct = 0;
      let example: TrainerExample | null = null;
      const evaluatedAll = await sliced(o.evalSize, (i) => {
        const e = run<TrainerEvaluationOut>((out) => m.trainerEvaluate(id, 1, EVAL_SEED + i, out));
        correct += e.exactMatch;
        if (i === 0 && e.example) example = { ...e.example, attention: Array.from(e.example.attention) };
      }, false);
      if (!evaluatedAll) return result('cancelled');
      evaluated = { exactMatch: correct / o.evalSize, example };
      tick = { ...tick, elapsedMs: elapsed() };
      const p: TrainerProgress = { ...tick, ...evaluated, thread };
      hooks.progress(p);
      if (p.exactMatch >= o.targetAccuracy) return { ...p, reason: 'target' };
      await turn.next();
      if (cancelled()) return result('cancelled');
      if (elapsed() >= maxMs) return result('time');
    }
  } finally {
    if (!hasTrapped(m)) m.dispose(id);
    turn.close();
  }
}
