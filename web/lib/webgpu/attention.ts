// attention() on the GPU. Without weights: the fused kernel (one pass, no Sq x Sk buffer). With
// weights, score 'additive', or heads too wide for the fused kernel's registers: scores (tiled
// matmul, or the additive kernel), masked softmax into the weights, weights times values (matmul).
// Sparse patterns arrive as one more boolean mask (patternAsMask).
import { PATTERN_MASK_MAX, type AttentionArgs } from '../attention.js';
import { numel } from '../tensor.js';
import { tooManyMasks, withPositionBiases } from './alibi.js';
import type { AttentionResult } from '../types.js';
import { GpuCall, type Readback } from './call.js';
import type { GpuDevice } from './device.js';
import {
  additiveKernel, additiveScores, dense, flash, flashKernel, matmul, matmulKernel, rope, ropeKernel, ropeOverflow, softmax, softmaxKernel, uploadMasks,
} from './kernels.js';
import { FLASH_MAX_DIM } from './shaders/flash.js';

/** Slices per dispatch of the matmul path (a grid's z extent). */
const MAX_SLICES = 65535;

/** Score dimension and scale, as the core's dot_scale() picks them. */
function dotScale(a: AttentionArgs): { D: number; scale: number } {
  const D = a.score === 'general' ? a.d.Dk : a.d.Dq;
  if (a.scale !== 0) return { D, scale: a.scale };
  return { D, scale: a.score === 'scaled_dot' ? Math.fround(1 / Math.fround(Math.sqrt(D))) : 1 };
}

function fused(a: AttentionArgs): boolean {
  return !a.returnWeights && a.score !== 'additive' && dotScale(a).D <= FLASH_MAX_DIM && a.d.Dv <= FLASH_MAX_DIM;
}

/** Why these arguments cannot run on the GPU, or null. */
export function attentionUnsupported(a: AttentionArgs): string | null {
  if (a.shaw) return "options.shaw (Shaw's relative embeddings, a WebAssembly kernel) is not supported";
  if (a.pattern) return `options.pattern over ${PATTERN_MASK_MAX} scores (Sq x Sk = ${a.d.Sq} x ${a.d.Sk}), which runs as a dense mask there, is not supported`;
  if (!fused(a) && numel(a.d.lead) > MAX_SLICES) return `more than ${MAX_SLICES} slices with returnWeights, score 'additive' or head sizes over ${FLASH_MAX_DIM} are not supported`;
  return tooManyMasks(a.layout.masks.length, a.alibi, a.t5);
}

