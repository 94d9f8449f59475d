// 10,000 calls leave the WebAssembly heap no larger than after the first 100: every call frees
// what it allocated, on success and on error.
import { describe, expect, it } from 'vitest';
import { randBool, randn } from './reference.js';
import { useVariants, VARIANTS } from './variants.js';

const libs = useVariants();
const q = randn([2, 2, 6, 8], 1), k = randn([2, 2, 9, 8], 2), v = randn([2, 2, 9, 8], 3);
const mask = randBool([6, 9], 4, 0.8);
const x = randn([6, 8], 5);
const mha = { numHeads: 2, inProjWeight: randn([24, 8], 6), inProjBias: randn([24], 7), outProjWeight: randn([8, 8], 8) };
const pts = randn([20], 9);

describe.each(VARIANTS)('%s', (variant) => {
  it('10,000 mixed calls keep the heap flat', () => {
    const lib = libs[variant];
    const call = (i: number) => {
      switch (i % 6) {
        case 0: return lib.attention(q, k, v, { causal: true, returnWeights: true });
        case 1: return lib.attention(q, k, v, { attnMask: mask, validLens: new Int32Array([3, 9]) });
        case 2: return lib.multiHeadAttention(x, x, x, mha, { needWeights: true, causal: true });
        case 3: return lib.nadarayaWatson(pts, pts, pts, { kernel: 'epanechnikov', bandwidth: 0.3 });
        case 4: return lib.maskedSoftmax(x, { causal: true });
        default:
          try { lib.attention(q, x, v); } catch { /* a failing call must not leak either */ }
          return lib.positionalEncoding(16, 8);
      }
    };
    for (let i = 0; i < 100; i++) call(i);
    const after100 = lib.heapStats();
    for (let i = 100; i < 10_000; i++) call(i);
    const after10k = lib.heapStats();
    expect(after10k.used).toBeLessThanOrEqual(after100.used);
    expect(after10k.total).toBeLessThanOrEqual(after100.total);
  });
});

// Long sequences need O(S) memory, not O(S^2): the S x S scores are never materialised.
describe('long causal attention', () => {
  it('H=1, S=16384, d=64 runs in a heap of at most 256 MB, inputs and output included', async () => {
    const { load } = await import('attnlab');
    const lib = await load({ variant: 'simd' });
    const S = 16384, d = 64;
    const q = randn([1, S, d], 11), k = randn([1, S, d], 12), v = randn([1, S, d], 13);
    const { output } = lib.attention(q, k, v, { causal: true });
    expect(output.shape).toEqual([1, S, d]);
    // Spot-check the first and last rows against the float64 formula.
    for (const i of [0, 1, S - 1]) {
      const s = new Float64Array(i + 1);
      let m = -Infinity;
      for (let j = 0; j <= i; j++) {
        let acc = 0;
        for (let c = 0; c < d; c++) acc += q.data[i * d + c] * k.data[j * d + c];
        s[j] = acc / Math.sqrt(d);
        m = Math.max(m, s[j]);
      }
      let sum = 0;
      for (let j = 0; j <= i; j++) sum += (s[j] = Math.exp(s[j] - m));
      for (let c = 0; c < d; c++) {
        let want = 0;
        for (let j = 0; j <= i; j++) want += (s[j] / sum) * v.data[j * d + c];
        expect(Math.abs(output.data[i * d + c] - want)).toBeLessThanOrEqual(1e-5);
      }
    }
    expect(lib.heapStats().total).toBeLessThanOrEqual(256 * 2 ** 20);
    lib.dispose();
  });
});
