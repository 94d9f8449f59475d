// The queryOffset option on every build: query row i sits at key position i + queryOffset. A
// KV-cached decoder or a chunked prefill passes the new queries with queryOffset = Sk - Sq and
// must get the last rows of the call over all Sk queries, for causal, ALiBi, T5, Shaw and RoPE;
// and the shifted positions against float64 references, offsets past Sk - Sq included.
import { describe, expect, it } from 'vitest';
import type { Tensor } from 'attnlab';
import { maxError, randn, refAttention, refMaskedSoftmax, refMultiHead } from './reference.js';
import { refShaw, t5Bucket } from './reference-relative.js';
import { alibiSlopes, f32, refRope } from './reference-variants.js';
import { useVariants, VARIANTS } from './variants.js';

const TOL = 1e-5;
const libs = useVariants();

/** Rows [from, from + n) of each [rows, cols] slice of x. */
function lastRows(x: Tensor, n: number): Tensor {
  const [rows, cols] = x.shape.slice(-2);
  const slices = x.data.length / (rows * cols);
  const data = new Float32Array(slices * n * cols);
  for (let b = 0; b < slices; b++) data.set(x.data.subarray((b * rows + rows - n) * cols, (b * rows + rows) * cols), b * n * cols);
  return { data, shape: [...x.shape.slice(0, -2), n, cols] };
}

/**
 * An additive mask [H, Sq, Sk] for query i at key position p = i + at: -Infinity where causal
 * hides j > p, plus ALiBi's -slope |p - j| and T5's weights[h, bucket(j - p)].
 */
function shiftedBias(H: number, Sq: number, Sk: number, at: number, o: { causal?: boolean; alibi?: boolean; t5?: Tensor }): Tensor {
  const slopes = alibiSlopes(H);
  const data = new Float32Array(H * Sq * Sk);
  for (let h = 0; h < H; h++)
    for (let i = 0; i < Sq; i++)
      for (let j = 0; j < Sk; j++) {
        const p = i + at;
        let x = o.causal && j > p ? -Infinity : 0;
        if (o.alibi) x += -slopes[h] * Math.abs(p - j);
        if (o.t5) x += o.t5.data[h * o.t5.shape[1] + t5Bucket(j - p, true, o.t5.shape[1], 12)];
        data[(h * Sq + i) * Sk + j] = x;
      }
  return { data, shape: [H, Sq, Sk] };
}

