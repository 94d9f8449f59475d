// Every op on every WebAssembly variant against the float64 references in reference.ts.
import type { Tensor } from 'attnlab';
import { describe, expect, it } from 'vitest';
import {
  maxError, randBool, randn, refAttention, refMaskedSoftmax, refMultiHead, refNadarayaWatson,
  refPositional, refScores, type RefMasks, type RefScore,
} from './reference.js';
import { useVariants, VARIANTS } from './variants.js';

const TOL = 1e-5;  // |got - want| <= TOL * max(1, |want|)

const libs = useVariants();

interface AttnCase extends RefScore, RefMasks {
  name: string;
  q: number[];
  k: number[];
  v: number[];
}

const additiveParams = (h: number, dq: number, dk: number) => ({
  Wq: randn([h, dq], 11), Wk: randn([h, dk], 12), wv: randn([h], 13),
});

const attnCases: AttnCase[] = [
  { name: 'scaled_dot, batch [2, 3]', q: [2, 3, 5, 8], k: [2, 3, 7, 8], v: [2, 3, 7, 4] },
  { name: 'dot', score: 'dot', q: [2, 4, 6], k: [2, 4, 6], v: [2, 4, 3] },
  { name: 'scale override', score: 'scaled_dot', scale: 0.3, q: [1, 4, 6], k: [1, 5, 6], v: [1, 5, 2] },
  { name: 'general, Dq != Dk', score: 'general', params: { W: randn([6, 5], 9) }, q: [2, 3, 6], k: [2, 4, 5], v: [2, 4, 3] },
  { name: 'additive, Dq != Dk', score: 'additive', params: additiveParams(7, 6, 5), q: [2, 3, 6], k: [2, 4, 5], v: [2, 4, 3] },
  { name: 'causal, Sq == Sk', causal: true, q: [2, 2, 9, 8], k: [2, 2, 9, 8], v: [2, 2, 9, 8] },
  { name: 'causal, Sq < Sk', causal: true, q: [1, 4, 8], k: [1, 9, 8], v: [1, 9, 8] },
  { name: 'causal, Sq > Sk', causal: true, q: [1, 9, 8], k: [1, 4, 8], v: [1, 4, 8] },
  { name: 'validLens per batch prefix [B] of [B, H]', validLens: new Int32Array([3, 0]), q: [2, 3, 4, 8], k: [2, 3, 6, 8], v: [2, 3, 6, 5] },
  { name: 'validLens per row', validLens: new Int32Array([1, 2, 3, 4, 4, 3, 2, 0]), q: [2, 4, 8], k: [2, 4, 8], v: [2, 4, 8] },
  { name: 'bool mask broadcast [B, 1, 1, Sk]', attnMask: randBool([2, 1, 1, 6], 5, 0.7), q: [2, 3, 4, 8], k: [2, 3, 6, 8], v: [2, 3, 6, 5] },
  { name: 'bool mask [Sq, Sk] with all-masked rows', attnMask: { data: new Uint8Array([0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1]), shape: [4, 3] }, q: [2, 4, 8], k: [2, 3, 8], v: [2, 3, 8] },
  { name: 'additive mask with -Infinity', attnMask: { data: Float32Array.from([0, -Infinity, 0.5, -2, 0, 0, -Infinity, -Infinity, 0, 1, 2, 3]), shape: [3, 4] }, q: [2, 3, 8], k: [2, 4, 8], v: [2, 4, 8] },
  { name: 'everything at once', causal: true, validLens: new Int32Array([5, 2]), attnMask: randBool([6, 6], 8, 0.8), score: 'dot', q: [2, 6, 8], k: [2, 6, 8], v: [2, 6, 3] },
  { name: 'Sk = 0', q: [2, 3, 4], k: [2, 0, 4], v: [2, 0, 3] },
  { name: 'longer rows (SIMD tails)', q: [1, 37, 67], k: [1, 131, 67], v: [1, 131, 33] },
];

