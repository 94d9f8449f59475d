// attnlab against PyTorch golden vectors (tests/golden/*.json, made by
// `/usr/bin/python3 tests/golden/make_golden.py`; see that file's docstring for what each holds).
//
// Inputs in the fixtures are float32-exact; the expected values were computed in float64.
// attnlab computes in float32, so every element must satisfy
//
//     |got - want| <= TOL * max(1, |want|)        with TOL = 1e-5
//
// i.e. an absolute error of 1e-5 for values of magnitude <= 1 and a relative error of 1e-5
// above. (All values here are O(1): outputs of unit-scale inputs, and probabilities in [0, 1],
// where a pure relative bound would be meaningless near 0.) A float32 PyTorch run of the same
// cases stays below 2.1e-7 by this measure, so the bound leaves ~50x of headroom for different
// summation orders, SIMD and approximate exp. In addition, attention weights and masked-softmax
// outputs that are exactly 0 in the fixture (masked positions) must be exactly 0.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { load } from 'attnlab';
import { VARIANTS } from './variants.js';

const TOL = 1e-5;

// ------------------------------------------------------------------ fixture types

interface JTensor {
  shape: number[];
  data: number[];
}
interface JMask extends JTensor {
  dtype: 'bool' | 'float';
}
interface Fixture<C> {
  generator: string;
  torch: string;
  cases: C[];
}
interface MhaCase {
  name: string;
  E: number;
  H: number;
  query: JTensor;
  key: JTensor;
  value: JTensor;
  params: { inProjWeight: JTensor; inProjBias: JTensor | null; outProjWeight: JTensor; outProjBias: JTensor | null };
  keyPaddingMask: JMask | null;
  attnMask: JMask | null;
  causal: boolean;
  needWeights: boolean;
  averageWeights: boolean;
  expected: { output: JTensor; weights: JTensor | null };
}
interface SdpaCase {
  name: string;
  q: JTensor;
  k: JTensor;
  v: JTensor;
  attnMask: JMask | null;
  causal: boolean;
  validLens: JTensor | null;
  expected: { output: JTensor; weights: JTensor };
}
interface SoftmaxCase {
  name: string;
  x: JTensor;
  validLens: JTensor | null;
  causal: boolean;
  expected: { output: JTensor };
}

type Lib = Awaited<ReturnType<typeof load>>;
type Tensor = { data: Float32Array; shape: number[] };
type BoolTensor = { data: Uint8Array; shape: number[] };

// ------------------------------------------------------------------ helpers

