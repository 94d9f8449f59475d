// multiHeadAttention() on the GPU: in-projections by tiled matmul, then per-head attention on
// strided views of the projections (fused kernel, or scores / softmax / mix when weights are
// wanted), then the out-projection; averaged weights by a head-mean kernel.
import type { MultiHeadArgs } from '../multihead.js';
import type { AttentionResult } from '../types.js';
import { tooManyMasks, withPositionBiases } from './alibi.js';
import { GpuCall, type Readback } from './call.js';
import type { GpuDevice } from './device.js';
import {
  flash, flashKernel, headMean, headMeanKernel, matmul, matmulKernel, rope, ropeKernel, ropeOverflow, softmax, softmaxKernel, uploadMasks,
} from './kernels.js';
import { FLASH_MAX_DIM } from './shaders/flash.js';
import type { View } from './shaders/uniform.js';

const MAX_SLICES = 65535;

const fused = (a: MultiHeadArgs) => !a.needWeights && a.E / a.H <= FLASH_MAX_DIM;

/** Why these arguments cannot run on the GPU, or null. */
export function multiHeadUnsupported(a: MultiHeadArgs): string | null {
  if (a.shaw) return "options.shaw (Shaw's relative embeddings, a WebAssembly kernel) is not supported";
  if (!fused(a) && a.B * a.H > MAX_SLICES) return `more than ${MAX_SLICES} batch x head slices with needWeights or head sizes over ${FLASH_MAX_DIM} are not supported`;
  return tooManyMasks(a.layout.masks.length, a.alibi, a.t5);
}

