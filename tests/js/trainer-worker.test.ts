// createTrainer({ worker: true }) in Node: a worker_threads Worker with its own instance reports
// progress, settles done (time limit, target, cancel), rejects when onProgress throws, and leaves
// nothing behind that keeps the process alive once done or cancelled.
import { load, type Attnlab } from 'attnlab';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChildScript } from './child-script.js';
import { cancelRun, SMALL } from './trainer-probe.js';

let lib: Attnlab;
beforeAll(async () => {
  lib = await load({ variant: 'simd' });
});
afterAll(() => lib?.dispose());

describe('createTrainer in a worker thread (worker: true)', () => {
  // Times are printed, never asserted (they vary with the machine's load): the loop stays free
  // because this thread never loads the trainer module (its heap stays as it was), and cancel()
  // settles done within the turn that called it.
  it('progress from the Worker after createTrainer returned; cancel settles done in the same turn; no training on this thread', async () => {
    const own = await load({ variant: 'simd' });
    const heapBefore = own.heapStats().total;
    const r = await cancelRun(own, { ...SMALL, worker: true });
    const heapAfter = own.heapStats().total;
    own.dispose();
    console.log(`worker_threads: createTrainer ${r.createMs.toFixed(2)} ms, longest event-loop block ${r.longestBlockMs.toFixed(1)} ms, ` +
      `cancel() -> done ${r.cancelMs.toFixed(2)} ms (${r.turnsCancelToDone} turns), ${r.result.step} steps`);
    expect(r.progressAfterReturn).toBe(true);
    expect(r.progress.length).toBeGreaterThan(0);
    expect(r.progress.every((p) => p.thread === 'worker')).toBe(true);
    expect(r.result).toMatchObject({ reason: 'cancelled', thread: 'worker' });
    // The result carries the step the Worker had reached, not only the last evaluation's.
    expect(r.result.step).toBeGreaterThanOrEqual(r.progress[r.progress.length - 1].step);
    expect(r.result.step).toBeGreaterThan(r.progress[0].step);
    expect(r.turnsCancelToDone).toBe(0);
    expect(r.progressAfterCancel).toBe(0);
    expect(heapAfter).toBe(heapBefore);
  }, 60_000);

  it('trains to the time limit and to the target, with the same numbers as in-process', async () => {
    const timed = await lib.createTrainer({ ...SMALL, worker: true, maxSeconds: 1, evalEvery: 1000 }).done;
    expect(timed).toMatchObject({ reason: 'time', thread: 'worker' });
    expect(timed.step).toBeGreaterThan(0);
    expect(timed.step).toBeLessThan(1000);
    const firstProgress = (worker: boolean) => new Promise<Record<string, unknown>>((resolve) => {
      const s = lib.createTrainer({ ...SMALL, worker, onProgress: ({ step, loss, exactMatch, example }) => {
        s.cancel();
        resolve({ step, loss, exactMatch, example });
      } });
    });
    const [inWorker, inProcess] = [await firstProgress(true), await firstProgress(false)];
    expect(inWorker.step).toBe(SMALL.evalEvery);
    expect(inWorker).toEqual(inProcess);
    const t = await lib.createTrainer({ ...SMALL, worker: true, targetAccuracy: 0 }).done;
    expect(t).toMatchObject({ reason: 'target', step: SMALL.evalEvery, thread: 'worker' });
  }, 60_000);

  it('an onProgress that throws rejects done with its error', async () => {
    const boom = new Error('boom');
    await expect(lib.createTrainer({ ...SMALL, worker: true, onProgress: () => { throw boom; } }).done).rejects.toBe(boom);
  }, 60_000);

  it('the process exits on its own after done and after cancel (the Worker is gone)', () => {
    const t0 = Date.now();
    const out: { a: string; b: string; left: string[]; exitMs: number } = JSON.parse(runChildScript('trainer-exit', `
      import { load } from 'attnlab';
      // The process's own pipes (opened on first use; a Worker's output goes through them).
      void [process.stdout, process.stderr];
      const stdio = process.getActiveResourcesInfo();
      const lib = await load({ variant: 'simd' });
      const a = await lib.createTrainer({ worker: true, hidden: 16, maxSeconds: 0.3, evalSize: 10 }).done;
      const s = lib.createTrainer({ worker: true, hidden: 16, evalEvery: 5, evalSize: 10, onProgress: () => s.cancel() });
      const b = await s.done;
      lib.dispose();
      const left = process.getActiveResourcesInfo();
      for (const x of stdio) if (left.includes(x)) left.splice(left.indexOf(x), 1);
      const t = performance.now();
      process.on('exit', () => console.log(JSON.stringify({ a: a.reason, b: b.reason, left, exitMs: performance.now() - t })));
    `, { timeout: 60_000 }));
    console.log(`worker_threads child: exited ${out.exitMs.toFixed(1)} ms after its last await (run ${Date.now() - t0} ms), left then: ${out.left.join(', ') || 'nothing'}`);
    expect(out.a).toBe('time');
    expect(out.b).toBe('cancelled');
    // It exited (no timeout), and promptly: after the last await no timer or immediate was left,
    // only the ports of Workers being terminated.
    expect(out.left.filter((x) => x !== 'MessagePort')).toEqual([]);
  }, 90_000);
});
