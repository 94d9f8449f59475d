// Shared by the trainer tests: watch the event loop while a trainer runs, and time cancel(). The
// tests assert on event-loop turns, which no machine load changes; the times are only printed.
import type { Attnlab, CreateTrainerOptions, TrainerProgress, TrainerResult } from 'attnlab';
import { vi } from 'vitest';

/**
 * Counts event-loop turns: a chain of setImmediate callbacks, one per turn (Node runs the
 * immediates queued during a turn in the next one, in the order queued).
 */
export function turnCounter(): { count: () => number; stop: () => void } {
  let turns = 0, on = true;
  const next = () => setImmediate(() => {
    turns++;
    if (on) next();
  });
  next();
  return { count: () => turns, stop: () => void (on = false) };
}

/** The longest gap between ticks of a 1 ms interval: how long the event loop was blocked (printed only). */
export function loopProbe(): { stop: () => number } {
  let last = performance.now(), worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 1);
  return { stop: () => (clearInterval(timer), worst) };
}

export interface CancelRun {
  /** How long createTrainer() took to return (ms). */
  createMs: number;
  /** True when every onProgress call came after createTrainer() had returned. */
  progressAfterReturn: boolean;
  progress: TrainerProgress[];
  result: TrainerResult;
  /** From cancel() to `done` resolving (ms). */
  cancelMs: number;
  /** From when the (0 ms) timer asking for the cancel was set to `done` resolving (ms). */
  cancelFromDueMs: number;
  /** From createTrainer() to the first progress event: one evaluation interval (ms). */
  firstProgressMs: number;
  /** Event-loop block: the longest gap of a 1 ms interval while training (ms). */
  longestBlockMs: number;
  progressAfterCancel: number;
  /**
   * Event-loop turns queued after cancel() that ran before `done` resolved: 0 when it settles in
   * cancel()'s turn or in one already queued then (the in-process trainer's next turn).
   */
  turnsCancelToDone: number;
}

/**
 * Starts a trainer whose onProgress reaches for the session (the pattern that threw 'Cannot access
 * s before initialization' when progress fired inside createTrainer()), then cancels it from a
 * timer set at the second progress event: however slow the machine, it has trained past the first.
 */
export async function cancelRun(lib: Attnlab, options: CreateTrainerOptions): Promise<CancelRun> {
  const probe = loopProbe();
  const progress: TrainerProgress[] = [];
  let returned = false, progressAfterReturn = true, cancelled = false, progressAfterCancel = 0;
  let due = 0, cancelAt = 0, firstProgressMs = 0;
  // Started with cancel() (a chain of immediates spins while the loop is idle, as it is while a Worker trains).
  let turns: ReturnType<typeof turnCounter> | undefined;
  const t0 = performance.now();
  const s = lib.createTrainer({
    ...options,
    onProgress: (p) => {
      progressAfterReturn &&= returned;
      progress.push(p);
      if (cancelled) progressAfterCancel++;
      if (progress.length === 1) firstProgressMs = performance.now() - t0;
      if (s && progress.length === 2) {
        due = performance.now();
        setTimeout(() => {
          cancelAt = performance.now();
          turns = turnCounter();
          cancelled = true;
          s.cancel();
        });
      }
    },
  });
  const createMs = performance.now() - t0;
  returned = true;
  const result = await s.done;
  const end = performance.now();
  const turnsCancelToDone = turns?.count() ?? NaN;
  turns?.stop();
  return {
    createMs, progressAfterReturn, progress, result, cancelMs: end - cancelAt, cancelFromDueMs: end - due, firstProgressMs,
    longestBlockMs: probe.stop(), progressAfterCancel, turnsCancelToDone,
  };
}

/** The calling thread's slice in web/lib/trainer.ts (MAIN_SLICE_MS): steps or evaluations until this many ms have passed. */
export const SLICE_MS = 8;

/**
 * Runs a trainer on this thread to its first progress event (then cancels it) under a stepped
 * clock: every performance.now() reads 1 ms later than the one before, whatever the machine does.
 * A trainer that reads the clock at least once per step or held-out sequence (it must, to know
 * when a slice is over) then fits at most SLICE_MS of them in a slice, so the first evaluation
 * interval takes at least ceil(evalEvery / SLICE_MS) + ceil(evalSize / SLICE_MS) turns of the
 * event loop; an unsliced one takes a single turn. The turns are counted from the first reading:
 * the training starts there, after the trainer module (thousands of turns to load the first time)
 * is ready. Returns the turns counted and that bound.
 */
export async function steppedClockTurns(lib: Attnlab, options: CreateTrainerOptions & { evalEvery: number; evalSize: number }):
  Promise<{ turns: number; atLeast: number; progress: TrainerProgress }> {
  const turns = turnCounter();
  let clock = 0, fromTurn = 0;
  const now = vi.spyOn(performance, 'now').mockImplementation(() => {
    if (clock === 0) fromTurn = turns.count();
    return ++clock;
  });
  try {
    let first: { turns: number; progress: TrainerProgress } | undefined;
    const s = lib.createTrainer({
      ...options, worker: false, onProgress: (p) => {
        first ??= { turns: turns.count() - fromTurn, progress: p };
        s.cancel();
      },
    });
    const r = await s.done;
    if (!first) throw new Error(`steppedClockTurns: the trainer ended (${r.reason}) before its first progress event`);
    return { ...first, atLeast: Math.ceil(options.evalEvery / SLICE_MS) + Math.ceil(options.evalSize / SLICE_MS) };
  } finally {
    turns.stop();
    now.mockRestore();
  }
}

/**
 * Small enough to evaluate often, big enough that a step takes a few ms, and far from its target:
 * the tests that cancel or hit the time limit must not race the trainer's own success. Reversing
 * 6 symbols of 8, hidden 32 reached exact match 1 in 720 steps (under 1 s, 2026-11-25); 20-30 of
 * 26 symbols stayed at exact match 0 for 6 s (787 steps).
 */
export const SMALL: CreateTrainerOptions & { evalEvery: number; evalSize: number } = {
  task: 'reverse', hidden: 32, symbols: 26, minLength: 20, maxLength: 30, evalEvery: 40, evalSize: 40, maxSeconds: 60, targetAccuracy: 1,
};
