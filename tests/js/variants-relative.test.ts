// Relative position beyond RoPE and ALiBi: T5's bucketed bias and Shaw's relative embeddings in
// attention and multi-head attention against float64 references, and their bad inputs.
import { describe, expect, it } from 'vitest';
import type { Tensor } from 'attnlab';
import { maxError, randn, refAttention, refMultiHead } from './reference.js';
import { refShaw, t5Bias, t5Bucket } from './reference-relative.js';
import { alibiBias, alibiSlopes } from './reference-variants.js';
import { useVariants, VARIANTS } from './variants.js';

const TOL = 1e-5;
const libs = useVariants();

/** [H, Sq, Sk] repeated over a leading batch B: [B * H, Sq, Sk]. */
function tiled(bias: Tensor, B: number): Tensor {
  const data = new Float32Array(B * bias.data.length);
  for (let b = 0; b < B; b++) data.set(bias.data, b * bias.data.length);
  return { data, shape: [B * bias.shape[0], ...bias.shape.slice(1)] };
}

/** x [B, n, E] as per-head rows [B, H, n, hd] (float64 projections regrouped). */
function perHead(x: Float64Array, B: number, n: number, H: number, hd: number): Float64Array {
  const y = new Float64Array(x.length);
  for (let b = 0; b < B; b++) for (let t = 0; t < n; t++) for (let h = 0; h < H; h++) for (let c = 0; c < hd; c++) y[((b * H + h) * n + t) * hd + c] = x[(b * n + t) * H * hd + h * hd + c];
  return y;
}

describe('T5 buckets (reference)', () => {
  it('match torch at a few points of T5\'s default scheme', () => {
    // From tests/cpp/t5_buckets_golden.inc (torch): numBuckets 32, maxDistance 128.
    expect([-300, -128, -127, -20, -8, -7, 0, 1, 7, 8, 20, 127, 128].map((r) => t5Bucket(r, true, 32, 128))).toEqual([15, 15, 15, 10, 8, 7, 0, 17, 23, 24, 26, 31, 31]);
    expect([-300, -20, -16, -15, 0, 5].map((r) => t5Bucket(r, false, 32, 128))).toEqual([31, 17, 16, 15, 0, 0]);
  });
});