function fixture<C>(file: string): Fixture<C> {
  const url = new URL(`../golden/${file}`, import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')) as Fixture<C>;
}

function tensor(t: JTensor): Tensor {
  return { data: Float32Array.from(t.data), shape: [...t.shape] };
}

function mask(m: JMask): Tensor | BoolTensor {
  return m.dtype === 'bool'
    ? { data: Uint8Array.from(m.data), shape: [...m.shape] }
    : tensor(m);
}

/**
 * Asserts shape equality and max_i |got_i - want_i| / max(1, |want_i|) <= TOL; with
 * `exactZeros`, positions where want is exactly 0 must be exactly 0 in got too.
 */
function expectClose(got: Tensor | undefined, want: JTensor, what: string, exactZeros = false): void {
  expect(got, `${what}: missing`).toBeDefined();
  const g = got!;
  expect(g.shape, `${what}: shape`).toEqual(want.shape);
  expect(g.data.length, `${what}: data length`).toBe(want.data.length);
  let worst = 0;
  let at = -1;
  let nonZero = -1;
  for (let i = 0; i < want.data.length; i++) {
    const w = want.data[i];
    let err = Math.abs(g.data[i] - w) / Math.max(1, Math.abs(w));
    if (Number.isNaN(err)) err = Infinity;
    if (err > worst || at < 0) {
      worst = err;
      at = i;
    }
    if (exactZeros && w === 0 && g.data[i] !== 0 && nonZero < 0) nonZero = i;
  }
  const show = (i: number) =>
    `flat index ${i} (of shape [${want.shape}]): got ${g.data[i]}, want ${want.data[i]}`;
  expect(worst, `${what}: max error ${worst.toExponential(3)} at ${show(at)}`).toBeLessThanOrEqual(TOL);
  if (exactZeros) expect(nonZero, `${what}: masked entry not exactly 0 at ${show(nonZero)}`).toBe(-1);
}

// ------------------------------------------------------------------ fixtures

const mha = fixture<MhaCase>('mha.json');
const sdpa = fixture<SdpaCase>('sdpa.json');
const softmax = fixture<SoftmaxCase>('masked_softmax.json');

// Causal MHA cases run twice: with the recorded bool triu attn_mask, and with `causal: true`.
const mhaRuns: { label: string; c: MhaCase; useCausalShortcut: boolean }[] = mha.cases.flatMap((c) =>
  c.causal
    ? [
        { label: `${c.name} (attnMask triu)`, c, useCausalShortcut: false },
        { label: `${c.name} (causal: true)`, c, useCausalShortcut: true },
      ]
    : [{ label: c.name, c, useCausalShortcut: false }],
);

describe('golden fixtures', () => {
  it('are non-empty', () => {
    expect(mha.cases.length).toBeGreaterThan(0);
    expect(sdpa.cases.length).toBeGreaterThan(0);
    expect(softmax.cases.length).toBeGreaterThan(0);
  });
});

describe.each(VARIANTS)('golden vectors, %s build', (variant) => {
  let lib: Lib;

  beforeAll(async () => {
    lib = await load({ variant, threads: variant.endsWith('-threads') ? 2 : 1 });
  });

  afterAll(() => {
    lib?.dispose();
  });

  describe('multiHeadAttention vs torch.nn.MultiheadAttention', () => {
    it.each(mhaRuns)('$label', ({ c, useCausalShortcut }) => {
      const p = c.params;
      const params: Parameters<Lib['multiHeadAttention']>[3] = {
        numHeads: c.H,
        inProjWeight: tensor(p.inProjWeight),
        outProjWeight: tensor(p.outProjWeight),
      };
      if (p.inProjBias) params.inProjBias = tensor(p.inProjBias);
      if (p.outProjBias) params.outProjBias = tensor(p.outProjBias);

      const options: NonNullable<Parameters<Lib['multiHeadAttention']>[4]> = {
        needWeights: c.needWeights,
        averageWeights: c.averageWeights,
      };
      if (c.keyPaddingMask) options.keyPaddingMask = mask(c.keyPaddingMask);
      if (useCausalShortcut) options.causal = true;
      else if (c.attnMask) options.attnMask = mask(c.attnMask);

      const res = lib.multiHeadAttention(tensor(c.query), tensor(c.key), tensor(c.value), params, options);
      expectClose(res.output, c.expected.output, 'output');
      if (c.expected.weights) expectClose(res.weights, c.expected.weights, 'weights', true);
      else expect(res.weights, 'weights when needWeights is false').toBeUndefined();
    });
  });

  describe('attention vs scaled_dot_product_attention semantics', () => {
    it.each(sdpa.cases)('$name', (c) => {
      const options: NonNullable<Parameters<Lib['attention']>[3]> = { score: 'scaled_dot', returnWeights: true };
      if (c.attnMask) options.attnMask = mask(c.attnMask);
      if (c.causal) options.causal = true;
      if (c.validLens) options.validLens = Int32Array.from(c.validLens.data);

      const res = lib.attention(tensor(c.q), tensor(c.k), tensor(c.v), options);
      expectClose(res.output, c.expected.output, 'output');
      expectClose(res.weights, c.expected.weights, 'weights', true);
    });
  });

  describe('maskedSoftmax vs d2l masked_softmax', () => {
    it.each(softmax.cases)('$name', (c) => {
      const options: NonNullable<Parameters<Lib['maskedSoftmax']>[1]> = {};
      if (c.validLens) options.validLens = Int32Array.from(c.validLens.data);
      if (c.causal) options.causal = true;

      const out = lib.maskedSoftmax(tensor(c.x), options);
      expectClose(out, c.expected.output, 'output', true);
    });
  });
});
