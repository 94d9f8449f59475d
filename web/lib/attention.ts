import { alibiArgs, checkAlibi } from './alibi.js';
import { withHeapCopies, withScratch, type HeapCopies } from './heap.js';
import { maskLayout, type MaskLayout } from './mask-layout.js';
import { checkQueryOffset, maskArgs, optionalMask, optionalValidLens, type MaskInput } from './masks.js';
import { checkPattern, patternMask, type PatternArgs } from './patterns.js';
import { checkShaw, checkT5, shawHeapArgs, t5HeapArgs, type ShawArgs, type T5Args } from './relative-position.js';
import { checkEvenFeatures, checkRope, type RopeArgs } from './rope.js';
import { checkBool, checkOneOf, checkOptions, checkOut, checkTensor, describe, numel, shapeString, type FiniteScan } from './tensor.js';
import type { AttentionOptions, AttentionResult, AttentionScoresOptions, ScoreName, Tensor } from './types.js';
import type { WasmModule } from './wasm-module.js';

const SCORES: readonly ScoreName[] = ['scaled_dot', 'dot', 'general', 'additive'];

interface Dims {
  lead: number[];
  Sq: number;
  Sk: number;
  Dq: number;
  Dk: number;
  Dv: number;
}

export function sameLead(fn: string, name: string, t: Tensor, lead: number[]): void {
  const got = t.shape.slice(0, -2);
  if (got.length !== lead.length || got.some((d, i) => d !== lead[i])) {
    throw new Error(`${fn}: ${name}: expected leading dimensions ${shapeString(lead)} (as q), got shape ${shapeString(t.shape)}`);
  }
}

function checkScaleOption(fn: string, x: unknown): number {
  if (x === undefined) return 0;  // the score's default
  if (typeof x !== 'number' || !Number.isFinite(x) || x <= 0 || x > 1e4) {
    throw new Error(`${fn}: options.scale: expected a number in (0, 1e4], got ${String(x)}`);
  }
  return x;
}

/**
 * Checks q, k (and v when `needV`) and the score's parameters; returns dims and the parameter
 * tensors. A flag, not v === null: a caller's null v is bad input to name, not "no v".
 */
