// options.out of attention() and multiHeadAttention(): the output written into the caller's
// Float32Array, on every build and on WebGPU (Dawn on SwiftShader, as webgpu.test.ts), with the
// same values as a new array.
import { load, type Attnlab } from 'attnlab';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gpu, requireDawn } from './dawn.js';
import { randn } from './reference.js';
import { useVariants, VARIANTS } from './variants.js';

const libs = useVariants();
const q = randn([2, 3, 5, 4], 1), k = randn([2, 3, 7, 4], 2), v = randn([2, 3, 7, 6], 3);
const outLength = 2 * 3 * 5 * 6;
// multiHeadAttention: query [B = 2, L = 3, E = 8], key and value [2, S = 4, 8], 2 heads.
const E = 8, mq = randn([2, 3, E], 11), mkv = randn([2, 4, E], 12);
const mha = { numHeads: 2, inProjWeight: randn([3 * E, E], 13, 0.3), inProjBias: randn([3 * E], 14, 0.1), outProjWeight: randn([E, E], 15, 0.3) };

describe.each(VARIANTS)('attention options.out (%s)', (variant) => {
  it('fills the caller\'s array and returns it as output.data, bit for bit the values of a new array', () => {
    const lib = libs[variant];
    for (const options of [{}, { causal: true }, { validLens: [7, 2, 0, 5, 7, 1], returnWeights: true }, { score: 'dot' as const, alibi: true }]) {
      const want = lib.attention(q, k, v, options);
      const out = new Float32Array(outLength).fill(Number.NaN);
      const got = lib.attention(q, k, v, { ...options, out });
      expect(got.output.data).toBe(out);
      expect(got.output.shape).toEqual([2, 3, 5, 6]);
      expect(out).toEqual(want.output.data);
      if (want.weights) expect(got.weights!.data).toEqual(want.weights.data);
    }
  });

  it('may be an input\'s own data (written after the inputs are read), and serves attentionAsync', async () => {
    const lib = libs[variant];
    const x = randn([3, 4, 4], 4);
    const want = lib.attention(x, x, x).output.data;
    const alias = { data: x.data.slice(), shape: x.shape };
    expect(lib.attention(alias, alias, alias, { out: alias.data }).output.data).toBe(alias.data);
    expect(alias.data).toEqual(want);
    const out = new Float32Array(outLength);
    expect((await lib.attentionAsync(q, k, v, { out })).output.data).toBe(out);
    expect(out).toEqual(lib.attention(q, k, v).output.data);
  });

  it('names a wrong type or length, leaves the array as it was when the call fails, and the instance keeps working', () => {
    const lib = libs[variant];
    expect(() => lib.attention(q, k, v, { out: new Float32Array(outLength - 1) })).toThrowError(
      /^attention: options\.out: expected a Float32Array of length 180 \(the output's shape \[2, 3, 5, 6\]\), got length 179$/);
    expect(() => lib.attention(q, k, v, { out: new Float64Array(outLength) as unknown as Float32Array })).toThrowError(
      /^attention: options\.out: expected a Float32Array, got Float64Array\(180\)$/);
    expect(() => lib.attention(q, k, v, { out: Array.from({ length: outLength }, () => 0) as unknown as Float32Array })).toThrowError(
      /^attention: options\.out: expected a Float32Array, got /);
    // A failure inside the core (q W overflows float32) comes before the copy out.
    const big = { data: new Float32Array([3e38, 3e38]), shape: [1, 1, 2] };
    const out = new Float32Array(2).fill(7);
    const W = { data: new Float32Array(4).fill(2), shape: [2, 2] };
    expect(() => lib.attention(big, big, big, { score: 'general', params: { W }, out })).toThrowError(/^attention: q, params\.W: q W overflows float32/);
    expect(out.every((x) => x === 7)).toBe(true);
    expect(lib.attention(q, k, v).output.data).toEqual(lib.attention(q, k, v, { out: new Float32Array(outLength) }).output.data);
  });

  it('multiHeadAttention: the same, and its wrong length named', () => {
    const lib = libs[variant];
    for (const options of [{}, { causal: true, needWeights: true }]) {
      const want = lib.multiHeadAttention(mq, mkv, mkv, mha, options);
      const out = new Float32Array(2 * 3 * E).fill(Number.NaN);
      const got = lib.multiHeadAttention(mq, mkv, mkv, mha, { ...options, out });
      expect(got.output.data).toBe(out);
      expect(out).toEqual(want.output.data);
      if (want.weights) expect(got.weights!.data).toEqual(want.weights.data);
    }
    expect(() => lib.multiHeadAttention(mq, mkv, mkv, mha, { out: new Float32Array(47) })).toThrowError(
      /^multiHeadAttention: options\.out: expected a Float32Array of length 48 \(the output's shape \[2, 3, 8\]\), got length 47$/);
  });

  it('an empty output returns the empty array given', () => {
    const out = new Float32Array(0);
    expect(libs[variant].attention(randn([2, 3, 0, 4], 5), k, v, { out }).output.data).toBe(out);
  });
});

describe('attention options.out on WebGPU', () => {
  let gpuLib: Attnlab;
  beforeAll(async () => {
    await requireDawn();
    gpuLib = await load({ backend: 'webgpu', gpu, variant: 'simd', threads: 1 });
  });
  afterAll(() => gpuLib?.dispose());

  it('the readback lands in the caller\'s array: fused kernel, weights path, multi-head', async () => {
    for (const options of [{ causal: true }, { returnWeights: true }]) {
      const want = (await gpuLib.attentionAsync(q, k, v, options)).output.data;
      const out = new Float32Array(outLength).fill(Number.NaN);
      const got = await gpuLib.attentionAsync(q, k, v, { ...options, out });
      expect(got.output.data).toBe(out);
      expect(out).toEqual(want);
    }
    const mout = new Float32Array(2 * 3 * E);
    expect((await gpuLib.multiHeadAttentionAsync(mq, mkv, mkv, mha, { out: mout })).output.data).toBe(mout);
    expect(mout).toEqual((await gpuLib.multiHeadAttentionAsync(mq, mkv, mkv, mha)).output.data);
    const out = new Float32Array(3);
    await expect(gpuLib.attentionAsync(q, k, v, { out })).rejects.toThrowError(/^attention: options\.out: expected a Float32Array of length 180/);
  });
});
