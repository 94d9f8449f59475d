// options.out of maskedSoftmax(), attentionScores(), linear() and nadarayaWatson(), as attention's
// (attention-out.test.ts): the result written into the caller's Float32Array and returned, the
// same values as a new array, on every build, and maskedSoftmaxAsync's on WebGPU (Dawn).
import { load, type Attnlab } from 'attnlab';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gpu, requireDawn } from './dawn.js';
import { randn } from './reference.js';
import { useVariants, VARIANTS } from './variants.js';

const libs = useVariants();
const x = randn([2, 3, 5], 1), q = randn([2, 3, 4], 2), k = randn([2, 5, 4], 3), w = randn([6, 5], 4, 0.3), b = randn([6], 5, 0.1);
const nq = randn([2, 3, 2], 6), nk = randn([2, 4, 2], 7), nv = randn([2, 4, 3], 8);

type Case = {
  name: string;
  /** The call, with options.out when given. */
  run: (lib: Attnlab, out?: Float32Array) => { data: Float32Array; shape: number[] };
  length: number;
  shape: string;
};
const cases: Case[] = [
  { name: 'maskedSoftmax', run: (l, out) => l.maskedSoftmax(x, { causal: true, queryOffset: 2, ...(out && { out }) }), length: 30, shape: '[2, 3, 5]' },
  { name: 'attentionScores', run: (l, out) => l.attentionScores(q, k, { score: 'dot', scale: 0.5, ...(out && { out }) }), length: 30, shape: '[2, 3, 5]' },
  { name: 'linear', run: (l, out) => l.linear(x, w, b, out && { out }), length: 36, shape: '[2, 3, 6]' },
  { name: 'nadarayaWatson', run: (l, out) => l.nadarayaWatson(nq, nk, nv, { bandwidth: 0.7, ...(out && { out }) }).output, length: 18, shape: '[2, 3, 3]' },
];

describe.each(VARIANTS)('options.out of the other ops (%s)', (variant) => {
  it.each(cases)('$name: fills the caller\'s array and returns it, bit for bit the values of a new array', ({ run, length }) => {
    const lib = libs[variant];
    const want = run(lib);
    const out = new Float32Array(length).fill(Number.NaN);
    const got = run(lib, out);
    expect(got.data).toBe(out);
    expect(got.shape).toEqual(want.shape);
    expect(out).toEqual(want.data);
  });

  it.each(cases)('$name: names a wrong length, type or a detached array; the array stays as it was and the instance keeps working', ({ name, run, length, shape }) => {
    const lib = libs[variant];
    const fn = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const s = shape.replace(/[[\]]/g, '\\$&');
    expect(() => run(lib, new Float32Array(length + 1))).toThrowError(
      new RegExp(`^${fn}: options\\.out: expected a Float32Array of length ${length} \\(the output's shape ${s}\\), got length ${length + 1}$`));
    expect(() => run(lib, new Float64Array(length) as unknown as Float32Array)).toThrowError(
      new RegExp(`^${fn}: options\\.out: expected a Float32Array, got Float64Array\\(${length}\\)$`));
    const detached = new Float32Array(length);
    structuredClone(detached.buffer, { transfer: [detached.buffer] });
    expect(() => run(lib, detached)).toThrowError(
      new RegExp(`^${fn}: options\\.out: expected a Float32Array of length ${length} .*, got length 0 \\(its ArrayBuffer is detached: transferred away, e\\.g\\. to a Worker\\)$`));
    expect(run(lib).data).toEqual(run(lib, new Float32Array(length)).data);
  });

  it('may be an input\'s own data (written after the inputs are read)', () => {
    const lib = libs[variant];
    const own = (t: { data: Float32Array; shape: number[] }) => ({ data: t.data.slice(), shape: t.shape });
    const sx = own(x);
    expect(lib.maskedSoftmax(sx, { out: sx.data }).data).toBe(sx.data);
    expect(sx.data).toEqual(lib.maskedSoftmax(x).data);
    const sq = own(randn([2, 5, 5], 9)), k5 = randn([2, 5, 5], 10);
    expect(lib.attentionScores(sq, k5, { out: sq.data }).data).toBe(sq.data);
    expect(sq.data).toEqual(lib.attentionScores(randn([2, 5, 5], 9), k5).data);
    const lx = own(x), lw = randn([5, 5], 10, 0.3);
    expect(lib.linear(lx, lw, undefined, { out: lx.data }).data).toBe(lx.data);
    expect(lx.data).toEqual(lib.linear(x, lw).data);
    const vq = own(randn([2, 3, 3], 11));
    const wantNw = lib.nadarayaWatson(randn([2, 3, 3], 11), randn([2, 4, 3], 12), nv);
    const gotNw = lib.nadarayaWatson(vq, randn([2, 4, 3], 12), nv, { out: vq.data });
    expect(gotNw.output.data).toBe(vq.data);
    expect(vq.data).toEqual(wantNw.output.data);
    expect(gotNw.weights.data).toEqual(wantNw.weights.data);
  });

  it('a call that fails in the core leaves the array as it was; empty outputs return the empty array given', () => {
    const lib = libs[variant];
    // q W overflows float32: the core's error comes before the copy out.
    const big = { data: new Float32Array([3e38, 3e38]), shape: [1, 1, 2] };
    const W = { data: new Float32Array(4).fill(2), shape: [2, 2] };
    const out = new Float32Array(1).fill(7);
    expect(() => lib.attentionScores(big, big, { score: 'general', params: { W }, out })).toThrowError(/^attentionScores: q, params\.W: q W overflows float32/);
    expect(out[0]).toBe(7);
    const empty = new Float32Array(0);
    expect(lib.maskedSoftmax({ data: empty.slice(), shape: [2, 0, 5] }, { out: empty }).data).toBe(empty);
    expect(lib.attentionScores(randn([2, 0, 4], 1), k, { out: empty }).data).toBe(empty);
    expect(lib.linear({ data: empty.slice(), shape: [0, 5] }, w, b, { out: empty }).data).toBe(empty);
  });

  it('linear: options is checked as an options object', () => {
    const lib = libs[variant];
    expect(() => lib.linear(x, w, b, { output: new Float32Array(36) } as never)).toThrowError(/^linear: options: unknown option 'output'/);
  });
});

describe('maskedSoftmaxAsync options.out on WebGPU', () => {
  let gpuLib: Attnlab;
  beforeAll(async () => {
    await requireDawn();
    gpuLib = await load({ backend: 'webgpu', gpu, variant: 'simd', threads: 1 });
  });
  afterAll(() => gpuLib?.dispose());

  it('the readback lands in the caller\'s array; a wrong length is named', async () => {
    const want = await gpuLib.maskedSoftmaxAsync(x, { causal: true });
    const out = new Float32Array(30).fill(Number.NaN);
    expect((await gpuLib.maskedSoftmaxAsync(x, { causal: true, out })).data).toBe(out);
    expect(out).toEqual(want.data);
    await expect(gpuLib.maskedSoftmaxAsync(x, { out: new Float32Array(3) })).rejects.toThrowError(/^maskedSoftmax: options\.out: expected a Float32Array of length 30/);
  });
});