function scoreInputs(fn: string, q: unknown, k: unknown, v: unknown, needV: boolean, o: Record<string, unknown>, scan?: FiniteScan) {
  const Q = checkTensor(fn, 'q', q, { rank: 2, orMore: true, layout: '[..., Sq, Dq]' }, scan);
  const K = checkTensor(fn, 'k', k, { rank: 2, orMore: true, layout: '[..., Sk, Dk]' }, scan);
  const lead = Q.shape.slice(0, -2);
  sameLead(fn, 'k', K, lead);
  const d: Dims = { lead, Sq: Q.shape.at(-2)!, Sk: K.shape.at(-2)!, Dq: Q.shape.at(-1)!, Dk: K.shape.at(-1)!, Dv: 0 };
  let V: Tensor | null = null;
  if (needV) {
    V = checkTensor(fn, 'v', v, { rank: 2, orMore: true, layout: '[..., Sk, Dv]' }, scan);
    sameLead(fn, 'v', V, lead);
    if (V.shape.at(-2) !== d.Sk) throw new Error(`${fn}: v: expected ${d.Sk} rows (Sk, as k), got shape ${shapeString(V.shape)}`);
    d.Dv = V.shape.at(-1)!;
    if (d.Dv < 1) throw new Error(`${fn}: v: expected a last dimension >= 1, got shape ${shapeString(V.shape)}`);
  }
  if (d.Dq < 1) throw new Error(`${fn}: q: expected a last dimension >= 1, got shape ${shapeString(Q.shape)}`);
  if (d.Dk < 1) throw new Error(`${fn}: k: expected a last dimension >= 1, got shape ${shapeString(K.shape)}`);

  const score = checkOneOf(fn, 'options.score', o.score, SCORES, 'scaled_dot');
  if ((score === 'dot' || score === 'scaled_dot') && d.Dk !== d.Dq) {
    throw new Error(`${fn}: k: expected the last dimension to equal q's (${d.Dq}) for score '${score}', got shape ${shapeString(K.shape)}`);
  }
  const p = checkOptions(fn, 'options.params', o.params, ['W', 'Wq', 'Wk', 'wv']);
  const params: Record<string, Tensor> = {};
  let hidden = 0;
  if (score === 'general') {
    if (p.W === undefined) throw new Error(`${fn}: options.params.W: expected a tensor [Dq, Dk] = [${d.Dq}, ${d.Dk}] for score 'general', got undefined`);
    params.W = checkTensor(fn, 'options.params.W', p.W, { rank: 2, layout: '[Dq, Dk]' }, scan);
    if (params.W.shape[0] !== d.Dq || params.W.shape[1] !== d.Dk) {
      throw new Error(`${fn}: options.params.W: expected shape [${d.Dq}, ${d.Dk}] ([Dq, Dk]), got ${shapeString(params.W.shape)}`);
    }
  } else if (score === 'additive') {
    for (const name of ['Wq', 'Wk', 'wv'] as const) {
      if (p[name] === undefined) throw new Error(`${fn}: options.params.${name}: expected a tensor for score 'additive', got undefined`);
    }
    params.Wq = checkTensor(fn, 'options.params.Wq', p.Wq, { rank: 2, layout: '[hidden, Dq]' }, scan);
    hidden = params.Wq.shape[0];
    if (hidden < 1 || params.Wq.shape[1] !== d.Dq) {
      throw new Error(`${fn}: options.params.Wq: expected shape [hidden >= 1, ${d.Dq}] ([hidden, Dq]), got ${shapeString(params.Wq.shape)}`);
    }
    params.Wk = checkTensor(fn, 'options.params.Wk', p.Wk, { rank: 2, layout: '[hidden, Dk]' }, scan);
    if (params.Wk.shape[0] !== hidden || params.Wk.shape[1] !== d.Dk) {
      throw new Error(`${fn}: options.params.Wk: expected shape [${hidden}, ${d.Dk}] ([hidden, Dk]), got ${shapeString(params.Wk.shape)}`);
    }
    params.wv = checkTensor(fn, 'options.params.wv', p.wv, { rank: 1, layout: '[hidden]' }, scan);
    if (params.wv.shape[0] !== hidden) {
      throw new Error(`${fn}: options.params.wv: expected shape [${hidden}] ([hidden]), got ${shapeString(params.wv.shape)}`);
    }
  } else if (Object.keys(p).length > 0) {
    throw new Error(`${fn}: options.params: expected none for score '${score}', got ${Object.keys(p).join(', ')}`);
  }
  // The core scales dot-product scores only (scaled_dot, dot, general): an additive scale would be
  // silently ignored.
  if (score === 'additive' && o.scale !== undefined) {
    throw new Error(`${fn}: options.scale: expected none for score 'additive' (it scales dot-product scores only), got ${describe(o.scale)}`);
  }
  const scale = checkScaleOption(fn, o.scale);
  return { Q, K, V, d, score, params, hidden, scale };
}

/**
 * attention()'s checked arguments. Written out, not inferred: TypeScript 5.7+ would print an
 * inferred Int32Array as Int32Array<ArrayBufferLike> in the .d.ts, which TypeScript < 5.7 rejects.
 */
export interface AttentionArgs {
  fn: string;
  Q: Tensor;
  K: Tensor;
  V: Tensor;
  d: Dims;
  score: ScoreName;
  params: Record<string, Tensor>;
  hidden: number;
  scale: number;
  causal: boolean;
  queryOffset: number;
  returnWeights: boolean;
  validLens: Int32Array | undefined;
  masks: MaskInput[];
  layout: MaskLayout;
  pattern: PatternArgs | null;
  heads: number;
  alibi: Float32Array | boolean;
  rope: RopeArgs | null;
  t5: T5Args | null;
  shaw: ShawArgs | null;
  t5Table: Float32Array | null;
  out: Float32Array | null;
}

