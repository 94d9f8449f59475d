// WebGPU-versus-WebAssembly comparison cases, shared by the Node test (webgpu.test.ts) and the
// Chromium test (tests/browser/webgpu.browser.test.ts, which serves this file to a page). Every case
// runs through the …Async methods, so the same code runs on a WebGPU and a WebAssembly instance.
import type { Attnlab, AttentionResult, Tensor } from 'attnlab';
import { randBool, randn } from './reference.js';

/** Largest |gpu - wasm| allowed. */
export const GPU_TOL = 1e-4;

export interface GpuCase {
  name: string;
  run(lib: Attnlab): Promise<AttentionResult | Tensor>;
}

export interface Comparison {
  name: string;
  shapesMatch: boolean;
  /** Largest absolute difference over output and weights; Infinity for any NaN or mismatched infinity. */
  maxAbsError: number;
  /** Entries exactly 0 on WebAssembly (masked keys, fully masked rows) but not 0 on the GPU. */
  zeroMismatches: number;
}

const attn = (name: string, q: number[], k: number[], v: number[], options: Parameters<Attnlab['attentionAsync']>[3] = {}): GpuCase => ({
  name: `attention: ${name}`,
  run: (lib) => lib.attentionAsync(randn(q, 1), randn(k, 2), randn(v, 3), options),
});