export async function gpuAttention(dev: GpuDevice, a: AttentionArgs): Promise<AttentionResult> {
  const { d } = a;
  const batch = numel(d.lead);
  const { D, scale } = dotScale(a);
  const outLen = batch * d.Sq * d.Dv;
  const wLen = batch * d.Sq * d.Sk;
  const shapes = { output: [...d.lead, d.Sq, d.Dv], weights: [...d.lead, d.Sq, d.Sk] };
  if (batch * d.Sq === 0) {
    const result: AttentionResult = { output: { data: a.out ?? new Float32Array(0), shape: shapes.output } };
    if (a.returnWeights) result.weights = { data: new Float32Array(0), shape: shapes.weights };
    return result;
  }
  const isFused = fused(a);
  const [ropeP, project, flashP, scoresP, additiveP, softmaxP, mixP] = await Promise.all([
    a.rope ? dev.pipeline(ropeKernel) : null,
    a.score === 'general' ? dev.pipeline(matmulKernel(false)) : null,
    isFused ? dev.pipeline(flashKernel(D, d.Dv, dev.workgroupBytes)) : null,
    // Scores: q k^T by matmul, or for 'additive' the projections (matmul) and the tanh sums.
    isFused ? null : dev.pipeline(matmulKernel(true)),
    a.score === 'additive' ? dev.pipeline(additiveKernel) : null,
    isFused ? null : dev.pipeline(softmaxKernel),
    isFused ? null : dev.pipeline(matmulKernel(false)),
  ]);
  const ropeChecks: Readback[] = [];
  const [output, weights, ...firstBad] = await GpuCall.run(dev, a.fn, (call) => {
    let q = call.upload(a.Q.data), k = call.upload(a.K.data);
    const v = call.upload(a.V.data);
    if (ropeP && a.rope) {
      // As the core: q and k turn first (query row 0 at key position queryOffset); 'general'
      // projects the turned q.
      const rq = rope(call, ropeP, { ...a.rope, offset: a.rope.offset + a.queryOffset }, { outer: batch, S: d.Sq, inner: 1, D: d.Dq }, q);
      const rk = rope(call, ropeP, a.rope, { outer: batch, S: d.Sk, inner: 1, D: d.Dk }, k);
      q = rq.out;
      k = rk.out;
      ropeChecks.push([rq.firstBad, 1], [rk.firstBad, 1]);
    }
    if (project) {
      // 'general': q W first, then a dot product with k.
      const qw = call.scratch(batch * d.Sq * d.Dk);
      const rows = batch * d.Sq;
      matmul(call, project, {
        M: rows, N: d.Dk, K: d.Dq, slices: 1, heads: 1, alpha: 1, biasOffset: null,
        a: dense(rows, d.Dq), b: dense(d.Dq, d.Dk), bCol: 1, c: dense(rows, d.Dk),
      }, q, call.upload(a.params.W.data), null, qw);
      q = qw;
    }
    const masks = uploadMasks(call, withPositionBiases(a.layout, a.alibi, a.t5Table, a.heads, batch, d.Sq, d.Sk));
    const out = call.scratch(outLen);
    if (flashP) {
      flash(call, flashP, {
        Sq: d.Sq, Sk: d.Sk, slices: batch, heads: 1, scale,
        q: dense(d.Sq, D), k: dense(d.Sk, D), v: dense(d.Sk, d.Dv), o: dense(d.Sq, d.Dv),
      }, masks, q, k, v, out);
      return [[out, outLen], [out, 0], ...ropeChecks];
    }
    const scores = call.scratch(wLen), probs = call.scratch(wLen);
    if (additiveP) {
      // qp = q Wq^T and kp = k Wk^T (PyTorch Linear layout), then the tanh sums.
      const hidden = a.hidden;
      const project = (x: GPUBuffer, rows: number, Din: number, W: Float32Array) => {
        const y = call.scratch(rows * hidden);
        matmul(call, scoresP!, {
          M: rows, N: hidden, K: Din, slices: 1, heads: 1, alpha: 1, biasOffset: null,
          a: dense(rows, Din), b: { ...dense(hidden, Din), rowStride: 1 }, bCol: Din, c: dense(rows, hidden),
        }, x, call.upload(W), null, y);
        return y;
      };
      const qp = project(q, batch * d.Sq, d.Dq, a.params.Wq.data), kp = project(k, batch * d.Sk, d.Dk, a.params.Wk.data);
      additiveScores(call, additiveP, { Sq: d.Sq, Sk: d.Sk, hidden, slices: batch }, qp, kp, call.upload(a.params.wv.data), scores);
    } else {
      matmul(call, scoresP!, {
        M: d.Sq, N: d.Sk, K: D, slices: batch, heads: 1, alpha: scale, biasOffset: null,
        a: dense(d.Sq, D), b: { ...dense(d.Sk, D), rowStride: 1 }, bCol: D, c: dense(d.Sq, d.Sk),
      }, q, k, null, scores);
    }
    softmax(call, softmaxP!, { Sq: d.Sq, Sk: d.Sk, rows: batch * d.Sq }, masks, scores, probs);
    matmul(call, mixP!, {
      M: d.Sq, N: d.Dv, K: d.Sk, slices: batch, heads: 1, alpha: 1, biasOffset: null,
      a: dense(d.Sq, d.Sk), b: dense(d.Sk, d.Dv), bCol: 1, c: dense(d.Sq, d.Dv),
    }, probs, v, null, out);
    return [[out, outLen], [probs, a.returnWeights ? wLen : 0], ...ropeChecks];
  });
  const overflow = ropeOverflow(a.fn, firstBad, ['q, options.rope', 'k, options.rope']);
  if (overflow) throw overflow;
  // options.out: the readback's copy, as the WebAssembly path gives it (a caller's reused array).
  const result: AttentionResult = { output: { data: a.out ? (a.out.set(output), a.out) : output, shape: shapes.output } };
  if (a.returnWeights) result.weights = { data: weights, shape: shapes.weights };
  return result;
}