export async function gpuMultiHead(dev: GpuDevice, a: MultiHeadArgs): Promise<AttentionResult> {
  const { B, L, S, E, H } = a;
  const hd = E / H;
  const lead = a.batched ? [B] : [];
  const wLen = a.averageWeights ? B * L * S : B * H * L * S;
  const wShape = a.averageWeights ? [...lead, L, S] : [...lead, H, L, S];
  if (B * L === 0) {
    const result: AttentionResult = { output: { data: a.out ?? new Float32Array(0), shape: [...lead, L, E] } };
    if (a.needWeights) result.weights = { data: new Float32Array(0), shape: wShape };
    return result;
  }
  const isFused = fused(a);
  const [linearP, ropeP, flashP, scoresP, softmaxP, mixP, meanP] = await Promise.all([
    dev.pipeline(matmulKernel(true)),
    a.rope ? dev.pipeline(ropeKernel) : null,
    isFused ? dev.pipeline(flashKernel(hd, hd, dev.workgroupBytes)) : null,
    isFused ? null : dev.pipeline(matmulKernel(true)),
    isFused ? null : dev.pipeline(softmaxKernel),
    isFused ? null : dev.pipeline(matmulKernel(false)),
    a.needWeights && a.averageWeights ? dev.pipeline(headMeanKernel) : null,
  ]);
  const scale = Math.fround(1 / Math.fround(Math.sqrt(hd)));
  // Row r of a [rows, E] activation; head h of batch b as a slice of Q, K, V or the heads buffer.
  const rowsOf = (): View => ({ offset: 0, batchStride: 0, headStride: 0, rowStride: E });
  const headsOf = (rows: number): View => ({ offset: 0, batchStride: rows * E, headStride: hd, rowStride: E });

  const ropeChecks: Readback[] = [];
  const [output, weights, ...firstBad] = await GpuCall.run(dev, a.fn, (call) => {
    const query = call.upload(a.Q.data);
    // Self-attention passes one tensor three times: upload it once.
    const key = a.K.data === a.Q.data ? query : call.upload(a.K.data);
    const value = a.V.data === a.Q.data ? query : a.V.data === a.K.data ? key : call.upload(a.V.data);
    const inW = call.upload(a.inW.data);
    const inB = a.inB ? call.upload(a.inB.data) : null;
    // y [rows, E] = x W^T + bias, W being rows [part * E, (part + 1) * E) of a Linear weight.
    const linear = (x: GPUBuffer, rows: number, w: GPUBuffer, bias: GPUBuffer | null, part: number, y: GPUBuffer) =>
      matmul(call, linearP, {
        M: rows, N: E, K: E, slices: 1, heads: 1, alpha: 1, biasOffset: bias ? part * E : null,
        a: rowsOf(), b: { offset: part * E * E, batchStride: 0, headStride: 0, rowStride: 1 }, bCol: E, c: rowsOf(),
      }, x, w, bias, y);
    let q = call.scratch(B * L * E), k = call.scratch(B * S * E);
    const v = call.scratch(B * S * E);
    linear(query, B * L, inW, inB, 0, q);
    linear(key, B * S, inW, inB, 1, k);
    linear(value, B * S, inW, inB, 2, v);
    if (ropeP && a.rope) {
      // Each head's slice of the projections turns, by position within the sequence (the queries'
      // counted from key position queryOffset).
      const rq = rope(call, ropeP, { ...a.rope, offset: a.rope.offset + a.queryOffset }, { outer: B, S: L, inner: H, D: hd }, q);
      const rk = rope(call, ropeP, a.rope, { outer: B, S, inner: H, D: hd }, k);
      q = rq.out;
      k = rk.out;
      ropeChecks.push([rq.firstBad, 1], [rk.firstBad, 1]);
    }

    const masks = uploadMasks(call, withPositionBiases(a.layout, a.alibi, a.t5Table, H, B * H, L, S));
    const heads = call.scratch(B * L * E);
    let probs: GPUBuffer | null = null;
    if (flashP) {
      flash(call, flashP, {
        Sq: L, Sk: S, slices: B * H, heads: H, scale, q: headsOf(L), k: headsOf(S), v: headsOf(S), o: headsOf(L),
      }, masks, q, k, v, heads);
    } else {
      const perHead: View = { offset: 0, batchStride: H * L * S, headStride: L * S, rowStride: S };
      const scores = call.scratch(B * H * L * S);
      probs = call.scratch(B * H * L * S);
      matmul(call, scoresP!, {
        M: L, N: S, K: hd, slices: B * H, heads: H, alpha: scale, biasOffset: null,
        a: headsOf(L), b: { ...headsOf(S), rowStride: 1 }, bCol: E, c: perHead,
      }, q, k, null, scores);
      softmax(call, softmaxP!, { Sq: L, Sk: S, rows: B * H * L }, masks, scores, probs);
      matmul(call, mixP!, {
        M: L, N: hd, K: S, slices: B * H, heads: H, alpha: 1, biasOffset: null,
        a: perHead, b: headsOf(S), bCol: 1, c: headsOf(L),
      }, probs, v, null, heads);
    }
    const out = call.scratch(B * L * E);
    linear(heads, B * L, call.upload(a.outW.data), a.outB ? call.upload(a.outB.data) : null, 0, out);
    let weightsOut: Readback = [out, 0];
    if (probs && meanP) {
      const mean = call.scratch(wLen);
      headMean(call, meanP, { heads: H, inner: L * S, total: wLen }, probs, mean);
      weightsOut = [mean, wLen];
    } else if (probs) {
      weightsOut = [probs, wLen];
    }
    return [[out, B * L * E], weightsOut, ...ropeChecks];
  });
  const overflow = ropeOverflow(a.fn, firstBad, ['query, params.inProjWeight, options.rope', 'key, params.inProjWeight, options.rope']);
  if (overflow) throw overflow;
  // options.out: the readback's copy, as the WebAssembly path gives it.
  const result: AttentionResult = { output: { data: a.out ? (a.out.set(output), a.out) : output, shape: [...lead, L, E] } };
  if (a.needWeights) result.weights = { data: weights, shape: wShape };
  return result;
}
