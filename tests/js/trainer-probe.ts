// Shared by the trainer tests: watch the event loop while a trainer runs, and time cancel().
import type { Attnlab, CreateTrainerOptions, TrainerProgress, TrainerResult } from 'attnlab';

/** The longest gap between ticks of a 1 ms interval: how long the event loop was blocked. */
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
  /** From when the timer asking for the cancel was due to `done` resolving (ms). */
  cancelFromDueMs: number;
  /** From createTrainer() to the first progress event: one evaluation interval (ms). */
  firstProgressMs: number;
  /** Event-loop block: the longest gap of a 1 ms interval while training (ms). */
  longestBlockMs: number;
  progressAfterCancel: number;
}

/**
 * Starts a trainer whose onProgress reaches for the session (the pattern that threw 'Cannot access
 * s before initialization' when progress fired inside createTrainer()), then cancels it from a
 * timer `cancelAfterMs` after the first progress event.
 */
export async function cancelRun(lib: Attnlab, options: CreateTrainerOptions, cancelAfterMs: number): Promise<CancelRun> {
  const probe = loopProbe();
  const progress: TrainerProgress[] = [];
  let returned = false, progressAfterReturn = true, cancelled = false, progressAfterCancel = 0, timerSet = false;
  let due = 0, cancelAt = 0, firstProgressMs = 0;
  const t0 = performance.now();
  const s = lib.createTrainer({
    ...options,
    onProgress: (p) => {
      progressAfterReturn &&= returned;
      progress.push(p);
      if (cancelled) progressAfterCancel++;
      if (s && !timerSet) {
        timerSet = true;
        firstProgressMs = performance.now() - t0;
        due = performance.now() + cancelAfterMs;
        setTimeout(() => {
          cancelAt = performance.now();
          cancelled = true;
          s.cancel();
        }, cancelAfterMs);
      }
    },
  });
  const createMs = performance.now() - t0;
  returned = true;
  const result = await s.done;
  const end = performance.now();
  return {
    createMs, progressAfterReturn, progress, result, cancelMs: end - cancelAt, cancelFromDueMs: end - due, firstProgressMs,
    longestBlockMs: probe.stop(), progressAfterCancel,
  };
}

/**
 * Small enough to evaluate often, big enough that a step takes a few ms, and far from its target:
 * the tests that cancel or hit the time limit must not race the trainer's own success. Reversing
 * 6 symbols of 8, hidden 32 reached exact match 1 in 720 steps (under 1 s, 2026-11-25); 20-30 of
 * 26 symbols stayed at exact match 0 for 6 s (787 steps).
 */
export const SMALL: CreateTrainerOptions = {
  task: 'reverse', hidden: 32, symbols: 26, minLength: 20, maxLength: 30, evalEvery: 40, evalSize: 40, maxSeconds: 60, targetAccuracy: 1,
};