// Fused kernel: 64 query rows per workgroup, key tiles of 8 to 32; matmul tiles 64 x 64.
const attentionCases: GpuCase[] = [
  attn('tile multiples, [2, 2] slices', [2, 2, 64, 64], [2, 2, 64, 64], [2, 2, 64, 64]),
  attn('tile multiples, causal', [2, 2, 128, 64], [2, 2, 128, 64], [2, 2, 128, 64], { causal: true }),
  attn('not tile multiples, causal', [2, 70, 64], [2, 100, 64], [2, 100, 64], { causal: true }),
  attn('odd head sizes 67 / 33', [2, 37, 67], [2, 131, 67], [2, 131, 33]),
  attn('weights, tile multiples, causal', [2, 128, 64], [2, 128, 64], [2, 128, 64], { causal: true, returnWeights: true }),
  attn('weights, odd sizes', [2, 37, 67], [2, 131, 67], [2, 131, 33], { returnWeights: true }),
  attn('causal, Sq < Sk', [1, 20, 16], [1, 90, 16], [1, 90, 16], { causal: true, returnWeights: true }),
  attn('causal, Sq > Sk', [1, 90, 16], [1, 20, 16], [1, 20, 16], { causal: true }),
  attn('validLens per batch with a 0 (fully masked rows)', [2, 3, 70, 16], [2, 3, 70, 16], [2, 3, 70, 16], { validLens: new Int32Array([45, 0]) }),
  attn('validLens per batch with a 0, weights', [2, 3, 70, 16], [2, 3, 70, 16], [2, 3, 70, 16], { validLens: new Int32Array([45, 0]), returnWeights: true }),
  attn('validLens per row + causal (tile skipping)', [1, 300, 16], [1, 300, 16], [1, 300, 16], {
    causal: true, validLens: Int32Array.from({ length: 300 }, (_, i) => (i * 7) % 301),
  }),
  attn('padding mask [B, 1, 1, Sk]', [2, 2, 65, 16], [2, 2, 77, 16], [2, 2, 77, 16], { attnMask: randBool([2, 1, 1, 77], 5, 0.7) }),
  attn('bool mask [Sq, Sk] with fully masked rows', [2, 4, 16], [2, 3, 16], [2, 3, 16], {
    attnMask: { data: Uint8Array.from([0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1]), shape: [4, 3] }, returnWeights: true,
  }),
  attn('bool mask with fully masked rows, fused', [2, 4, 16], [2, 3, 16], [2, 3, 16], {
    attnMask: { data: Uint8Array.from([0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1]), shape: [4, 3] },
  }),
  attn('additive mask with -Infinity, causal', [2, 66, 16], [2, 66, 16], [2, 66, 16], {
    causal: true, attnMask: { data: Float32Array.from(randn([66, 66], 9, 3).data, (x) => (x > 2.2 ? -Infinity : x)), shape: [66, 66] },
  }),
  attn("score 'dot' with a scale", [2, 50, 16], [2, 60, 16], [2, 60, 8], { score: 'dot', scale: 0.3, returnWeights: true }),
  attn("score 'general', Dq != Dk", [2, 30, 24], [2, 40, 16], [2, 40, 16], { score: 'general', params: { W: randn([24, 16], 9, 0.3) } }),
  attn("score 'additive', Dq != Dk, hidden 33, causal, weights", [2, 37, 20], [2, 41, 12], [2, 41, 8], {
    score: 'additive', params: { Wq: randn([33, 20], 10), Wk: randn([33, 12], 11), wv: randn([33], 12) }, causal: true, returnWeights: true,
  }),
  attn("score 'additive', validLens", [2, 70, 16], [2, 70, 16], [2, 70, 16], {
    score: 'additive', params: { Wq: randn([16, 16], 10), Wk: randn([16, 16], 11), wv: randn([16], 12) }, validLens: new Int32Array([40, 0]),
  }),
  attn('Sk = 0', [2, 3, 16], [2, 0, 16], [2, 0, 8], { returnWeights: true }),
  attn('head size 160 (over the fused limit)', [1, 70, 160], [1, 70, 160], [1, 70, 16], { causal: true }),
  attn('no leading dimensions', [65, 16], [65, 16], [65, 16], { causal: true }),
  attn('ALiBi, paper slopes, causal', [2, 3, 70, 16], [2, 3, 70, 16], [2, 3, 70, 16], { alibi: true, causal: true }),
  attn('ALiBi, given slopes, Sq != Sk, weights', [1, 3, 40, 16], [1, 3, 90, 16], [1, 3, 90, 16], { alibi: Float32Array.from([0.5, 0.1, 2]), returnWeights: true }),
  attn('ALiBi + padding mask', [2, 4, 33, 16], [2, 4, 33, 16], [2, 4, 33, 16], { alibi: true, attnMask: randBool([2, 1, 1, 33], 12, 0.7) }),
  attn('RoPE, causal', [2, 3, 70, 16], [2, 3, 70, 16], [2, 3, 70, 16], { rope: true, causal: true }),
  attn('RoPE in halves, offset, Sq != Sk, weights', [1, 2, 40, 16], [1, 2, 90, 16], [1, 2, 90, 8], { rope: { pairs: 'halves', offset: 1000, base: 500 }, returnWeights: true }),
  attn("RoPE + ALiBi, score 'general'", [2, 30, 16], [2, 40, 16], [2, 40, 16], { rope: true, alibi: true, score: 'general', params: { W: randn([16, 16], 9, 0.3) } }),
  // T5's relative bias: the core's diagonal table as one more additive mask on the GPU.
  attn('T5 bias, bidirectional, heads [2, 3], weights', [2, 3, 40, 16], [2, 3, 90, 16], [2, 3, 90, 16], { t5: { weights: randn([3, 32], 13, 2), maxDistance: 20 }, returnWeights: true }),
  attn('T5 bias, causal scheme + ALiBi + causal', [2, 70, 16], [2, 70, 16], [2, 70, 16], { t5: { weights: randn([2, 8], 14, 2), bidirectional: false, maxDistance: 16 }, alibi: true, causal: true }),
  // queryOffset: a KV-cached decoder step and a chunked prefill (bottom-right aligned), and past Sk.
  attn('queryOffset, decoder step: causal, ALiBi, RoPE', [2, 3, 1, 16], [2, 3, 90, 16], [2, 3, 90, 16], { queryOffset: 89, causal: true, alibi: true, rope: { offset: 5 } }),
  attn('queryOffset, chunk: causal, T5, RoPE in halves, weights', [2, 3, 20, 16], [2, 3, 90, 16], [2, 3, 90, 8], {
    queryOffset: 70, causal: true, t5: { weights: randn([3, 32], 15, 2), maxDistance: 40 }, rope: { pairs: 'halves' }, returnWeights: true,
  }),
  attn('queryOffset past Sk - Sq, causal, validLens', [2, 70, 16], [2, 100, 16], [2, 100, 16], { queryOffset: 50, causal: true, validLens: new Int32Array([90, 60]) }),
  attn('queryOffset 2^40, causal, ALiBi given slopes', [1, 2, 8, 16], [1, 2, 30, 16], [1, 2, 30, 16], { queryOffset: 2 ** 40, causal: true, alibi: Float32Array.from([0, 1e-12]) }),
  // Sparse patterns (a boolean mask on the GPU) against the WebAssembly sparse kernel.
  attn('pattern local, causal', [2, 2, 100, 16], [2, 2, 100, 16], [2, 2, 100, 16], { pattern: { type: 'local', window: 5 }, causal: true }),
  attn('pattern longformer, global tokens, Sq != Sk, weights', [2, 40, 16], [2, 70, 16], [2, 70, 8], {
    pattern: { type: 'longformer', window: 3, global: [0, 17, 69] }, returnWeights: true,
  }),
  attn('pattern bigbird, validLens with a 0, ALiBi', [2, 3, 96, 16], [2, 3, 96, 16], [2, 3, 96, 16], {
    pattern: { type: 'bigbird', blockSize: 8, windowBlocks: 1, globalBlocks: [0], randomBlocks: 2, seed: 7 }, validLens: new Int32Array([50, 0]), alibi: true,
  }),
  attn("pattern local, additive mask, RoPE, score 'dot'", [1, 66, 16], [1, 66, 16], [1, 66, 16], {
    pattern: { type: 'local', window: 9 }, score: 'dot', scale: 0.2, rope: true,
    attnMask: { data: Float32Array.from(randn([66, 66], 13, 3).data, (x) => (x > 2 ? -Infinity : x)), shape: [66, 66] },
  }),
];