describe.each(VARIANTS)('%s', (variant) => {
  it.each(attnCases)('attention: $name', (c) => {
    const q = randn(c.q, 1), k = randn(c.k, 2), v = randn(c.v, 3);
    const { name: _n, q: _q, k: _k, v: _v, ...options } = c;
    const got = libs[variant].attention(q, k, v, { ...options, returnWeights: true });
    const want = refAttention(q, k, v, c);
    expect(got.output.shape).toEqual(want.output.shape);
    expect(got.weights!.shape).toEqual(want.weights.shape);
    expect(maxError(got.output.data, want.output.data)).toBeLessThanOrEqual(TOL);
    expect(maxError(got.weights!.data, want.weights.data)).toBeLessThanOrEqual(TOL);
    // Masked keys get exactly zero weight, not a tiny number.
    want.weights.data.forEach((w, i) => { if (w === 0) expect(got.weights!.data[i]).toBe(0); });
    // Without weights, the output is the same.
    const noWeights = libs[variant].attention(q, k, v, options);
    expect(noWeights.weights).toBeUndefined();
    expect(noWeights.output.data).toEqual(got.output.data);
  });

  it.each(attnCases.filter((c) => c.score !== undefined))('attentionScores: $name', (c) => {
    const q = randn(c.q, 1), k = randn(c.k, 2);
    const got = libs[variant].attentionScores(q, k, { score: c.score, params: c.params, scale: c.scale });
    const want = refScores(q, k, c);
    expect(got.shape).toEqual(want.shape);
    expect(maxError(got.data, want.data)).toBeLessThanOrEqual(TOL);
  });

  it('attention: logits of 1e4 neither overflow nor give NaN', () => {
    const q = { data: Float32Array.from([100, 0, 0, 100]), shape: [2, 2] };  // q.k = 1e4
    const k = { data: Float32Array.from([100, 0, 0, 100, -100, 0]), shape: [3, 2] };
    const v = randn([3, 4], 4);
    const got = libs[variant].attention(q, k, v, { score: 'dot', returnWeights: true });
    const want = refAttention(q, k, v, { score: 'dot' });
    expect(got.weights!.data.every(Number.isFinite)).toBe(true);
    expect(maxError(got.output.data, want.output.data)).toBeLessThanOrEqual(TOL);
  });

  it('validLens as a plain array (as d2l writes it) gives the Int32Array bits', () => {
    const q = randn([2, 3, 4], 1), k = randn([2, 5, 4], 2), v = randn([2, 5, 3], 3), x = randn([2, 2, 4], 6, 3);
    const lib = libs[variant];
    expect(lib.attention(q, k, v, { validLens: [2, 5] }).output.data).toEqual(lib.attention(q, k, v, { validLens: new Int32Array([2, 5]) }).output.data);
    expect(lib.maskedSoftmax(x, { validLens: [1, 3, 2, 4] }).data).toEqual(lib.maskedSoftmax(x, { validLens: new Int32Array([1, 3, 2, 4]) }).data);
  });

  const softmaxCases: (RefMasks & { name: string; x: number[]; scale?: number })[] = [
    { name: 'vector', x: [9] },
    { name: 'validLens [B] (d2l)', x: [2, 2, 4], validLens: new Int32Array([2, 3]) },
    { name: 'validLens [B, Sq] (d2l)', x: [2, 2, 4], validLens: new Int32Array([1, 3, 2, 4]) },
    { name: 'causal + bool mask broadcast [Sq, 1]', x: [3, 5, 5], causal: true, attnMask: randBool([5, 1], 3, 0.7) },
    { name: 'extreme logits', x: [4, 6], scale: 1e4 },
    { name: 'additive mask [1, Sq, Sk]', x: [2, 3, 4], attnMask: randn([1, 3, 4], 7, 5) },
  ];
  it.each(softmaxCases)('maskedSoftmax: $name', (c) => {
    const x = randn(c.x, 6, c.scale ?? 3);
    const { name: _n, x: _x, scale: _s, ...options } = c;
    const got = libs[variant].maskedSoftmax(x, options);
    const want = refMaskedSoftmax(x, c);
    expect(got.shape).toEqual(x.shape);
    expect(maxError(got.data, want.data)).toBeLessThanOrEqual(TOL);
  });

  const mhaCases = [
    { name: 'self, batched', B: 2, L: 5, S: 5, E: 8, H: 2, self: true },
    { name: 'cross, L != S, no biases', B: 3, L: 4, S: 7, E: 12, H: 3, noBias: true },
    { name: 'causal + key padding', B: 2, L: 6, S: 6, E: 8, H: 4, causal: true, kpm: true },
    { name: 'bool attnMask [B*H, L, S], per-head weights', B: 2, L: 3, S: 4, E: 8, H: 2, am3: true, perHead: true },
    { name: 'float attnMask [L, S] + float key padding', B: 1, L: 4, S: 5, E: 8, H: 1, amFloat: true, kpmFloat: true },
    { name: 'unbatched', B: 0, L: 4, S: 6, E: 8, H: 2, kpm: true },
    { name: 'fully masked query row', B: 1, L: 2, S: 3, E: 4, H: 2, blockRow: true },
  ];

  it.each([[[5, 7], 3, true], [[2, 3, 17], 9, false], [[0, 4], 2, true], [[64, 32], 40, true]] as const)('linear: x %j, out %i, bias %s', (xs, out, bias) => {
    const x = randn([...xs], 51), W = randn([out, xs.at(-1)!], 52), b = randn([out], 53);
    const got = libs[variant].linear(x, W, bias ? b : undefined);
    const inF = xs.at(-1)!, rows = x.data.length / inF;
    const want = new Float64Array(rows * out);
    for (let r = 0; r < rows; r++)
      for (let o = 0; o < out; o++) {
        let s = bias ? b.data[o] : 0;
        for (let c = 0; c < inF; c++) s += x.data[r * inF + c] * W.data[o * inF + c];
        want[r * out + o] = s;
      }
    expect(got.shape).toEqual([...xs.slice(0, -1), out]);
    expect(maxError(got.data, want)).toBeLessThanOrEqual(TOL);
  });

  it.each(mhaCases)('multiHeadAttention: $name', (c) => {
    const lead = c.B ? [c.B] : [];
    const Bn = c.B || 1;
    const query = randn([...lead, c.L, c.E], 21);
    const key = c.self ? query : randn([...lead, c.S, c.E], 22);
    const value = c.self ? query : randn([...lead, c.S, c.E], 23);
    const params = {
      numHeads: c.H,
      inProjWeight: randn([3 * c.E, c.E], 24, 0.5),
      outProjWeight: randn([c.E, c.E], 25, 0.5),
      ...(c.noBias ? {} : { inProjBias: randn([3 * c.E], 26), outProjBias: randn([c.E], 27) }),
    };
    const options: Parameters<typeof refMultiHead>[4] & { needWeights?: boolean } = { causal: c.causal, averageWeights: !c.perHead };
    if (c.kpm) {
      const m = randBool([...lead, c.S], 28, 0.3);
      for (let b = 0; b < Bn; b++) m.data[b * c.S] = 0;  // key 0 always visible
      options.keyPaddingMask = m;
    }
    if (c.kpmFloat) options.keyPaddingMask = randn([Bn, c.S], 29, 2);
    if (c.am3) options.attnMask = randBool([Bn * c.H, c.L, c.S], 30, 0.3);
    if (c.amFloat) options.attnMask = randn([c.L, c.S], 31, 2);
    if (c.blockRow) options.attnMask = { data: Uint8Array.from([0, 1, 0, 1, 1, 1]), shape: [c.L, c.S] };
    const got = libs[variant].multiHeadAttention(query, key, value, params, { ...options, needWeights: true });
    const want = refMultiHead(query, key, value, params, options);
    expect(got.output.shape).toEqual(want.output.shape);
    expect(got.weights!.shape).toEqual(want.weights.shape);
    expect(maxError(got.output.data, want.output.data)).toBeLessThanOrEqual(TOL);
    expect(maxError(got.weights!.data, want.weights.data)).toBeLessThanOrEqual(TOL);
    if (c.blockRow) {
      // Row 1 attends to nothing: zero weights and the output projection's bias as output.
      expect(Array.from(got.weights!.data.slice(3, 6))).toEqual([0, 0, 0]);
      expect(maxError(got.output.data.slice(c.E), params.outProjBias!.data)).toBeLessThanOrEqual(TOL);
    }
  });

  const nwCases = [
    { kernel: 'gaussian', h: 0.5 }, { kernel: 'gaussian', h: 1e-3 }, { kernel: 'boxcar', h: 0.7 },
    { kernel: 'epanechnikov', h: 0.8 }, { kernel: 'triangular', h: 1.2 }, { kernel: 'boxcar', h: 0.05 },
  ] as const;
  it.each(nwCases)('nadarayaWatson scalar features: $kernel h=$h', ({ kernel, h }) => {
    // d2l's example: y = 2 sin x + x^0.8 on sorted training inputs.
    const n = 50;
    const xs = Float32Array.from({ length: n }, (_, i) => (5 * i) / n);
    const ys = Float32Array.from(xs, (x) => 2 * Math.sin(x) + x ** 0.8);
    const qs = Float32Array.from({ length: 23 }, (_, i) => i * 0.25 - 0.3);
    const got = libs[variant].nadarayaWatson({ data: qs, shape: [23] }, { data: xs, shape: [n] }, { data: ys, shape: [n] }, { kernel, bandwidth: h });
    const want = refNadarayaWatson([Array.from(qs, (x) => [x])], [Array.from(xs, (x) => [x])], [Array.from(ys, (y) => [y])], kernel, h);
    expect(got.output.shape).toEqual([23]);
    expect(got.weights.shape).toEqual([23, n]);
    expect(maxError(got.output.data, want.output[0].flat())).toBeLessThanOrEqual(TOL);
    expect(maxError(got.weights.data, want.weights[0].flat())).toBeLessThanOrEqual(TOL);
    expect(got.output.data.every(Number.isFinite)).toBe(true);
  });

  it('nadarayaWatson vector features, batched, Dv = 2', () => {
    const q = randn([2, 5, 3], 41), k = randn([2, 7, 3], 42), v = randn([2, 7, 2], 43);
    const nest = (t: Tensor, r: number, c: number) =>
      Array.from({ length: t.shape[0] }, (_, b) => Array.from({ length: r }, (_, i) => Array.from(t.data.slice((b * r + i) * c, (b * r + i + 1) * c))));
    for (const kernel of ['gaussian', 'epanechnikov'] as const) {
      const got = libs[variant].nadarayaWatson(q, k, v, { kernel, bandwidth: 1.5 });
      const want = refNadarayaWatson(nest(q, 5, 3), nest(k, 7, 3), nest(v, 7, 2), kernel, 1.5);
      expect(got.output.shape).toEqual([2, 5, 2]);
      expect(maxError(got.output.data, want.output.flat(2))).toBeLessThanOrEqual(TOL);
      expect(maxError(got.weights.data, want.weights.flat(2))).toBeLessThanOrEqual(TOL);
    }
  });

  it('nadarayaWatson: a query outside every compact kernel gives zeros, not NaN', () => {
    const got = libs[variant].nadarayaWatson(
      { data: Float32Array.from([0, 100]), shape: [2] }, { data: Float32Array.from([0, 0.5]), shape: [2] },
      { data: Float32Array.from([3, 5]), shape: [2] }, { kernel: 'epanechnikov', bandwidth: 1 });
    expect(Array.from(got.output.data)).toEqual([expect.closeTo((3 * 1 + 5 * 0.75) / 1.75, 5), 0]);
    expect(Array.from(got.weights.data.slice(2))).toEqual([0, 0]);
  });

  it.each([[0, 4], [1, 1], [50, 16], [7, 9], [2048, 64]])('positionalEncoding(%i, %i)', (length, dim) => {
    const got = libs[variant].positionalEncoding(length, dim);
    expect(got.shape).toEqual([length, dim]);
    expect(maxError(got.data, refPositional(length, dim))).toBeLessThanOrEqual(TOL);
  });
});
