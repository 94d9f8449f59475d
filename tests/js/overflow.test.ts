// Finite inputs whose scores or masks pass float32's range (issue 17, item 5): the right answer
// where float32 can hold it, else an Error naming the argument; never NaN. References in float64
// (tests/js/reference.ts); the fused kernel recomputes such rows exactly (flash_attention.cpp).
import { load, type Attnlab, type Tensor } from 'attnlab';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxError, randn, refAttention, refMultiHead } from './reference';
import { refLsh, refShaw } from './reference-relative';

const T = (data: number[], shape: number[]): Tensor => ({ data: Float32Array.from(data), shape });
const scaled = (t: Tensor, s: number): Tensor => ({ data: t.data.map((x) => x * s), shape: t.shape });

/** Largest |got - want| relative to the largest |want| (1 when want is all zeros). */
function relError(got: ArrayLike<number>, want: ArrayLike<number>): number {
  let e = 0, m = 0;
  for (let i = 0; i < want.length; i++) {
    expect(Number.isFinite(got[i]), `index ${i}: ${got[i]}`).toBe(true);
    e = Math.max(e, Math.abs(got[i] - want[i]));
    m = Math.max(m, Math.abs(want[i]));
  }
  return e / (m || 1);
}

for (const variant of ['scalar', 'simd'] as const) {
  describe(`scores and masks beyond float32 (${variant})`, () => {
    let lib: Attnlab;
    beforeAll(async () => {
      lib = await load({ variant });
    });
    afterAll(() => lib?.dispose());

    it('attention, causal, q = k = [[1e20, 0], [0, 1e20]]: scores of 7e39 give the exact weights', () => {
      const q = T([1e20, 0, 0, 1e20], [1, 2, 2]);
      const v = T([1, 2, 3, 4], [1, 2, 2]);
      const r = lib.attention(q, q, v, { causal: true, returnWeights: true });
      expect(Array.from(r.weights!.data)).toEqual([1, 0, 0, 1]);
      expect(Array.from(r.output.data)).toEqual([1, 2, 3, 4]);
    });

    it('attention with q, k, v of magnitude 1e30 (dense and causal, with weights or not) matches float64', () => {
      const q = scaled(randn([2, 5, 8], 1), 1e30), k = scaled(randn([2, 7, 8], 2), 1e30), v = scaled(randn([2, 7, 3], 3), 1e30);
      for (const causal of [false, true]) {
        const want = refAttention(q, k, v, { causal });
        const r = lib.attention(q, k, v, { causal, returnWeights: true });
        expect(relError(r.weights!.data, want.weights.data), `causal ${causal}`).toBeLessThan(1e-6);
        expect(relError(r.output.data, want.output.data), `causal ${causal}`).toBeLessThan(1e-6);
        expect(relError(lib.attention(q, k, v, { causal }).output.data, want.output.data)).toBeLessThan(1e-6);
      }
    });

    it('scores of -1e40 (every visible key overflows to -inf) still give the softmax, not a "fully masked" zero row', () => {
      const q = T([1e20, 0, -1e20, 0], [1, 2, 2]), k = T([1e20, 0, 2e20, 0], [1, 2, 2]), v = T([1, 2, 3, 4], [1, 2, 2]);
      const want = refAttention(q, k, v, {});
      const r = lib.attention(q, k, v, { returnWeights: true });
      expect(Array.from(r.weights!.data)).toEqual(Array.from(want.weights.data));  // [0, 1, 1, 0]
      expect(Array.from(r.output.data)).toEqual(Array.from(want.output.data));
    });

    it('an additive attnMask near float32 max (3e38; x log2(e) in base 2 would overflow) matches maskedSoftmax and float64', () => {
      const q = randn([1, 3, 4], 4), k = randn([1, 5, 4], 5), v = randn([1, 5, 2], 6);
      const mask = T([3e38, 0, 0, 0, 0, 0, 3e38, 3e38, 0, 0, -3e38, -3e38, -3e38, -3e38, -3e38], [3, 5]);
      const want = refAttention(q, k, v, { attnMask: mask });
      const r = lib.attention(q, k, v, { attnMask: mask, returnWeights: true });
      expect(relError(r.weights!.data, want.weights.data)).toBeLessThan(1e-6);
      expect(relError(r.output.data, want.output.data)).toBeLessThan(1e-5);
      // Row 2: every key -3e38: equal weights, as the softmax of equal scores gives.
      expect(Array.from(r.weights!.data.subarray(10, 15))).toEqual([0.2, 0.2, 0.2, 0.2, 0.2].map(Math.fround));
    });

    it('attentionScores beyond float32 is an Error naming q and k; within range it is exact', () => {
      const q = T([1e20, 0, 0, 1e20], [1, 2, 2]);
      expect(() => lib.attentionScores(q, q)).toThrowError(/^attentionScores: q, k: the scores overflow float32 \(beyond ±3\.4e38\) at index 0; scale the inputs down$/);
      const s = lib.attentionScores(scaled(q, 1e-2), scaled(q, 1e-2), { score: 'dot' });
      expect(relError(s.data, [1e36, 0, 0, 1e36])).toBeLessThan(1e-6);
      expect(lib.attention(q, q, q).output.data.every(Number.isFinite)).toBe(true);  // the instance still works
    });

    it("'general' score whose q W passes float32 is an Error naming q and params.W", () => {
      const q = T([3e38, 3e38], [1, 1, 2]);
      const W = T([2, 2, 2, 2], [2, 2]);
      expect(() => lib.attention(q, q, q, { score: 'general', params: { W } })).toThrowError(/^attention: q, params\.W: q W overflows float32/);
    });

    it('multiHeadAttention with inputs of 1e20 and a float keyPaddingMask of 3e38 matches float64', () => {
      const E = 8, H = 2, B = 2, L = 3, S = 4;
      const p = { numHeads: H, inProjWeight: randn([3 * E, E], 7, 0.3), inProjBias: randn([3 * E], 8, 0.1), outProjWeight: randn([E, E], 9, 0.3), outProjBias: randn([E], 10, 0.1) };
      const x = scaled(randn([B, L, E], 11), 1e20), kv = scaled(randn([B, S, E], 12), 1e20);
      for (const keyPaddingMask of [undefined, T([3e38, 0, 0, 0, 0, -3e38, 3e38, 0], [B, S])]) {
        const want = refMultiHead(x, kv, kv, p, { keyPaddingMask, averageWeights: true });
        const r = lib.multiHeadAttention(x, kv, kv, p, { keyPaddingMask, needWeights: true });
        expect(relError(r.weights!.data, want.weights.data), String(!!keyPaddingMask)).toBeLessThan(1e-4);
        expect(relError(r.output.data, want.output.data), String(!!keyPaddingMask)).toBeLessThan(1e-4);
      }
    });

    // Issue 18's variants, to the same rule.
    it('lshAttention with qk of 1e20 (|qk|^2 past float32), 2e38 (scores past it) and 1e-25 matches float64', () => {
      const v = randn([2, 16, 3], 21);
      const base = randn([2, 16, 8], 20);
      // Entries in [1e38, 2e38]: |qk_i| and q.k near 4e38.
      const huge: Tensor = { data: base.data.map((x) => 2e38 * (0.75 + 0.25 * Math.tanh(x))), shape: base.shape };
      for (const [mag, qk] of [[1e20, scaled(base, 1e20)], [2e38, huge], [1e-25, scaled(base, 1e-25)]] as const) {
        const o = { nBuckets: 4, nHashes: 2, causal: true, seed: 2 };
        const r = lib.lshAttention(qk, v, { ...o, returnBuckets: true });
        const want = refLsh(qk, v, o);
        expect(Array.from(r.buckets!.data), String(mag)).toEqual(Array.from(want.buckets));
        expect(r.output.data.every(Number.isFinite), String(mag)).toBe(true);
        expect(maxError(r.output.data, want.out), String(mag)).toBeLessThan(1e-5);
      }
    });

    it("attention with shaw whose scores pass float32 (1e40, and every score near -1e40) matches float64", () => {
      const D = 4, Dv = 3, kmax = 1;
      const pos = (t: Tensor, s: number): Tensor => ({ data: t.data.map((x) => s * (Math.abs(x) + 0.1)), shape: t.shape });
      const keys = randn([2 * kmax + 1, D], 22), values = randn([2 * kmax + 1, Dv], 23), v = randn([2, 5, Dv], 24);
      for (const [q, k] of [[scaled(randn([2, 5, D], 25), 1e20), scaled(randn([2, 5, D], 26), 1e20)], [pos(randn([2, 5, D], 25), 1e20), pos(randn([2, 5, D], 26), -1e20)]]) {
        const r = lib.attention(q, k, v, { shaw: { maxDistance: kmax, keys, values }, causal: true, returnWeights: true });
        const want = refShaw(q.data, k.data, v.data, 2, 5, 5, D, Dv, keys.data, values.data, kmax, { causal: true });
        expect(r.output.data.every(Number.isFinite)).toBe(true);
        expect(maxError(r.output.data, want.out)).toBeLessThan(1e-5);
        expect(maxError(r.weights!.data, want.weights)).toBeLessThan(1e-5);
      }
    });

    it('attention with a sparse pattern whose scores pass float32 (3e19, 1e20, 1e30) matches the dense path and float64', () => {
      const v = randn([2, 9, 2], 32);
      for (const mag of [3e19, 1e20, 1e30]) {
        const q = scaled(randn([2, 9, 4], 30), mag), k = scaled(randn([2, 9, 4], 31), mag);
        for (const pattern of [{ type: 'local', window: 2 }, { type: 'longformer', window: 1, global: [0] }, { type: 'bigbird', blockSize: 2, windowBlocks: 1, randomBlocks: 1 }] as const) {
          for (const causal of [false, true]) {
            const name = `${mag} ${pattern.type} causal ${causal}`;
            const attnMask = lib.attentionPattern(pattern, 9, 9);
            const want = refAttention(q, k, v, { causal, attnMask });
            const r = lib.attention(q, k, v, { pattern, causal, returnWeights: true });
            expect(relError(r.output.data, want.output.data), name).toBeLessThan(1e-6);
            expect(relError(r.weights!.data, want.weights.data), name).toBeLessThan(1e-6);
            const dense = lib.attention(q, k, v, { attnMask, causal }).output.data;
            expect(relError(lib.attention(q, k, v, { pattern, causal }).output.data, dense), name).toBeLessThan(1e-6);
          }
        }
      }
    });

    it('linearAttention (elu, favor+) past float32 is an Error naming the arguments, never NaN or Infinity', () => {
      const c = (shape: number[], x: number): Tensor => ({ data: new Float32Array(shape.reduce((a, b) => a * b)).fill(x), shape });
      expect(() => lib.linearAttention(c([1, 3, 4], 1e19), c([1, 5, 4], 1e19), c([1, 5, 2], 0.5))).toThrowError(/^linearAttention: q, k: the normaliser phi\(q\)\.z overflows float32 \(beyond ±3\.4e38\) at query 0 of slice 0; scale the inputs down$/);
      expect(() => lib.linearAttention(c([1, 3, 4], 0.1), c([1, 5, 4], 0.1), c([1, 5, 2], 1e38))).toThrowError(/^linearAttention: q, k, v: the output overflows float32 \(beyond ±3\.4e38\) at query 0 of slice 0; scale the inputs down$/);
      const big = (seed: number, shape: number[]) => scaled(randn(shape, seed), 1e20);
      expect(() => lib.linearAttention(big(33, [1, 3, 4]), big(34, [1, 5, 4]), randn([1, 5, 2], 35), { method: 'favor+' })).toThrowError(/^linearAttention: q, k: the normaliser phi\(q\)\.z overflows float32 \(beyond ±3\.4e38\) at query 0 of slice 0; scale the inputs down$/);
      // Within range the results are untouched, and the instance keeps working.
      expect(lib.linearAttention(c([1, 3, 4], 1e3), c([1, 5, 4], 1e3), c([1, 5, 2], 0.5)).output.data).toEqual(new Float32Array(6).fill(0.5));
    });

    it('rope whose rotation passes float32 is an Error naming x (attention: q or k), not ±Infinity', () => {
      const x = T(Array.from({ length: 16 }, (_, i) => (i % 2 ? 3.4e38 : -3.4e38)), [4, 4]);
      expect(() => lib.rope(x, { offset: 1 })).toThrowError(/^rope: x: the rotation overflows float32 \(beyond ±3\.4e38\) at index \d+; scale the inputs down$/);
      const q3 = { data: x.data, shape: [1, 4, 4] };
      expect(() => lib.attention(q3, randn([1, 4, 4], 36), randn([1, 4, 2], 37), { rope: true })).toThrowError(/^attention: q, options\.rope: the rotation overflows float32 \(beyond ±3\.4e38\) at index \d+; scale the inputs down$/);
      expect(() => lib.attention(randn([1, 4, 4], 36), q3, randn([1, 4, 2], 37), { rope: true })).toThrowError(/^attention: k, options\.rope: the rotation overflows float32/);
      expect(Array.from(lib.rope({ data: x.data.subarray(0, 4), shape: [1, 4] }).data)).toEqual(Array.from(x.data.subarray(0, 4)));  // position 0: no turn
    });

    it('synthesizer whose scores pass float32 is an Error naming its parameters; the instance keeps working', () => {
      const v = randn([6, 2], 27), R1 = scaled(randn([6, 2], 28), 1e20), R2 = scaled(randn([6, 2], 29), 1e20);
      expect(() => lib.synthesizer(null, v, { kind: 'factorized-random', R1, R2 })).toThrowError(/^synthesizer: options\.R1, options\.R2: the scores overflow float32 \(beyond ±3\.4e38\) at query 0, key 0 of slice 0; scale the parameters or inputs down$/);
      const small = lib.synthesizer(null, v, { kind: 'factorized-random', R1: scaled(R1, 1e-20), R2: scaled(R2, 1e-20) });
      expect(small.output.data.every(Number.isFinite)).toBe(true);
    });

    it('linear whose product passes float32 is an Error naming x and weight; the instance keeps working', () => {
      const x = T([1e30, 1e30], [1, 2]), W = T([1e30, 1e30, 1, 1], [2, 2]);
      expect(() => lib.linear(x, W)).toThrowError(/^linear: x, weight: the product overflows float32 \(beyond ±3\.4e38\) at index 0; scale the inputs down$/);
      expect(relError(lib.linear(T([1, 2], [1, 2]), W, T([1, -1], [2])).data, [3e30, 2])).toBeLessThan(1e-6);
    });

    it('multiHeadAttention whose projection passes float32 is an Error naming the input', () => {
      const E = 2;
      const p = { numHeads: 1, inProjWeight: T(Array(3 * E * E).fill(2), [3 * E, E]), outProjWeight: T([1, 0, 0, 1], [E, E]) };
      const x = T([3e38, 3e38], [1, 1, E]);
      expect(() => lib.multiHeadAttention(x, x, x, p)).toThrowError(/^multiHeadAttention: query, params\.inProjWeight: the query projection overflows float32/);
    });
  });
}
