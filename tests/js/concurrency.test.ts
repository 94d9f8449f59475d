// Several Workers, each with its own attnlab instance, computing at the same time: every one gets
// the float64 reference's answer (within 1e-5), and repeats it bit for bit while the others run.
// (Overlapping async calls on one WebGPU instance: webgpu.test.ts.)
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { maxError, randn, refAttention, refMultiHead } from './reference.js';

interface Job {
  op: 'attention' | 'mha';
  inputs: ReturnType<typeof randn>[];
  validLens?: Int32Array;
  params?: Record<string, unknown>;
}

function jobsFor(seed: number): Job[] {
  const E = 16;
  const x = randn([2, 37, E], seed);
  return [
    { op: 'attention', inputs: [randn([2, 3, 70, 24], seed + 1), randn([2, 3, 90, 24], seed + 2), randn([2, 3, 90, 8], seed + 3)], validLens: new Int32Array([55, 90]) },
    { op: 'mha', inputs: [x, x, x], params: { numHeads: 4, inProjWeight: randn([3 * E, E], seed + 4, 0.3), inProjBias: randn([3 * E], seed + 5), outProjWeight: randn([E, E], seed + 6, 0.3) } },
  ];
}

function reference(job: Job) {
  const [q, k, v] = job.inputs;
  return job.op === 'mha'
    ? refMultiHead(q, k, v, job.params as never, { causal: true })
    : refAttention(q, k, v, { causal: true, validLens: job.validLens });
}

function runWorker(variant: string, threads: number, jobs: Job[]): Promise<{ variant: string; threads: number; identical: boolean; results: { output: Float32Array; weights: Float32Array }[] }> {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL('./fixtures/attention-worker.mjs', import.meta.url), { workerData: { variant, threads, rounds: 40, jobs } });
    w.once('message', resolve);
    w.once('error', reject);
    w.once('exit', (code) => { if (code !== 0) reject(new Error(`worker for ${variant} exited with ${code}`)); });
  });
}

describe('several Workers, one instance each', () => {
  it('scalar, simd, simd-threads and a second simd instance run at once and all match the reference', async () => {
    const plan = [['scalar', 1, 11], ['simd', 1, 21], ['simd-threads', 2, 31], ['simd', 1, 41]] as const;
    const jobs = plan.map(([, , seed]) => jobsFor(seed));
    const results = await Promise.all(plan.map(([variant, threads], i) => runWorker(variant, threads, jobs[i])));
    results.forEach((r, i) => {
      expect(r.variant).toBe(plan[i][0]);
      expect(r.threads).toBe(plan[i][1]);
      expect(r.identical).toBe(true);
      jobs[i].forEach((job, j) => {
        const want = reference(job);
        expect(maxError(r.results[j].output, want.output.data)).toBeLessThanOrEqual(1e-5);
        expect(maxError(r.results[j].weights, want.weights.data)).toBeLessThanOrEqual(1e-5);
      });
    });
  }, 120_000);
});
