// Bad input gets a JavaScript Error naming the argument, the expectation and what was given;
// never a WebAssembly abort; and the instance keeps working after each one.
import type { Attnlab } from 'attnlab';
import { describe, expect, it } from 'vitest';
import { patternMask, type PatternArgs } from '../../web/lib/patterns.js';
import { maxError, randn, refAttention } from './reference.js';
import { useVariants, VARIANTS } from './variants.js';

const q = randn([2, 3, 4], 1), k = randn([2, 5, 4], 2), v = randn([2, 5, 6], 3);
const E = 4;
const mhaParams = { numHeads: 2, inProjWeight: randn([3 * E, E], 4), outProjWeight: randn([E, E], 5) };
const x1 = randn([3, 4], 6);
const f32 = (shape: number[]) => ({ data: new Float32Array(shape.reduce((a, b) => a * b, 1)), shape });

type Case = [string, (lib: Attnlab) => unknown, RegExp];
function bigNonFinite(): Case[] {
  const Q = randn([2, 64, 64], 11), K = randn([2, 64, 64], 12);
  const poison = (t: typeof Q, at: number[], x: number) => ({ data: Float32Array.from(t.data, (y, i) => (at.includes(i) ? x : y)), shape: t.shape });
  const heads = { numHeads: 2, inProjWeight: randn([3 * 64, 64], 13), outProjWeight: randn([64, 64], 14) };
  return [
    ['NaN late in a big q', (l) => l.attention(poison(Q, [8000, 8190], NaN), K, K), /^attention: q: expected finite values, got NaN at index 8000$/],
    ['-Infinity in a big v', (l) => l.attention(Q, K, poison(K, [4099], -Infinity)), /^attention: v: expected finite values, got -Infinity at index 4099$/],
    ['Infinity in a big k', (l) => l.attention(Q, poison(K, [5000], Infinity), K), /^attention: k: expected finite values, got Infinity at index 5000$/],
    ['NaN in a big MHA key', (l) => l.multiHeadAttention(Q, poison(K, [7777], NaN), K, heads), /^multiHeadAttention: key: expected finite values, got NaN at index 7777$/],
  ];
}
const cases: Case[] = [
  ['q not a tensor', (l) => l.attention(null as never, k, v), /^attention: q: expected a tensor \{ data: Float32Array, shape: number\[\] \}, got null$/],
  // v null was taken for "no v" (attentionScores' case) and failed later as a bare TypeError.
  ['v null', (l) => l.attention(q, k, null as never), /^attention: v: expected a tensor \{ data: Float32Array, shape: number\[\] \}, got null$/],
  ['v null with weights', (l) => l.attention(q, k, null as never, { returnWeights: true }), /^attention: v: expected a tensor \{ data: Float32Array, shape: number\[\] \}, got null$/],
  ['v null with a pattern', (l) => l.attention(q, k, null as never, { pattern: { type: 'local', window: 1 } }), /^attention: v: expected a tensor \{ data: Float32Array, shape: number\[\] \}, got null$/],
  ['v null with shaw', (l) => l.attention(q, k, null as never, { shaw: { maxDistance: 1, keys: f32([3, 4]) } }), /^attention: v: expected a tensor \{ data: Float32Array, shape: number\[\] \}, got null$/],
  ['q data a plain array', (l) => l.attention({ data: [1, 2, 3, 4] as never, shape: [1, 4] }, k, v), /^attention: q\.data: expected a Float32Array, got \[1, 2, 3, 4\]$/],
  ['q data a Float64Array', (l) => l.attention({ data: new Float64Array(24) as never, shape: [2, 3, 4] }, k, v), /^attention: q\.data: expected a Float32Array, got Float64Array\(24\)$/],
  ['data length disagrees with shape', (l) => l.attention({ data: new Float32Array(23), shape: [2, 3, 4] }, k, v), /^attention: q: expected data of length 24 for shape \[2, 3, 4\], got length 23$/],
  ['negative size', (l) => l.attention({ data: new Float32Array(0), shape: [2, -3, 4] }, k, v), /^attention: q\.shape: expected an array of non-negative integers, got \[2, -3, 4\]$/],
  ['non-integer size', (l) => l.attention({ data: new Float32Array(6), shape: [2, 1.5, 2] }, k, v), /^attention: q\.shape: expected an array of non-negative integers, got \[2, 1\.5, 2\]$/],
  ['q of rank 1', (l) => l.attention({ data: new Float32Array(4), shape: [4] }, k, v), /^attention: q: expected a tensor of rank >= 2 \[\.\.\., Sq, Dq\], got shape \[4\]$/],
  ['k feature size differs from q', (l) => l.attention(q, f32([2, 5, 3]), v), /^attention: k: expected the last dimension to equal q's \(4\) for score 'scaled_dot', got shape \[2, 5, 3\]$/],
  ['v rows differ from k', (l) => l.attention(q, k, f32([2, 4, 6])), /^attention: v: expected 5 rows \(Sk, as k\), got shape \[2, 4, 6\]$/],
  ['batch dims differ', (l) => l.attention(q, f32([3, 5, 4]), v), /^attention: k: expected leading dimensions \[2\] \(as q\), got shape \[3, 5, 4\]$/],
  ['NaN in q', (l) => l.attention({ data: Float32Array.from(q.data, (x, i) => (i === 7 ? NaN : x)), shape: q.shape }, k, v), /^attention: q: expected finite values, got NaN at index 7$/],
  ['Infinity in v', (l) => l.attention(q, k, { data: Float32Array.from(v.data, (x, i) => (i === 2 ? Infinity : x)), shape: v.shape }), /^attention: v: expected finite values, got Infinity at index 2$/],
  ['bad score name', (l) => l.attention(q, k, v, { score: 'cosine' as never }), /^attention: options\.score: expected one of 'scaled_dot', 'dot', 'general', 'additive', got "cosine"$/],
  ['general without W', (l) => l.attention(q, k, v, { score: 'general' }), /^attention: options\.params\.W: expected a tensor \[Dq, Dk\] = \[4, 4\] for score 'general', got undefined$/],
  ['additive with wrong Wk', (l) => l.attention(q, k, v, { score: 'additive', params: { Wq: f32([5, 4]), Wk: f32([5, 3]), wv: f32([5]) } }), /^attention: options\.params\.Wk: expected shape \[5, 4\] \(\[hidden, Dk\]\), got \[5, 3\]$/],
  ['mask that does not broadcast', (l) => l.attention(q, k, v, { attnMask: { data: new Uint8Array(4), shape: [4] } }), /^attention: options\.attnMask: expected a shape that broadcasts to \[2, 3, 5\], got \[4\]$/],
  ['mask of the wrong type', (l) => l.attention(q, k, v, { attnMask: { data: new Int8Array(5), shape: [5] } as never }), /^attention: options\.attnMask\.data: expected a Uint8Array \(boolean mask\) or Float32Array \(additive mask\), got Int8Array\(5\)$/],
  ['mask data an Int32Array', (l) => l.attention(q, k, v, { attnMask: { data: new Int32Array(15), shape: [3, 5] } as never }), /^attention: options\.attnMask\.data: expected a Uint8Array \(boolean mask\) or Float32Array \(additive mask\), got Int32Array\(15\)$/],
  ['mask data a plain array', (l) => l.attention(q, k, v, { attnMask: { data: [1, 0, 1, 1, 0], shape: [5] } as never }), /^attention: options\.attnMask\.data: expected a Uint8Array \(boolean mask\) or Float32Array \(additive mask\), got \[1, 0, 1, 1, 0\]$/],
  ['mask not a mask', (l) => l.attention(q, k, v, { attnMask: 3 as never }), /^attention: options\.attnMask: expected a mask \{ data: Uint8Array \(boolean\) or Float32Array \(additive\), shape \}, got 3$/],
  // 'additive' scores are not scaled: a scale was silently ignored.
  ['scale with an additive score', (l) => l.attention(q, k, v, { score: 'additive', scale: 2, params: { Wq: f32([5, 4]), Wk: f32([5, 4]), wv: f32([5]) } }), /^attention: options\.scale: expected none for score 'additive' \(it scales dot-product scores only\), got 2$/],
  ['attentionScores: scale with an additive score', (l) => l.attentionScores(q, k, { score: 'additive', scale: 2, params: { Wq: f32([5, 4]), Wk: f32([5, 4]), wv: f32([5]) } }), /^attentionScores: options\.scale: expected none for score 'additive' \(it scales dot-product scores only\), got 2$/],
  ['synthesizer without a kind', (l) => l.synthesizer(x1, f32([3, 2]), {} as never), /^synthesizer: options\.kind: expected one of 'dense', 'random', 'factorized-dense', 'factorized-random', got undefined$/],
  ['synthesizer random with a malformed x', (l) => l.synthesizer({ data: new Float32Array(3), shape: [3] }, f32([3, 2]), { kind: 'random' }), /^synthesizer: x: expected a tensor of rank >= 2 \[\.\.\., S, D\], got shape \[3\]$/],
  ['synthesizer factorized-random with x of other rows', (l) => l.synthesizer(f32([4, 2]), f32([3, 2]), { kind: 'factorized-random' }), /^synthesizer: x: expected shape \[3, D\] \(leading dimensions and S as v\), got \[4, 2\]$/],
  // R1's columns are the rank: a different rank beside them was silently overridden.
  ['synthesizer factorized-random with a rank other than R1\'s', (l) => l.synthesizer(null, f32([3, 2]), { kind: 'factorized-random', R1: f32([3, 2]), R2: f32([3, 2]), rank: 5 }), /^synthesizer: options\.rank: expected R1's 2 columns \(or no rank with R1 and R2\), got 5$/],
  ['linearAttention: favor+ features past the heap', (l) => l.linearAttention(q, k, v, { method: 'favor+', features: 1e9 }), /^linearAttention: options\.features: expected working memory within the WebAssembly heap's 2 GiB limit, got 68000000016 bytes \(features x \(D \+ Sk \+ Dv \+ 2\) = 1000000000 x 17 floats\)$/],
  ['linearAttention: linformer rank past the heap', (l) => l.linearAttention(q, k, v, { method: 'linformer', rank: 1e9 }), /^linearAttention: options\.rank: expected working memory within the WebAssembly heap's 2 GiB limit, got 84000000000 bytes \(rank x \(2 Sk \+ D \+ Dv \+ 1\) = 1000000000 x 21 floats\)$/],
  // Past 4096 values the check runs in the SIMD kernel over a heap copy: the same messages, the
  // first bad index (here in a 16-value block's tail, after an earlier clean block).
  ...bigNonFinite(),
  ['linear: x and weight disagree', (l) => l.linear(f32([3, 4]), f32([2, 5])), /^linear: x: expected a last dimension of 5 \(weight is \[out, in\] = \[2, 5\]\), got shape \[3, 4\]$/],
  ['linear: bias of the wrong size', (l) => l.linear(f32([3, 4]), f32([2, 4]), f32([3])), /^linear: bias: expected shape \[2\] \(\[out\]\), got \[3\]$/],
  ['additive mask with NaN', (l) => l.attention(q, k, v, { attnMask: { data: Float32Array.from([0, NaN, 0, 0, 0]), shape: [5] } }), /^attention: options\.attnMask: expected finite values or -Infinity, got NaN at index 1$/],
  ['validLens a Float32Array', (l) => l.attention(q, k, v, { validLens: new Float32Array([1, 2]) as never }), /^attention: options\.validLens: expected an Int32Array, got Float32Array\(2\)$/],
  ['validLens an array with a fraction', (l) => l.attention(q, k, v, { validLens: [1, 2.5] }), /^attention: options\.validLens: expected an Int32Array or an array of integers, got 2\.5 at index 1$/],
  ['validLens out of range', (l) => l.attention(q, k, v, { validLens: new Int32Array([2, 6]) }), /^attention: options\.validLens: expected values in \[0, 5\] \(the number of keys\), got 6 at index 1$/],
  ['validLens of a wrong length', (l) => l.attention(q, k, v, { validLens: new Int32Array([1, 2, 3]) }), /^attention: options\.validLens: expected length 1, 2, or 6 \(one per query row\), got 3$/],
  ['causal not a boolean', (l) => l.attention(q, k, v, { causal: 'yes' as never }), /^attention: options\.causal: expected a boolean, got "yes"$/],
  ['unknown option', (l) => l.attention(q, k, v, { retrunWeights: true } as never), /^attention: options: unknown option 'retrunWeights'; expected one of /],
  ['scale of zero', (l) => l.attention(q, k, v, { scale: 0 }), /^attention: options\.scale: expected a number in \(0, 1e4\], got 0$/],
  ['numHeads not dividing E', (l) => l.multiHeadAttention(x1, x1, x1, { ...mhaParams, numHeads: 3 }), /^multiHeadAttention: params\.numHeads: expected a divisor of the embedding size 4, got 3$/],
  ['numHeads not an integer', (l) => l.multiHeadAttention(x1, x1, x1, { ...mhaParams, numHeads: 1.5 }), /^multiHeadAttention: params\.numHeads: expected an integer >= 1, got 1\.5$/],
  ['inProjWeight of the wrong shape', (l) => l.multiHeadAttention(x1, x1, x1, { ...mhaParams, inProjWeight: f32([4, 4]) }), /^multiHeadAttention: params\.inProjWeight: expected shape \[12, 4\] \[3E, E\], got \[4, 4\]$/],
  ['key of another embedding size', (l) => l.multiHeadAttention(x1, f32([3, 5]), x1, mhaParams), /^multiHeadAttention: key: expected shape \[3, 4\] \[S, E\]/],
  ['keyPaddingMask of the wrong shape', (l) => l.multiHeadAttention(x1, x1, x1, mhaParams, { keyPaddingMask: { data: new Uint8Array(4), shape: [4] } }), /^multiHeadAttention: options\.keyPaddingMask: expected shape \[3\] \(\[S\]\), got \[4\]$/],
  ['attnMask of the wrong shape', (l) => l.multiHeadAttention(x1, x1, x1, mhaParams, { attnMask: { data: new Uint8Array(9), shape: [1, 3, 3] } }), /^multiHeadAttention: options\.attnMask: expected shape \[3, 3\] \(\[L, S\]\) or \[2, 3, 3\] \(\[numHeads, L, S\]\), got \[1, 3, 3\]$/],
  ['bad kernel name', (l) => l.nadarayaWatson(f32([3]), f32([4]), f32([4]), { kernel: 'epanechikov' as never }), /^nadarayaWatson: options\.kernel: expected one of 'gaussian', 'boxcar', 'epanechnikov', 'triangular', got "epanechikov"$/],
  ['non-finite bandwidth', (l) => l.nadarayaWatson(f32([3]), f32([4]), f32([4]), { bandwidth: Infinity }), /^nadarayaWatson: options\.bandwidth: expected a finite number > 0, got Infinity$/],
  ['negative bandwidth', (l) => l.nadarayaWatson(f32([3]), f32([4]), f32([4]), { bandwidth: -1 }), /^nadarayaWatson: options\.bandwidth: expected a finite number > 0, got -1$/],
  ['values with the wrong row count', (l) => l.nadarayaWatson(f32([3]), f32([4]), f32([5])), /^nadarayaWatson: values: expected shape \[4\] or \[4, Dv\] \(one row per key\), got \[5\]$/],
  ['positional length negative', (l) => l.positionalEncoding(-1, 8), /^positionalEncoding: length: expected an integer >= 0, got -1$/],
  ['positional dim non-integer', (l) => l.positionalEncoding(4, 2.5), /^positionalEncoding: dim: expected an integer >= 1, got 2\.5$/],
  ['positional length a BigInt', (l) => l.positionalEncoding(10n as never, 8), /^positionalEncoding: length: expected an integer >= 0, got 10n$/],
  ['too large for the heap', (l) => l.positionalEncoding(1 << 20, 1 << 10), /^positionalEncoding: out of memory: 4294967296 bytes exceeds the WebAssembly heap's 2 GiB limit$/],
  ['maskedSoftmax valid lengths as options', (l) => l.maskedSoftmax(x1, new Int32Array([2, 3, 1]) as never), /^maskedSoftmax: options: expected an object, got Int32Array\(3\)$/],
  ['maskedSoftmax an empty typed array as options', (l) => l.maskedSoftmax(x1, new Int32Array(0) as never), /^maskedSoftmax: options: expected an object, got Int32Array\(0\)$/],
  ['options as a Map, whose entries would be ignored', (l) => l.attention(x1, x1, x1, new Map([['causal', true]]) as never), /^attention: options: expected a plain object \(\{ option: value \}\), got a Map$/],
  ['options as a Promise (an un-awaited options object)', (l) => l.maskedSoftmax(x1, Promise.resolve({ causal: true }) as never), /^maskedSoftmax: options: expected a plain object \(\{ option: value \}\), got a Promise$/],
  ['maskedSoftmax x of rank 0', (l) => l.maskedSoftmax({ data: new Float32Array(1), shape: [] }), /^maskedSoftmax: x: expected a tensor of rank >= 1 \[\.\.\., Sk\], got shape \[\]$/],
];

const libs = useVariants();

describe.each(VARIANTS)('%s', (variant) => {
  it('has at least 20 cases', () => expect(cases.length).toBeGreaterThanOrEqual(20));

  it.each(cases)('%s', (_name, call, message) => {
    const lib = libs[variant];
    expect(() => call(lib)).toThrowError(message);
    // The instance still works, and gives the right answer.
    const got = lib.attention(q, k, v, { causal: true });
    expect(maxError(got.output.data, refAttention(q, k, v, { causal: true }).output.data)).toBeLessThanOrEqual(1e-5);
  });

  it('the async form rejects with the same message (big input, SIMD check)', async () => {
    const K = randn([2, 64, 64], 12);
    const bad = { data: Float32Array.from(K.data, (y, i) => (i === 5000 ? Infinity : y)), shape: K.shape };
    await expect(libs[variant].attentionAsync(K, bad, K)).rejects.toThrowError(/^attention: k: expected finite values, got Infinity at index 5000$/);
  });

  // Edge shapes that hung, threw a RangeError or a misleading Error: each gives its (empty) result.
  // No time is asserted: a loop over the leading dimensions (2^40 rows) runs for hours, and the
  // test's timeout fails it (Vitest checks it when a synchronous test returns, too).
  it('empty results with huge leading dimensions return at once', () => {
    const lib = libs[variant];
    const E = (shape: number[]) => ({ data: new Float32Array(0), shape });
    expect(lib.maskedSoftmax(E([2 ** 40, 0, 1024]), { causal: true }).shape).toEqual([2 ** 40, 0, 1024]);
    expect(lib.maskedSoftmax(E([2 ** 40, 0, 1024]), { validLens: [1] }).data.length).toBe(0);
    for (const method of ['elu', 'favor+', 'linformer'] as const) {
      expect(lib.linearAttention(E([2 ** 40, 0, 4]), E([2 ** 40, 0, 4]), E([2 ** 40, 0, 4]), { method }).output.shape).toEqual([2 ** 40, 0, 4]);
    }
    const r = lib.attention(E([2 ** 20, 2 ** 20, 0, 8]), E([2 ** 20, 2 ** 20, 0, 8]), E([2 ** 20, 2 ** 20, 0, 3]), { attnMask: { data: new Uint8Array(0), shape: [0] }, returnWeights: true });
    expect([r.output.shape, r.weights.shape]).toEqual([[2 ** 20, 2 ** 20, 0, 3], [2 ** 20, 2 ** 20, 0, 0]]);
    expect(lib.attentionScores(E([2 ** 40, 0, 8]), E([2 ** 40, 0, 8])).shape).toEqual([2 ** 40, 0, 0]);
  }, 10_000);

  it('zero heads with t5, synthesizer with S = 0, and bigbird with more random blocks than blocks work', () => {
    const lib = libs[variant];
    expect(lib.attention(f32([2, 0, 4, 8]), f32([2, 0, 4, 8]), f32([2, 0, 4, 8]), { t5: { weights: f32([0, 8]) } }).output.shape).toEqual([2, 0, 4, 8]);
    for (const kind of ['random', 'factorized-random'] as const) {
      expect(lib.synthesizer(null, f32([1, 0, 3]), { kind, returnWeights: true }).weights.shape).toEqual([1, 0, 0]);
    }
    const dense = { W1: f32([2, 4]), W2: f32([0, 2]) };
    expect(lib.synthesizer(f32([1, 0, 4]), f32([1, 0, 3]), { kind: 'dense', dense }).output.shape).toEqual([1, 0, 3]);
    const pattern = { type: 'bigbird', blockSize: 1, randomBlocks: 2 ** 53 - 1 } as const;
    const all = { ...pattern, randomBlocks: 5 };
    const Q = randn([5, 4], 7), V = randn([5, 2], 8);
    expect(lib.attention(Q, Q, V, { pattern }).output.data).toEqual(lib.attention(Q, Q, V, { pattern: all }).output.data);
  });

  // Each ran the core on an empty input: rope built its [S, D / 2] angle tables and failed for
  // memory, multi-head attention sized its rope tables for L, the pattern walked its Sq rows.
  it('rope, an empty multi-head batch and an empty pattern give their empty results', () => {
    const lib = libs[variant];
    const E = (shape: number[]) => ({ data: new Float32Array(0), shape });
    expect(lib.rope(E([0, 2 ** 27, 8])).shape).toEqual([0, 2 ** 27, 8]);
    const heads = { numHeads: 2, inProjWeight: f32([24, 8]), outProjWeight: f32([8, 8]) };
    const r = lib.multiHeadAttention(E([0, 2 ** 30, 8]), E([0, 4, 8]), E([0, 4, 8]), heads, { rope: true, needWeights: true, averageWeights: false });
    expect([r.output.shape, r.weights.shape, r.output.data.length, r.weights.data.length]).toEqual([[0, 2 ** 30, 8], [0, 2, 2 ** 30, 4], 0, 0]);
    expect(lib.attentionPattern({ type: 'bigbird', blockSize: 1 }, 2 ** 10, 0).shape).toEqual([2 ** 10, 0]);
    // The core is not asked at all (with Sq = 2^40 it never returned).
    const core = { attentionPattern: () => { throw new Error('the core ran'); } } as unknown as Parameters<typeof patternMask>[0];
    const p: PatternArgs = { type: 'local', window: 1, global: [], blockSize: 0, windowBlocks: 0, randomBlocks: 0, seed: 0 };
    expect(patternMask(core, 'attentionPattern', p, 2 ** 40, 0).shape).toEqual([2 ** 40, 0]);
    expect(patternMask(core, 'attentionPattern', p, 0, 2 ** 40).data.length).toBe(0);
  });

  it('the async form names a null v too', async () => {
    await expect(libs[variant].attentionAsync(q, k, null as never)).rejects.toThrowError(/^attention: v: expected a tensor \{ data: Float32Array, shape: number\[\] \}, got null$/);
  });

  it('errors are Error instances, not WebAssembly exceptions', () => {
    try {
      libs[variant].attention(q, f32([2, 5, 3]), v);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(Error);
      expect(e).not.toBeInstanceOf(WebAssembly.RuntimeError);
    }
  });

  it('the heap is unchanged by failed calls', () => {
    const lib = libs[variant];
    lib.attention(q, k, v);
    const before = lib.heapStats().used;
    for (const [, call] of cases) expect(() => call(lib)).toThrow();
    expect(lib.heapStats().used).toBe(before);
  });
});
