import { MAX_BYTES, withScratch } from './heap.js';
import { checkBool, checkInt, checkOptions, checkTensor, numel, shapeString } from './tensor.js';
import type { LshAttentionOptions, LshAttentionResult } from './types.js';
import type { WasmModule } from './wasm-module.js';

/** Reformer's LSH attention of qk [..., S, D] and v [..., S, Dv]; see LshAttentionOptions. */
export function lshAttention(m: WasmModule, qk: unknown, v: unknown, options?: LshAttentionOptions): LshAttentionResult {
  const fn = 'lshAttention';
  const o = checkOptions(fn, 'options', options, ['nBuckets', 'nHashes', 'chunkSize', 'causal', 'seed', 'returnBuckets', 'returnAttended']);
  const QK = checkTensor(fn, 'qk', qk, { rank: 2, orMore: true, layout: '[..., S, D]' });
  const V = checkTensor(fn, 'v', v, { rank: 2, orMore: true, layout: '[..., S, Dv]' });
  const lead = QK.shape.slice(0, -2);
  const [S, D] = QK.shape.slice(-2);
  const Dv = V.shape.at(-1)!;
  const want = [...lead, S];
  if (V.shape.length !== QK.shape.length || want.some((d, i) => d !== V.shape[i])) {
    throw new Error(`${fn}: v: expected shape ${shapeString([...want, Dv])} (leading dimensions and S as qk), got ${shapeString(V.shape)}`);
  }
  if (S < 1 || D < 1) throw new Error(`${fn}: qk: expected S >= 1 and D >= 1, got shape ${shapeString(QK.shape)}`);
  if (Dv < 1) throw new Error(`${fn}: v: expected a last dimension >= 1, got shape ${shapeString(V.shape)}`);
  const nBuckets = o.nBuckets === undefined ? 8 : checkInt(fn, 'options.nBuckets', o.nBuckets, 2);
  if (nBuckets % 2 !== 0) throw new Error(`${fn}: options.nBuckets: expected an even integer >= 2 (buckets come in +/- pairs of rotated axes), got ${nBuckets}`);
  const nHashes = o.nHashes === undefined ? 1 : checkInt(fn, 'options.nHashes', o.nHashes, 1);
  let chunkSize = 0;
  if (o.chunkSize !== undefined) {
    chunkSize = checkInt(fn, 'options.chunkSize', o.chunkSize, 1);
    if (S % chunkSize !== 0) throw new Error(`${fn}: options.chunkSize: expected a divisor of the sequence length ${S}, got ${chunkSize}`);
  } else if (S % nBuckets !== 0) {
    throw new Error(`${fn}: options.nBuckets: expected a divisor of the sequence length ${S} (chunks of S / nBuckets tokens), got ${nBuckets}; or give options.chunkSize`);
  }
  const causal = checkBool(fn, 'options.causal', o.causal, false);
  const seed = o.seed === undefined ? 0 : checkInt(fn, 'options.seed', o.seed, 0);
  const returnBuckets = checkBool(fn, 'options.returnBuckets', o.returnBuckets, false);
  const returnAttended = checkBool(fn, 'options.returnAttended', o.returnAttended, false);

  const batch = numel(lead);
  const chunk = chunkSize || S / nBuckets;
  const W = S / chunk > 1 ? 2 * chunk : chunk;
  const outLen = batch * S * Dv, bLen = batch * nHashes * S, aLen = bLen * W;
  // The core's working memory: the rotations [nHashes, D, nBuckets / 2], each round's outputs
  // and log-sum-exps, the unit keys and their norms.
  const work = 4 * nHashes * D * (nBuckets / 2) + batch * nHashes * S * (4 * Dv + 8) + 4 * batch * S * (D + 1);
  if (work > MAX_BYTES) {
    throw new Error(`${fn}: options.nBuckets, options.nHashes: expected working memory within the WebAssembly heap's 2 GiB limit, got ${work} bytes (rotations nHashes x D x nBuckets / 2 = ${nHashes} x ${D} x ${nBuckets / 2} floats, and each round's outputs)`);
  }
  return withScratch(m, fn, (s, check) => {
    const out = s.alloc(outLen * 4);
    const buckets = returnBuckets ? s.alloc(bLen * 4) : null;
    const attended = returnAttended ? s.alloc(aLen * 4) : null;
    check(m.lshAttention({ qk: s.put(QK.data), v: s.put(V.data), batch, S, D, Dv, nBuckets, nHashes, chunkSize, causal, seed, out, buckets, attended }));
    const result: LshAttentionResult = { output: { data: s.take(out, outLen), shape: [...lead, S, Dv] } };
    if (buckets) result.buckets = { data: s.takeInt32(buckets, bLen), shape: [...lead, nHashes, S] };
    if (attended) result.attended = { data: s.takeInt32(attended, aLen), shape: [...lead, nHashes, S, W] };
    return result;
  });
}