describe.each(VARIANTS)('%s', (variant) => {
  const t5Cases = [
    { name: 'bidirectional, heads [2, 3]', lead: [2, 3], Sq: 9, Sk: 40, bidirectional: true, maxDistance: 20, nb: 8 },
    { name: 'causal scheme and mask, Sq > Sk', lead: [1, 2], Sq: 30, Sk: 12, bidirectional: false, causal: true, maxDistance: 10, nb: 6 },
    { name: 'q of rank 2: one head, T5 defaults', lead: [], Sq: 7, Sk: 200, bidirectional: undefined, nb: 32 },
  ];
  it.each(t5Cases)('attention with t5: $name', (c) => {
    const q = randn([...c.lead, c.Sq, 8], 1), k = randn([...c.lead, c.Sk, 8], 2), v = randn([...c.lead, c.Sk, 4], 3);
    const H = c.lead.at(-1) ?? 1;
    const weights = randn([H, c.nb], 4, 2);
    const got = libs[variant].attention(q, k, v, { t5: { weights, bidirectional: c.bidirectional, maxDistance: c.maxDistance }, causal: c.causal, returnWeights: true });
    const want = refAttention(q, k, v, { attnMask: t5Bias(weights, c.Sq, c.Sk, c.bidirectional ?? true, c.maxDistance ?? 128), causal: c.causal });
    expect(maxError(got.output.data, want.output.data)).toBeLessThanOrEqual(TOL);
    expect(maxError(got.weights!.data, want.weights.data)).toBeLessThanOrEqual(TOL);
  });

  it('t5Bias: the bias the t5 option adds, [heads, Sq, Sk]', () => {
    const weights = randn([2, 12], 5, 2);
    const got = libs[variant].t5Bias(weights, 6, 30, { bidirectional: true, maxDistance: 12 });
    expect(got.shape).toEqual([2, 6, 30]);
    expect(Array.from(got.data)).toEqual(Array.from(t5Bias(weights, 6, 30, true, 12).data));
    expect(() => libs[variant].t5Bias(weights, 6, 30, { maxDistance: 3 })).toThrow(/^t5Bias: options\.maxDistance: expected an integer > 3 /);
    // The weights are t5Bias's first argument: errors named them options.weights, and zero heads
    // (an empty bias) reached the core ("t5Bias: t5: expected the heads (0) to divide ...").
    expect(() => libs[variant].t5Bias({ data: new Float32Array(2), shape: [2, 1] }, 6, 30)).toThrow(/^t5Bias: weights: expected numBuckets >= 4 \(bidirectional scheme\), got shape \[2, 1\]$/);
    expect(() => libs[variant].t5Bias({ data: new Float32Array(6), shape: [2, 3] }, 6, 30, { bidirectional: true })).toThrow(/^t5Bias: weights: expected numBuckets >= 4 /);
    expect(libs[variant].t5Bias({ data: new Float32Array(0), shape: [0, 32] }, 6, 30).shape).toEqual([0, 6, 30]);
    expect(() => libs[variant].t5Bias(weights, 1e5, 1e5)).toThrow(/^t5Bias: Sq, Sk: expected a bias \[heads, Sq, Sk\] of at most 2\^31 - 1 elements \(a Float32Array\), got \[2, 100000, 100000\]$/);
  });

  const E = 12, H = 3, hd = E / H;
  const params = { numHeads: H, inProjWeight: randn([3 * E, E], 10, 0.5), inProjBias: randn([3 * E], 11), outProjWeight: randn([E, E], 12, 0.5), outProjBias: randn([E], 13) };
  it.each([
    { name: 'batched, causal scheme', B: 2, L: 6, S: 6, bidirectional: false, causal: true },
    { name: 'unbatched, cross L != S, with alibi', B: 0, L: 4, S: 9, bidirectional: true, alibi: true },
  ])('multiHeadAttention with t5: $name', (c) => {
    const Bn = c.B || 1, lead = c.B ? [c.B] : [];
    const query = randn([...lead, c.L, E], 14), key = randn([...lead, c.S, E], 15), value = randn([...lead, c.S, E], 16);
    const weights = randn([H, 8], 17, 2);
    const got = libs[variant].multiHeadAttention(query, key, value, params, { t5: { weights, bidirectional: c.bidirectional, maxDistance: 9 }, alibi: c.alibi, causal: c.causal, needWeights: true, averageWeights: false });
    const bias = t5Bias(weights, c.L, c.S, c.bidirectional, 9);
    const attnMask = tiled(c.alibi ? addAlibi(bias, c.L, c.S) : bias, Bn);
    const want = refMultiHead(query, key, value, params, { causal: c.causal, attnMask, averageWeights: false });
    expect(maxError(got.output.data, want.output.data)).toBeLessThanOrEqual(TOL);
    expect(maxError(got.weights!.data, want.weights.data)).toBeLessThanOrEqual(TOL);
  });

  it.each([
    { name: 'keys and values, causal', lead: [2, 3], Sq: 9, Sk: 9, kmax: 2, values: true, causal: true },
    { name: 'keys only, Sq != Sk, clip beyond the lengths', lead: [2], Sq: 5, Sk: 11, kmax: 20, values: false },
    { name: 'score dot, rank-2 q, k = 0', lead: [], Sq: 6, Sk: 6, kmax: 0, values: true, score: 'dot' as const },
  ])('attention with shaw: $name', (c) => {
    const D = 6, Dv = 5, batch = c.lead.reduce((a, b) => a * b, 1);
    const q = randn([...c.lead, c.Sq, D], 20), k = randn([...c.lead, c.Sk, D], 21), v = randn([...c.lead, c.Sk, Dv], 22);
    const keys = randn([2 * c.kmax + 1, D], 23), values = c.values ? randn([2 * c.kmax + 1, Dv], 24) : undefined;
    const got = libs[variant].attention(q, k, v, { shaw: { maxDistance: c.kmax, keys, values }, causal: c.causal, score: c.score, returnWeights: true });
    const want = refShaw(q.data, k.data, v.data, batch, c.Sq, c.Sk, D, Dv, keys.data, values?.data ?? null, c.kmax, { causal: c.causal, scale: c.score === 'dot' ? 1 : undefined });
    expect(got.output.shape).toEqual([...c.lead, c.Sq, Dv]);
    expect(maxError(got.output.data, want.out)).toBeLessThanOrEqual(TOL);
    expect(maxError(got.weights!.data, want.weights)).toBeLessThanOrEqual(TOL);
  });

  it('multiHeadAttention with shaw (and rope, key padding)', () => {
    const B = 2, L = 5, S = 7, kmax = 2;
    const query = randn([B, L, E], 30), key = randn([B, S, E], 31), value = randn([B, S, E], 32);
    const keys = randn([2 * kmax + 1, hd], 33), values = randn([2 * kmax + 1, hd], 34);
    const got = libs[variant].multiHeadAttention(query, key, value, params, { shaw: { maxDistance: kmax, keys, values }, causal: true, needWeights: true, averageWeights: false });
    // Reference: float64 projections regrouped per head, Shaw attention, output projection.
    const proj = (x: Tensor, n: number, off: number) => {
      const y = new Float64Array(B * n * E);
      for (let r = 0; r < B * n; r++)
        for (let o = 0; o < E; o++) {
          let s = params.inProjBias.data[off + o];
          for (let c = 0; c < E; c++) s += x.data[r * E + c] * params.inProjWeight.data[(off + o) * E + c];
          y[r * E + o] = s;
        }
      return perHead(y, B, n, H, hd);
    };
    const r = refShaw(proj(query, L, 0), proj(key, S, E), proj(value, S, 2 * E), B * H, L, S, hd, hd, keys.data, values.data, kmax, { causal: true });
    const out = new Float64Array(B * L * E);
    for (let b = 0; b < B; b++)
      for (let i = 0; i < L; i++)
        for (let o = 0; o < E; o++) {
          let s = params.outProjBias.data[o];
          for (let h = 0; h < H; h++) for (let c = 0; c < hd; c++) s += r.out[((b * H + h) * L + i) * hd + c] * params.outProjWeight.data[o * E + h * hd + c];
          out[(b * L + i) * E + o] = s;
        }
    expect(maxError(got.output.data, out)).toBeLessThanOrEqual(1e-4);
    expect(maxError(got.weights!.data, r.weights)).toBeLessThanOrEqual(TOL);
  });

  it('bad inputs: named errors, and the instance keeps working', () => {
    const lib = libs[variant];
    const q = randn([2, 4, 8], 40), v = randn([2, 4, 3], 41);
    const bad: [object, RegExp][] = [
      [{ t5: {} }, /^attention: options\.t5\.weights: expected the learned bias, a tensor \[2, numBuckets\]/],
      [{ t5: { weights: randn([3, 8], 1) } }, /^attention: options\.t5\.weights: expected shape \[2, numBuckets\].*got \[3, 8\]/],
      [{ t5: { weights: randn([2, 3], 1) } }, /^attention: options\.t5\.weights: expected numBuckets >= 4 \(bidirectional scheme\), got shape \[2, 3\]/],
      [{ t5: { weights: randn([2, 9], 1) } }, /^attention: options\.t5\.weights: expected an even numBuckets \(bidirectional scheme: half the buckets per direction\), got shape \[2, 9\]$/],
      [{ t5: { weights: randn([2, 32], 1), maxDistance: 8 } }, /^attention: options\.t5\.maxDistance: expected an integer > 8 .*got 8/],
      [{ t5: { weights: randn([2, 8], 1), bidirectional: 1 } }, /^attention: options\.t5\.bidirectional: expected/],
      [{ shaw: { keys: randn([5, 8], 1) } }, /^attention: options\.shaw\.maxDistance: expected an integer >= 0, got undefined/],
      [{ shaw: { maxDistance: -1, keys: randn([5, 8], 1) } }, /^attention: options\.shaw\.maxDistance: expected an integer >= 0, got -1/],
      [{ shaw: { maxDistance: 1 } }, /^attention: options\.shaw\.keys: expected the learned relative key embeddings \[3, 8\], got undefined/],
      [{ shaw: { maxDistance: 2, keys: randn([3, 8], 1) } }, /^attention: options\.shaw\.keys: expected shape \[5, 8\].*got \[3, 8\]/],
      [{ shaw: { maxDistance: 1, keys: randn([3, 8], 1), values: randn([3, 4], 1) } }, /^attention: options\.shaw\.values: expected shape \[3, 3\].*got \[3, 4\]/],
      [{ shaw: { maxDistance: 1, keys: randn([3, 8], 1) }, pattern: { type: 'local', window: 1 } }, /^attention: options\.shaw: expected score 'scaled_dot' or 'dot' and no options\.pattern/],
    ];
    for (const [options, message] of bad) expect(() => lib.attention(q, q, v, options)).toThrow(message);
    const params2 = { numHeads: 2, inProjWeight: randn([24, 8], 1), outProjWeight: randn([8, 8], 2) };
    const x = randn([1, 4, 8], 3);
    expect(() => lib.multiHeadAttention(x, x, x, params2, { shaw: { maxDistance: 1, keys: randn([3, 8], 1) } })).toThrow(/^multiHeadAttention: options\.shaw\.keys: expected shape \[3, 4\] \(\[2 maxDistance \+ 1, the head size E \/ numHeads\]\)/);
    expect(() => lib.multiHeadAttention(x, x, x, params2, { t5: { weights: randn([3, 8], 1) } })).toThrow(/^multiHeadAttention: options\.t5\.weights: expected shape \[2, numBuckets\]/);
    expect(lib.attention(q, q, v).output.shape).toEqual([2, 4, 3]);
  });
});

/** bias [H, Sq, Sk] plus ALiBi with the paper's slopes for H heads. */
function addAlibi(bias: Tensor, Sq: number, Sk: number): Tensor {
  const alibi = alibiBias(alibiSlopes(bias.shape[0]), Sq, Sk);
  return { data: Float32Array.from(bias.data, (x, t) => x + alibi.data[t]), shape: bias.shape };
}