/** attention()'s arguments, checked once for every backend (`scan`: see checkTensor). */
export function attentionArgs(q: unknown, k: unknown, v: unknown, options?: AttentionOptions, scan?: FiniteScan): AttentionArgs {
  const fn = 'attention';
  const o = checkOptions(fn, 'options', options, ['score', 'params', 'scale', 'causal', 'queryOffset', 'validLens', 'attnMask', 'returnWeights', 'pattern', 'alibi', 'rope', 't5', 'shaw', 'out']);
  const { Q, K, V, d, score, params, hidden, scale } = scoreInputs(fn, q, k, v, true, o, scan);
  const causal = checkBool(fn, 'options.causal', o.causal, false);
  const queryOffset = checkQueryOffset(fn, o.queryOffset);
  const returnWeights = checkBool(fn, 'options.returnWeights', o.returnWeights, false);
  const validLens = optionalValidLens(fn, 'options.validLens', o.validLens);
  const mask = optionalMask(fn, 'options.attnMask', o.attnMask);
  const masks: MaskInput[] = mask ? [{ name: 'options.attnMask', checked: mask, trueBlocks: false }] : [];
  const pattern = o.pattern === undefined ? null : checkPattern(fn, 'options.pattern', o.pattern, d.Sq, d.Sk);
  if (pattern && score !== 'scaled_dot' && score !== 'dot') {
    throw new Error(`${fn}: options.score: expected 'scaled_dot' or 'dot' with options.pattern, got '${score}'`);
  }
  // Patterns (windows, global tokens, BigBird's blocks) are laid out with query i at key i.
  if (pattern && queryOffset !== 0) {
    throw new Error(`${fn}: options.queryOffset: expected 0 with options.pattern (patterns place query i at key position i), got ${queryOffset}`);
  }
  const heads = d.lead.at(-1) ?? 1;  // ALiBi's heads: q's dimension -3
  const alibi = checkAlibi(fn, 'options.alibi', o.alibi, heads, "q's dimension -3");
  const rope = checkRope(fn, 'options.rope', o.rope);
  if (rope) {
    checkEvenFeatures(fn, 'q', d.Dq, Q.shape, 'last dimension');
    checkEvenFeatures(fn, 'k', d.Dk, K.shape, 'last dimension');
  }
  const t5 = checkT5(fn, 'options.t5', o.t5, heads, "q's dimension -3", scan);
  const shaw = checkShaw(fn, 'options.shaw', o.shaw, d.Dq, d.Dv, "q's and v's last dimensions", scan);
  if (shaw && (pattern || (score !== 'scaled_dot' && score !== 'dot'))) {
    throw new Error(`${fn}: options.shaw: expected score 'scaled_dot' or 'dot' and no options.pattern, got score '${score}'${pattern ? ' and a pattern' : ''}`);
  }
  const layout = maskLayout(fn, [...d.lead, d.Sq, d.Sk], causal, queryOffset, masks, validLens);
  const outShape = [...d.lead, d.Sq, d.Dv];
  const out = o.out === undefined ? null : checkOut(fn, 'options.out', o.out, numel(outShape), outShape);
  return { fn, Q, K, V: V!, d, score, params, hidden, scale, causal, queryOffset, returnWeights, validLens, masks, layout, pattern, heads, alibi, rope, t5, shaw, t5Table: null, out };
}

/** Most Sq x Sk entries patternAsMask turns into a mask (the GPU holds it as 4-byte words). */
export const PATTERN_MASK_MAX = 2 ** 25;

/**
 * The same call with its sparse pattern as one more boolean mask [Sq, Sk] (1 = visible), for a
 * backend without a sparse kernel (WebGPU): the same result, at the cost of dense attention.
 * Patterns over PATTERN_MASK_MAX entries stay patterns.
 */
export function patternAsMask(m: WasmModule, a: AttentionArgs): AttentionArgs {
  if (!a.pattern || a.d.Sq * a.d.Sk > PATTERN_MASK_MAX) return a;
  const mask = patternMask(m, a.fn, a.pattern, a.d.Sq, a.d.Sk);
  const masks: MaskInput[] = [...a.masks, { name: 'options.pattern', checked: { kind: 'bool', mask }, trueBlocks: false }];
  return { ...a, pattern: null, masks, layout: maskLayout(a.fn, [...a.d.lead, a.d.Sq, a.d.Sk], a.causal, a.queryOffset, masks, a.validLens) };
}

export function attention(m: WasmModule, q: unknown, k: unknown, v: unknown, options?: AttentionOptions): AttentionResult {
  return withHeapCopies(m, 'attention', (copies) => runAttention(m, attentionArgs(q, k, v, options, copies.scan), copies));
}

