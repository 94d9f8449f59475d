// createTrainer on the calling thread (Node's default, and the browser fallback): createTrainer()
// returns before any work, progress only after it returned, the event loop keeps turning (the
// training runs in ~8 ms slices of whole steps: one step, 20-150 ms for the default model, is the
// floor), cancel() settles `done` at the next turn. Times are printed, never asserted (they vary
// with the machine's load): the assertions count event-loop turns, and the slicing is checked under
// a stepped clock (the unsliced trainer ran a whole evaluation interval in one turn).
import { load, type Attnlab } from 'attnlab';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelRun, loopProbe, SMALL, steppedClockTurns } from './trainer-probe.js';

let lib: Attnlab;
beforeAll(async () => {
  lib = await load({ variant: 'simd' });
  // A process's first training step is several times slower than the next (0.6-0.7 s against
  // 0.15 s for the default model on a loaded machine): warm up, and print that first block.
  const probe = loopProbe();
  await lib.createTrainer({ worker: false, maxSeconds: 0.01, evalSize: 1 }).done;
  console.log(`in-process warm-up: first default-model step blocked the loop for ${probe.stop().toFixed(1)} ms`);
}, 60_000);
afterAll(() => lib?.dispose());

describe('createTrainer in-process (worker: false)', () => {
  // That createTrainer() does no training before it returns: 'cancel() before the first turn' below.
  it('default model: progress after return, the loop turns between slices, cancel settles done at the next turn', async () => {
    const r = await cancelRun(lib, { worker: false, targetAccuracy: 1, maxSeconds: 60 });
    const sliced = await steppedClockTurns(lib, { targetAccuracy: 1, maxSeconds: 60, evalEvery: 50, evalSize: 200 });
    console.log(`in-process, default options: createTrainer ${r.createMs.toFixed(2)} ms, first progress ${r.firstProgressMs.toFixed(0)} ms, longest event-loop block ${r.longestBlockMs.toFixed(1)} ms, ` +
      `cancel() -> done ${r.cancelMs.toFixed(2)} ms (${r.cancelFromDueMs.toFixed(1)} ms after the 0 ms timer was set, ${r.turnsCancelToDone} turns), ${r.result.step} steps; ` +
      `stepped clock: ${sliced.turns} turns to the first progress (at least ${sliced.atLeast})`);
    expect(r.progressAfterReturn).toBe(true);
    expect(r.progress.length).toBeGreaterThan(0);
    expect(r.progress.every((p) => p.thread === 'main')).toBe(true);
    expect(r.result.reason).toBe('cancelled');
    expect(r.result.thread).toBe('main');
    expect(r.result.step).toBeGreaterThan(r.progress[0].step);
    // done settles in the trainer's next turn, queued before cancel(): before any turn queued after it.
    expect(r.turnsCancelToDone).toBe(0);
    expect(r.progressAfterCancel).toBe(0);
    // 50 steps and 200 evaluations ran in many slices, not in one block.
    expect(sliced.turns).toBeGreaterThanOrEqual(sliced.atLeast);
    // The stepped clock changes how the slices fall, not the numbers.
    expect(sliced.progress).toMatchObject({ step: r.progress[0].step, loss: r.progress[0].loss, exactMatch: r.progress[0].exactMatch });
  }, 90_000);

  it('a small model too, and the held-out evaluation is deterministic', async () => {
    const a = await cancelRun(lib, { ...SMALL, worker: false });
    const b = await cancelRun(lib, { ...SMALL, worker: false });
    const sliced = await steppedClockTurns(lib, SMALL);
    console.log(`in-process, hidden 32: first progress ${a.firstProgressMs.toFixed(0)} / ${b.firstProgressMs.toFixed(0)} ms, longest block ${a.longestBlockMs.toFixed(1)} / ${b.longestBlockMs.toFixed(1)} ms, ` +
      `cancel ${a.cancelMs.toFixed(2)} / ${b.cancelMs.toFixed(2)} ms (${a.turnsCancelToDone} / ${b.turnsCancelToDone} turns); stepped clock: ${sliced.turns} turns to the first progress (at least ${sliced.atLeast})`);
    expect(a.progressAfterReturn && b.progressAfterReturn).toBe(true);
    expect([a.turnsCancelToDone, b.turnsCancelToDone]).toEqual([0, 0]);
    expect(sliced.turns).toBeGreaterThanOrEqual(sliced.atLeast);
    // Same seed, same steps: same loss and accuracy at the first evaluation, however the slices fell.
    expect(b.progress[0]).toMatchObject({ step: a.progress[0].step, loss: a.progress[0].loss, exactMatch: a.progress[0].exactMatch });
  }, 60_000);

  it('cancel() before the first turn: done resolves cancelled at step 0, no progress, nothing left on the heap', async () => {
    const before = lib.heapStats().used;
    let events = 0;
    const s = lib.createTrainer({ ...SMALL, worker: false, onProgress: () => events++ });
    s.cancel();
    const r = await s.done;
    expect([r.reason, r.step, r.thread, events]).toEqual(['cancelled', 0, 'main', 0]);
    expect(lib.heapStats().used).toBe(before);
  });

  it("the instance's dispose() cancels its running trainers, on this thread and in a Worker; [Symbol.dispose] is cancel()", async () => {
    const own = await load({ variant: 'simd' });
    let events = 0;
    const here = own.createTrainer({ ...SMALL, worker: false, onProgress: () => events++ });
    const there = own.createTrainer({ ...SMALL, worker: true });
    await new Promise((r) => setTimeout(r, 300));
    own.dispose();
    const [a, b] = await Promise.all([here.done, there.done]);
    expect([a.reason, a.thread, b.reason, b.thread]).toEqual(['cancelled', 'main', 'cancelled', 'worker']);
    const seen = events;
    await new Promise((r) => setTimeout(r, 300));
    expect(events).toBe(seen);
    const s = lib.createTrainer({ ...SMALL, worker: false });
    s[Symbol.dispose]();
    expect((await s.done).reason).toBe('cancelled');
  }, 30_000);

  it("the instance's dispose() while a trainer's module is still loading: done resolves 'cancelled', not the load's 'disposed' Error", async () => {
    const own = await load({ variant: 'simd' });
    // The trainer's nn module is the next WebAssembly instance made: it waits at this gate, so the
    // dispose() below lands inside the load whatever the machine's speed.
    const instantiate = WebAssembly.instantiate;
    let entered!: () => void, open!: () => void;
    const loading = new Promise<void>((r) => { entered = r; });
    const gate = new Promise<void>((r) => { open = r; });
    WebAssembly.instantiate = (async (...args: Parameters<typeof instantiate>) => {
      entered();
      await gate;
      return instantiate.apply(WebAssembly, args);
    }) as typeof instantiate;
    try {
      const s = own.createTrainer({ ...SMALL, worker: false });
      await loading;
      own.dispose();
      open();
      const r = await s.done;
      expect([r.reason, r.step]).toEqual(['cancelled', 0]);
    } finally {
      WebAssembly.instantiate = instantiate;
    }
  });

  it('stops at maxSeconds with a final evaluation, and the timers it used are gone', async () => {
    const probe = loopProbe();
    const progress: number[] = [];
    const r = await lib.createTrainer({ ...SMALL, worker: false, maxSeconds: 0.5, evalEvery: 1000, onProgress: (p) => progress.push(p.step) }).done;
    probe.stop();
    expect(r.reason).toBe('time');
    expect(r.step).toBeGreaterThan(0);
    expect(r.step).toBeLessThan(1000);
    expect(r.example).not.toBeNull();
    // 0.5 s of training plus one evaluation of 40 sequences (its one progress event), not the 1000 steps asked for.
    expect(progress).toEqual([r.step]);
  }, 30_000);

  it('an onProgress that throws stops the training and rejects done with its error; the instance keeps working', async () => {
    const boom = new Error('boom');
    let calls = 0;
    const s = lib.createTrainer({ ...SMALL, worker: false, onProgress: () => { calls++; throw boom; } });
    await expect(s.done).rejects.toBe(boom);
    await new Promise((r) => setTimeout(r, 50));
    expect(calls).toBe(1);
    const again = lib.createTrainer({ ...SMALL, worker: false, maxSeconds: 0.2 });
    expect((await again.done).reason).toBe('time');
  }, 30_000);
});
