import { withScratch } from './heap.js';
import { maskArgs, optionalMask, optionalValidLens, type MaskInput } from './masks.js';
import { checkBool, checkOneOf, checkOptions, checkTensor, numel, shapeString, type CheckedTensor } from './tensor.js';
import type { AttentionOptions, AttentionResult, ScoreName, Tensor } from './types.js';
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

function sameLead(fn: string, name: string, t: Tensor, lead: number[]): void {
  const got = t.shape.slice(0, -2);
  if (got.length !== lead.length || got.some((d, i) => d !== lead[i])) {
    throw new Error(`${fn}: ${name}: expected leading dimensions ${shapeString(lead)} (as q), got shape ${shapeString(t.shape)}`);
  }
}

function checkScaleOption(fn: string, x: unknown): number {
  if (x === undefined) return 0;  // the score's default
  if (typeof x !== 'number' || !Number.isFinite(x) || x <= 0) {
    throw new Error(`${fn}: options.scale: expected a finite number > 0, got ${String(x)}`);
  }
  return x;
}

/** Checks q, k (and v) and the score's parameters; returns dims and the parameter tensors. */
function scoreInputs(fn: string, q: unknown, k: unknown, v: unknown | null, o: Record<string, unknown>) {
  const Q = checkTensor(fn, 'q', q, { rank: 2, orMore: true, layout: '[..., Sq, Dq]' });
  const K = checkTensor(fn, 'k', k, { rank: 2, orMore: true, layout: '[..., Sk, Dk]' });
  const lead = Q.shape.slice(0, -2);
  sameLead(fn, 'k', K, lead);
  const d: Dims = { lead, Sq: Q.shape.at(-2)!, Sk: K.shape.at(-2)!, Dq: Q.shape.at(-1)!, Dk: K.shape.at(-1)!, Dv: 0 };
  let V: CheckedTensor | null = null;
  if (v !== null) {
    V = checkTensor(fn, 'v', v, { rank: 2, orMore: true, layout: '[..., Sk, Dv]' });
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
  const params: Record<string, CheckedTensor> = {};
  let hidden = 0;
  if (score === 'general') {
    if (p.W === undefined) throw new Error(`${fn}: options.params.W: expected a tensor [Dq, Dk] = [${d.Dq}, ${d.Dk}] for score 'general', got undefined`);
    params.W = checkTensor(fn, 'options.params.W', p.W, { rank: 2, layout: '[Dq, Dk]' });
    if (params.W.shape[0] !== d.Dq || params.W.shape[1] !== d.Dk) {
      throw new Error(`${fn}: options.params.W: expected shape [${d.Dq}, ${d.Dk}] ([Dq, Dk]), got ${shapeString(params.W.shape)}`);
    }
  } else if (score === 'additive') {
    for (const name of ['Wq', 'Wk', 'wv'] as const) {
      if (p[name] === undefined) throw new Error(`${fn}: options.params.${name}: expected a tensor for score 'additive', got undefined`);
    }
    params.Wq = checkTensor(fn, 'options.params.Wq', p.Wq, { rank: 2, layout: '[hidden, Dq]' });
    hidden = params.Wq.shape[0];
    if (hidden < 1 || params.Wq.shape[1] !== d.Dq) {
      throw new Error(`${fn}: options.params.Wq: expected shape [hidden >= 1, ${d.Dq}] ([hidden, Dq]), got ${shapeString(params.Wq.shape)}`);
    }
    params.Wk = checkTensor(fn, 'options.params.Wk', p.Wk, { rank: 2, layout: '[hidden, Dk]' });
    if (params.Wk.shape[0] !== hidden || params.Wk.shape[1] !== d.Dk) {
      throw new Error(`${fn}: options.params.Wk: expected shape [${hidden}, ${d.Dk}] ([hidden, Dk]), got ${shapeString(params.Wk.shape)}`);
    }
    params.wv = checkTensor(fn, 'options.params.wv', p.wv, { rank: 1, layout: '[hidden]' });
    if (params.wv.shape[0] !== hidden) {
      throw new Error(`${fn}: options.params.wv: expected shape [${hidden}] ([hidden]), got ${shapeString(params.wv.shape)}`);
    }
  } else if (Object.keys(p).length > 0) {
    throw new Error(`${fn}: options.params: expected none for score '${score}', got ${Object.keys(p).join(', ')}`);
  }
  const scale = checkScaleOption(fn, o.scale);
  return { Q, K, V, d, score, params, hidden, scale };
}

export function attention(m: WasmModule, q: unknown, k: unknown, v: unknown, options?: AttentionOptions): AttentionResult {
  const fn = 'attention';
  const o = checkOptions(fn, 'options', options, ['score', 'params', 'scale', 'causal', 'validLens', 'attnMask', 'returnWeights']);
  const { Q, K, V, d, score, params, hidden, scale } = scoreInputs(fn, q, k, v, o);
  const causal = checkBool(fn, 'options.causal', o.causal, false);
  const returnWeights = checkBool(fn, 'options.returnWeights', o.returnWeights, false);
  const validLens = optionalValidLens(fn, 'options.validLens', o.validLens);
  const mask = optionalMask(fn, 'options.attnMask', o.attnMask);
  const masks: MaskInput[] = mask ? [{ name: 'options.attnMask', checked: mask, trueBlocks: false }] : [];

  const batch = numel(d.lead);
  const outLen = batch * d.Sq * d.Dv;
  const wLen = batch * d.Sq * d.Sk;
  return withScratch(m, fn, (s, check) => {
    const out = s.alloc(outLen * 4);
    const weights = returnWeights ? s.alloc(wLen * 4) : 0;
    check(m.attention({
      q: s.put(Q), k: s.put(K), v: s.put(V!), ...d, score,
      W: params.W ? s.put(params.W) : null,
      Wq: params.Wq ? s.put(params.Wq) : null,
      Wk: params.Wk ? s.put(params.Wk) : null,
      wv: params.wv ? s.put(params.wv) : null,
      hidden, scale,
      masks: maskArgs(s, causal, masks, validLens),
      out, weights: weights || null,
    }));
    const result: AttentionResult = { output: { data: s.take(out, outLen), shape: [...d.lead, d.Sq, d.Dv] } };
    if (returnWeights) result.weights = { data: s.take(weights, wLen), shape: [...d.lead, d.Sq, d.Sk] };
    return result;
  });
}

export function attentionScores(m: WasmModule, q: unknown, k: unknown, options?: Pick<AttentionOptions, 'score' | 'params' | 'scale'>): Tensor {
  const fn = 'attentionScores';
  const o = checkOptions(fn, 'options', options, ['score', 'params', 'scale']);
  const { Q, K, d, score, params, hidden, scale } = scoreInputs(fn, q, k, null, o);
  const len = numel(d.lead) * d.Sq * d.Sk;
  return withScratch(m, fn, (s, check) => {
    const out = s.alloc(len * 4);
    check(m.attentionScores({
      q: s.put(Q), k: s.put(K), ...d, Dv: 1, score,
      W: params.W ? s.put(params.W) : null,
      Wq: params.Wq ? s.put(params.Wq) : null,
      Wk: params.Wk ? s.put(params.Wk) : null,
      wv: params.wv ? s.put(params.wv) : null,
      hidden, scale, out,
    }));
    return { data: s.take(out, len), shape: [...d.lead, d.Sq, d.Sk] };
  });
}
