// Finite inputs whose scores or masks pass float32's range (issue 17, item 5): the right answer
// where float32 can hold it, else an Error naming the argument; never NaN. References in float64
// (tests/js/reference.ts); the fused kernel recomputes such rows exactly (flash_attention.cpp).
import { load, type Attnlab, type Tensor } from 'attnlab';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randn, refAttention, refMultiHead } from './reference';

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

    it('multiHeadAttention whose projection passes float32 is an Error naming the input', () => {
      const E = 2;
      const p = { numHeads: 1, inProjWeight: T(Array(3 * E * E).fill(2), [3 * E, E]), outProjWeight: T([1, 0, 0, 1], [E, E]) };
      const x = T([3e38, 3e38], [1, 1, E]);
      expect(() => lib.multiHeadAttention(x, x, x, p)).toThrowError(/^multiHeadAttention: query, params\.inProjWeight: the query projection overflows float32/);
    });
  });
}