const softmaxCase = (name: string, shape: number[], options: Parameters<Attnlab['maskedSoftmaxAsync']>[1] = {}): GpuCase => ({
  name: `maskedSoftmax: ${name}`,
  run: (lib) => lib.maskedSoftmaxAsync(randn(shape, 6, 4), options),
});

const softmaxCases: GpuCase[] = [
  softmaxCase('vector of 300', [300]),
  softmaxCase('causal with queryOffset, rows of 200', [2, 3, 200], { causal: true, queryOffset: 150 }),
  softmaxCase('causal, rows of 200', [2, 3, 200], { causal: true }),
  softmaxCase('validLens per row, with zeros', [2, 4, 130], { validLens: new Int32Array([1, 0, 128, 130, 0, 7, 64, 65]) }),
  softmaxCase('bool padding mask, one row fully masked', [2, 3, 256], {
    attnMask: { data: Uint8Array.from({ length: 512 }, (_, i) => (i < 256 ? 1 : 0)), shape: [2, 1, 256] },
  }),
  softmaxCase('additive mask with -Infinity', [3, 5, 129], { attnMask: { data: Float32Array.from(randn([5, 129], 4, 3).data, (x) => (x > 2 ? -Infinity : x)), shape: [5, 129] } }),
];

interface MhaCase {
  B: number;
  L: number;
  S: number;
  E: number;
  H: number;
  self?: boolean;
  noBias?: boolean;
  causal?: boolean;
  kpm?: boolean;
  kpmFloat?: boolean;
  am3?: boolean;
  amFloat?: boolean;
  blockRow?: boolean;
  needWeights?: boolean;
  perHead?: boolean;
  alibi?: boolean;
  rope?: boolean;
  t5?: boolean;
  queryOffset?: number;
}

function mha(name: string, c: MhaCase): GpuCase {
  const lead = c.B ? [c.B] : [];
  const Bn = c.B || 1;
  const query = randn([...lead, c.L, c.E], 21);
  const key = c.self ? query : randn([...lead, c.S, c.E], 22);
  const value = c.self ? query : randn([...lead, c.S, c.E], 23);
  const params = {
    numHeads: c.H,
    inProjWeight: randn([3 * c.E, c.E], 24, 0.3),
    outProjWeight: randn([c.E, c.E], 25, 0.3),
    ...(c.noBias ? {} : { inProjBias: randn([3 * c.E], 26), outProjBias: randn([c.E], 27) }),
  };
  const options: Parameters<Attnlab['multiHeadAttentionAsync']>[4] = { causal: c.causal, needWeights: c.needWeights, averageWeights: !c.perHead, alibi: c.alibi, rope: c.rope, queryOffset: c.queryOffset };
  if (c.t5) options.t5 = { weights: randn([c.H, 16], 32, 2), maxDistance: 24 };
  if (c.kpm) {
    const m = randBool([...lead, c.S], 28, 0.3);
    for (let b = 0; b < Bn; b++) m.data[b * c.S] = 0;
    options.keyPaddingMask = m;
  }
  if (c.kpmFloat) options.keyPaddingMask = randn([Bn, c.S], 29, 2);
  if (c.am3) options.attnMask = randBool([Bn * c.H, c.L, c.S], 30, 0.3);
  if (c.amFloat) options.attnMask = randn([c.L, c.S], 31, 2);
  if (c.blockRow) {
    // Query row 1 may attend to nothing.
    const m = new Uint8Array(c.L * c.S);
    m.fill(1, c.S, 2 * c.S);
    options.attnMask = { data: m, shape: [c.L, c.S] };
  }
  return { name: `multiHeadAttention: ${name}`, run: (lib) => lib.multiHeadAttentionAsync(query, key, value, params, options) };
}

