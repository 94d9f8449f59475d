// The variants agree with each other, and the threaded build gives bit-identical results for
// any thread count (each output row is computed by one thread in a fixed order).
import { load, type Attnlab } from 'attnlab';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxError, randBool, randn } from './reference.js';
import { useVariants } from './variants.js';

const libs = useVariants();
let threaded: Attnlab[] = [];
beforeAll(async () => {
  threaded = [await load({ variant: 'simd-threads', threads: 1 }), await load({ variant: 'simd-threads', threads: 3 })];
});
afterAll(() => threaded.forEach((l) => l.dispose()));

const q = randn([2, 4, 70, 32], 1), k = randn([2, 4, 90, 32], 2), v = randn([2, 4, 90, 16], 3);
const runs = (lib: Attnlab) => [
  lib.attention(q, k, v, { causal: true, returnWeights: true }),
  lib.attention(q, k, v, { attnMask: randBool([1, 4, 70, 90], 4, 0.6), validLens: new Int32Array([50, 90]), returnWeights: true }),
  lib.multiHeadAttention(randn([3, 40, 32], 5), randn([3, 50, 32], 6), randn([3, 50, 32], 7),
    { numHeads: 4, inProjWeight: randn([96, 32], 8, 0.3), outProjWeight: randn([32, 32], 9, 0.3) }, { needWeights: true, averageWeights: false }),
];

describe('consistency', () => {
  it('scalar, simd and simd-threads agree within 1e-5', () => {
    const [a, b, c] = [runs(libs.scalar), runs(libs.simd), runs(libs['simd-threads'])];
    for (let i = 0; i < a.length; i++) {
      expect(maxError(b[i].output.data, a[i].output.data)).toBeLessThanOrEqual(1e-5);
      expect(maxError(c[i].output.data, a[i].output.data)).toBeLessThanOrEqual(1e-5);
      expect(maxError(c[i].weights!.data, a[i].weights!.data)).toBeLessThanOrEqual(1e-5);
    }
  });

  it('simd-threads with 1, 2 and 3 threads is bit-identical', () => {
    expect(threaded.map((l) => l.threads)).toEqual([1, 3]);
    const base = runs(threaded[0]);
    for (const lib of [libs['simd-threads'], threaded[1]]) {
      const got = runs(lib);
      for (let i = 0; i < base.length; i++) {
        expect(Buffer.compare(Buffer.from(got[i].output.data.buffer), Buffer.from(base[i].output.data.buffer))).toBe(0);
        expect(Buffer.compare(Buffer.from(got[i].weights!.data.buffer), Buffer.from(base[i].weights!.data.buffer))).toBe(0);
      }
    }
  });

  it('simd and simd-threads run the same kernels: bit-identical', () => {
    const [b, c] = [runs(libs.simd), runs(libs['simd-threads'])];
    for (let i = 0; i < b.length; i++) expect(c[i].output.data).toEqual(b[i].output.data);
  });
});