/** The WebAssembly run of checked arguments (`copies`: inputs the checks already put in the heap). */
export function runAttention(m: WasmModule, a: AttentionArgs, copies?: HeapCopies): AttentionResult {
  const { fn, Q, K, V, d, score, params, hidden, scale, causal, queryOffset, returnWeights, validLens, masks, pattern, heads, alibi, rope, t5, shaw } = a;
  const batch = numel(d.lead);
  const outLen = batch * d.Sq * d.Dv;
  const wLen = batch * d.Sq * d.Sk;
  if (outLen === 0) {
    // No query rows (Dv >= 1): nothing to run, and leading dimensions of 2^40 would loop the core
    // over that many empty slices.
    const result: AttentionResult = { output: { data: a.out ?? new Float32Array(0), shape: [...d.lead, d.Sq, d.Dv] } };
    if (returnWeights) result.weights = { data: new Float32Array(0), shape: [...d.lead, d.Sq, d.Sk] };
    return result;
  }
  return withScratch(m, fn, (s, check) => {
    const out = s.alloc(outLen * 4);
    const weights = returnWeights ? s.alloc(wLen * 4) : 0;
    const qp = s.put(Q.data), kp = s.put(K.data);
    if (rope) {
      // The copies in the heap turn in place; the caller's q and k stay as they were. Query row 0
      // sits at key position queryOffset.
      check(m.rope({ x: qp, out: qp, outer: batch, S: d.Sq, inner: 1, D: d.Dq, ...rope, offset: rope.offset + queryOffset, name: 'q, options.rope' }));
      check(m.rope({ x: kp, out: kp, outer: batch, S: d.Sk, inner: 1, D: d.Dk, ...rope, name: 'k, options.rope' }));
    }
    const args = {
      q: qp, k: kp, v: s.put(V.data), ...d, score,
      W: params.W ? s.put(params.W.data) : null,
      Wq: params.Wq ? s.put(params.Wq.data) : null,
      Wk: params.Wk ? s.put(params.Wk.data) : null,
      wv: params.wv ? s.put(params.wv.data) : null,
      hidden, scale,
      masks: { ...maskArgs(s, causal, queryOffset, masks, validLens), alibi: alibiArgs(s, alibi, heads, batch, d.Sq, d.Sk), t5: t5HeapArgs(s, t5, d.Sq, d.Sk) },
      out, weights: weights || null,
    };
    check(pattern ? m.sparseAttention({ ...args, pattern }) : shaw ? m.shawAttention({ ...args, shaw: shawHeapArgs(s, shaw)! }) : m.attention(args));
    const result: AttentionResult = { output: { data: s.take(out, outLen, a.out), shape: [...d.lead, d.Sq, d.Dv] } };
    if (returnWeights) result.weights = { data: s.take(weights, wLen), shape: [...d.lead, d.Sq, d.Sk] };
    return result;
  }, copies);
}

export function attentionScores(m: WasmModule, q: unknown, k: unknown, options?: AttentionScoresOptions): Tensor {
  const fn = 'attentionScores';
  const o = checkOptions(fn, 'options', options, ['score', 'params', 'scale', 'out']);
  const { Q, K, d, score, params, hidden, scale } = scoreInputs(fn, q, k, undefined, false, o);
  const len = numel(d.lead) * d.Sq * d.Sk;
  const shape = [...d.lead, d.Sq, d.Sk];
  const into = o.out === undefined ? null : checkOut(fn, 'options.out', o.out, len, shape);
  if (len === 0) return { data: into ?? new Float32Array(0), shape };  // as runAttention
  return withScratch(m, fn, (s, check) => {
    const out = s.alloc(len * 4);
    check(m.attentionScores({
      q: s.put(Q.data), k: s.put(K.data), ...d, Dv: 1, score,
      W: params.W ? s.put(params.W.data) : null,
      Wq: params.Wq ? s.put(params.Wq.data) : null,
      Wk: params.Wk ? s.put(params.Wk.data) : null,
      wv: params.wv ? s.put(params.wv.data) : null,
      hidden, scale, out,
    }));
    return { data: s.take(out, len, into), shape };
  });
}