const mhaCases: GpuCase[] = [
  mha('self, causal, not tile multiples', { B: 2, L: 70, S: 70, E: 64, H: 4, self: true, causal: true }),
  mha('self, tile multiples', { B: 2, L: 64, S: 64, E: 64, H: 4, self: true }),
  mha('cross, key padding, averaged weights', { B: 2, L: 64, S: 128, E: 32, H: 2, kpm: true, needWeights: true }),
  mha('bool attnMask [B*H, L, S], causal, per-head weights', { B: 2, L: 33, S: 33, E: 32, H: 2, am3: true, causal: true, needWeights: true, perHead: true }),
  mha('float attnMask + float key padding, no biases', { B: 1, L: 40, S: 50, E: 32, H: 2, amFloat: true, kpmFloat: true, noBias: true }),
  mha('unbatched, key padding', { B: 0, L: 20, S: 30, E: 32, H: 2, kpm: true }),
  mha('fully masked query row', { B: 2, L: 5, S: 7, E: 32, H: 2, blockRow: true }),
  mha('fully masked query row, weights', { B: 2, L: 5, S: 7, E: 32, H: 2, blockRow: true, needWeights: true }),
  mha('head size 256 (over the fused limit)', { B: 1, L: 20, S: 20, E: 256, H: 1, causal: true }),
  mha('ALiBi + key padding + float attnMask (three masks)', { B: 2, L: 40, S: 40, E: 32, H: 4, alibi: true, kpm: true, amFloat: true }),
  mha('ALiBi, causal, weights', { B: 2, L: 40, S: 40, E: 32, H: 4, alibi: true, causal: true, needWeights: true }),
  mha('RoPE, cross', { B: 2, L: 40, S: 50, E: 32, H: 4, rope: true }),
  mha('T5 bias + key padding, per-head weights', { B: 2, L: 40, S: 50, E: 32, H: 4, t5: true, kpm: true, needWeights: true, perHead: true }),
  mha('queryOffset: chunk of 8 after 42, RoPE, ALiBi, T5, causal', { B: 2, L: 8, S: 50, E: 32, H: 4, rope: true, alibi: true, t5: true, causal: true, queryOffset: 42 }),
  mha('queryOffset: decoder step, causal, weights', { B: 2, L: 1, S: 50, E: 32, H: 4, rope: true, causal: true, queryOffset: 49, needWeights: true }),
  mha('RoPE + ALiBi, causal, per-head weights', { B: 1, L: 33, S: 33, E: 32, H: 2, rope: true, alibi: true, causal: true, needWeights: true, perHead: true }),
];

export const GPU_CASES: GpuCase[] = [...attentionCases, ...softmaxCases, ...mhaCases];

const asResult = (r: AttentionResult | Tensor): AttentionResult => ('output' in r ? r : { output: r });

/** Runs a case on both instances and measures how far the GPU's answer is from WebAssembly's. */
export async function compareCase(gpu: Attnlab, wasm: Attnlab, c: GpuCase): Promise<Comparison> {
  const got = asResult(await c.run(gpu));
  const want = asResult(await c.run(wasm));
  const pairs: [Tensor, Tensor | undefined][] = [[want.output, got.output]];
  if (want.weights) pairs.push([want.weights, got.weights]);
  let shapesMatch = true, maxAbsError = 0, zeroMismatches = 0;
  for (const [w, g] of pairs) {
    if (!g || g.shape.join() !== w.shape.join() || g.data.length !== w.data.length) {
      shapesMatch = false;
      continue;
    }
    for (let i = 0; i < w.data.length; i++) {
      // A NaN (or a mismatched infinity) on either side is an error of Infinity, which no later
      // element can replace: `!(e <= worst)` alone let the next finite error overwrite a NaN.
      const e = g.data[i] === w.data[i] ? 0 : Math.abs(g.data[i] - w.data[i]);
      if (Number.isNaN(e) || e === Infinity) maxAbsError = Infinity;
      else if (e > maxAbsError) maxAbsError = e;
      if (w.data[i] === 0 && g.data[i] !== 0) zeroMismatches++;
    }
  }
  return { name: c.name, shapesMatch, maxAbsError, zeroMismatches };
}