describe.each(VARIANTS)('%s', (variant) => {
  const H = 3, S = 11, D = 8, Dv = 4, kmax = 3;
  const q = randn([2, H, S, D], 1), k = randn([2, H, S, D], 2), v = randn([2, H, S, Dv], 3);
  const t5 = { weights: randn([H, 8], 4, 2), maxDistance: 12 };
  const shaw = { maxDistance: kmax, keys: randn([2 * kmax + 1, D], 5), values: randn([2 * kmax + 1, Dv], 6) };
  const cases = [
    { name: 'causal', options: { causal: true } },
    { name: 'alibi', options: { alibi: true } },
    { name: 't5', options: { t5 } },
    { name: 'shaw', options: { shaw } },
    { name: 'rope', options: { rope: { offset: 2 } } },
    { name: 'causal, alibi, t5 and rope', options: { causal: true, alibi: true, t5, rope: true } },
    { name: 'causal, shaw and rope (halves)', options: { causal: true, shaw, rope: { pairs: 'halves' as const } } },
  ];
  it.each(cases)('attention: the last rows with queryOffset = Sk - Sq are the full call\'s ($name)', (c) => {
    const lib = libs[variant];
    const full = lib.attention(q, k, v, { ...c.options, returnWeights: true });
    for (const n of [1, 4]) {
      const got = lib.attention(lastRows(q, n), k, v, { ...c.options, queryOffset: S - n, returnWeights: true });
      expect(maxError(got.output.data, lastRows(full.output, n).data), `n = ${n}`).toBeLessThanOrEqual(TOL);
      expect(maxError(got.weights.data, lastRows(full.weights, n).data), `n = ${n}`).toBeLessThanOrEqual(TOL);
    }
    // Without the option the positions differ (the test can fail).
    const top = lib.attention(lastRows(q, 4), k, v, c.options);
    expect(maxError(top.output.data, lastRows(full.output, 4).data)).toBeGreaterThan(1e-3);
  });

  it.each([2, 7, 15])('attention at queryOffset %i against float64 (causal, alibi, t5, rope)', (at) => {
    const Sq = 4, Sk = 11;
    const qs = randn([2, H, Sq, D], 7);
    const got = libs[variant].attention(qs, k, v, { causal: true, alibi: true, t5, rope: { offset: 3 }, queryOffset: at, returnWeights: true });
    const rq = f32(refRope(qs.data, 2 * H, Sq, 1, D, { offset: 3 + at }), qs.shape), rk = f32(refRope(k.data, 2 * H, Sk, 1, D, { offset: 3 }), k.shape);
    const want = refAttention(rq, rk, v, { attnMask: shiftedBias(H, Sq, Sk, at, { causal: true, alibi: true, t5: t5.weights }) });
    expect(maxError(got.output.data, want.output.data)).toBeLessThanOrEqual(TOL);
    expect(maxError(got.weights.data, want.weights.data)).toBeLessThanOrEqual(TOL);
  });

  it('attention with shaw at queryOffset 5 against float64', () => {
    const Sq = 3, qs = randn([2, H, Sq, D], 8);
    const got = libs[variant].attention(qs, k, v, { shaw, causal: true, queryOffset: 5, returnWeights: true });
    const want = refShaw(qs.data, k.data, v.data, 2 * H, Sq, S, D, Dv, shaw.keys.data, shaw.values.data, kmax, { causal: true, queryOffset: 5 });
    expect(maxError(got.output.data, want.out)).toBeLessThanOrEqual(TOL);
    expect(maxError(got.weights.data, want.weights)).toBeLessThanOrEqual(TOL);
  });

  it('maskedSoftmax: causal rows keep columns j <= i + queryOffset', () => {
    const x = randn([2, 3, 7], 9);
    const got = libs[variant].maskedSoftmax(x, { causal: true, queryOffset: 4 });
    const want = refMaskedSoftmax(x, { attnMask: shiftedBias(1, 3, 7, 4, { causal: true }) });
    expect(maxError(got.data, want.data)).toBeLessThanOrEqual(TOL);
  });

  const E = 12, params = { numHeads: H, inProjWeight: randn([3 * E, E], 10, 0.5), inProjBias: randn([3 * E], 11), outProjWeight: randn([E, E], 12, 0.5), outProjBias: randn([E], 13) };
  const x = randn([2, S, E], 14);
  it.each([
    { name: 'causal, alibi, t5 and rope', options: { causal: true, alibi: true, t5, rope: { offset: 1 } } },
    { name: 'causal and shaw', options: { causal: true, shaw: { maxDistance: 2, keys: randn([5, E / H], 15), values: randn([5, E / H], 16) } } },
  ])('multiHeadAttention: a decoder step and a chunk equal the full call\'s last rows ($name)', (c) => {
    const lib = libs[variant];
    const full = lib.multiHeadAttention(x, x, x, params, c.options);
    for (const n of [1, 3]) {
      const got = lib.multiHeadAttention(lastRows(x, n), x, x, params, { ...c.options, queryOffset: S - n });
      expect(maxError(got.output.data, lastRows(full.output, n).data), `n = ${n}`).toBeLessThanOrEqual(TOL);
    }
  });

  it('multiHeadAttention at queryOffset 9 against float64 (past Sk - L)', () => {
    const L = 3, at = 9, query = randn([2, L, E], 17);
    const got = libs[variant].multiHeadAttention(query, x, x, params, { causal: true, alibi: true, rope: true, queryOffset: at, needWeights: true, averageWeights: false });
    const bias = shiftedBias(H, L, S, at, { causal: true, alibi: true });
    const want = refMultiHead(query, x, x, params, {
      attnMask: { data: Float32Array.from([...bias.data, ...bias.data]), shape: [2 * H, L, S] },
      rotate: (y, n) => y.set(refRope(y, 2, n, H, E / H, { offset: n === L ? at : 0 })),
      averageWeights: false,
    });
    expect(maxError(got.output.data, want.output.data)).toBeLessThanOrEqual(TOL);
    expect(maxError(got.weights!.data, want.weights.data)).toBeLessThanOrEqual(TOL);
  });

  it('bad queryOffset: named errors, and the instance keeps working', () => {
    const lib = libs[variant];
    const qs = randn([2, 4, 8], 18), vs = randn([2, 4, 3], 19);
    for (const [bad, shown] of [[-1, '-1'], [1.5, '1.5'], ['2', '"2"'], [NaN, 'NaN'], [2 ** 53, `${2 ** 53} (past 2^53 - 1, the largest exact integer)`]] as const) {
      const want = new RegExp(`^attention: options\\.queryOffset: expected an integer >= 0, got ${shown.replace(/[.()^]/g, '\\$&')}$`);
      expect(() => lib.attention(qs, qs, vs, { queryOffset: bad as number })).toThrow(want);
      expect(() => lib.maskedSoftmax(qs, { causal: true, queryOffset: bad as number })).toThrow(/^maskedSoftmax: options\.queryOffset: expected an integer >= 0, got /);
      expect(() => lib.multiHeadAttention(x, x, x, params, { queryOffset: bad as number })).toThrow(/^multiHeadAttention: options\.queryOffset: expected an integer >= 0, got /);
    }
    expect(() => lib.attention(qs, qs, vs, { pattern: { type: 'local', window: 1 }, queryOffset: 2 }))
      .toThrow(/^attention: options\.queryOffset: expected 0 with options\.pattern \(patterns place query i at key position i\), got 2$/);
    expect(lib.attention(qs, qs, vs, { pattern: { type: 'local', window: 1 }, queryOffset: 0 }).output.shape).toEqual([2, 4, 3]);
    expect(lib.attention(qs, qs, vs, { causal: true, queryOffset: 3 }).output.shape).toEqual([2, 4, 3]);
  });
});
