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

// Inputs of 4096 values or more are checked for NaN/inf by the SIMD kernel on their heap copy,
// which the run then uses (one copy per input): a check failing after earlier inputs were copied
// must free those copies, and an array passed twice must get a second copy (rope turns q's copy
// in place).
describe.each(VARIANTS)('%s, big inputs', (variant) => {
  const S = 64, d = 64;  // 4096 values per head
  const bq = randn([2, S, d], 21), bk = randn([2, S, d], 22), bv = randn([2, S, d], 23);
  const nan = { data: bk.data.slice(), shape: bk.shape };
  nan.data[5000] = NaN;
  const bx = randn([S, 128], 24), bw = randn([64, 128], 25);
  const bw2 = { data: bw.data.slice(), shape: bw.shape };
  bw2.data[4100] = Infinity;
  const bmha = { numHeads: 2, inProjWeight: randn([384, 128], 26), outProjWeight: randn([128, 128], 27) };

  it('failed checks free the copies already made', () => {
    const lib = libs[variant];
    const calls = [
      () => lib.attention(bq, nan, bv),
      () => lib.attention(bq, bk, nan),
      () => lib.linear(bx, bw2),
      () => lib.multiHeadAttention(bx, bx, { data: bx.data.map((x, i) => (i === 4097 ? NaN : x)), shape: bx.shape }, bmha),
    ];
    const names = ["attention: k: expected finite values, got NaN at index 5000", 'attention: v: expected finite values, got NaN at index 5000',
      'linear: weight: expected finite values, got Infinity at index 4100', 'multiHeadAttention: value: expected finite values, got NaN at index 4097'];
    calls.forEach((c, i) => expect(c).toThrow(names[i]));
    const before = lib.heapStats();
    for (let r = 0; r < 50; r++) for (const c of calls) expect(c).toThrow();
    expect(lib.heapStats().used).toBeLessThanOrEqual(before.used);
    lib.attention(bq, bk, bv);  // and the module still works
    lib.linear(bx, bw);
    expect(lib.heapStats().used).toBeLessThanOrEqual(before.used);
  });

  it('one array as q and k (with rope) matches two separate copies of it', () => {
    const lib = libs[variant];
    const twin = { data: bq.data.slice(), shape: bq.shape };
    const same = lib.attention(bq, bq, bv, { rope: true }).output.data;
    const separate = lib.attention(bq, twin, bv, { rope: true }).output.data;
    expect(same).toEqual(separate);
    expect(lib.attention(bq, bq, bq).output.data).toEqual(lib.attention(bq, twin, { data: bq.data.slice(), shape: bq.shape }).output.data);
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
