import { alibiArgs, checkAlibi } from './alibi.js';
import { withHeapCopies, withScratch, type HeapCopies } from './heap.js';
import { maskLayout, type MaskLayout } from './mask-layout.js';
import { checkQueryOffset, maskArgs, optionalMask, type MaskInput } from './masks.js';
import { checkShaw, checkT5, shawHeapArgs, t5HeapArgs, type ShawArgs, type T5Args } from './relative-position.js';
import { checkRope, type RopeArgs } from './rope.js';
import { checkBool, checkInt, checkOptions, checkOut, checkTensor, shapeString, type FiniteScan } from './tensor.js';
import type { AttentionResult, MultiHeadOptions, MultiHeadParams, Tensor } from './types.js';
import type { WasmModule } from './wasm-module.js';

function checkParam(fn: string, name: string, t: unknown, shape: number[], layout: string, scan?: FiniteScan): Tensor {
  const T = checkTensor(fn, `params.${name}`, t, { rank: shape.length, layout }, scan);
  if (T.shape.some((d, i) => d !== shape[i])) {
    throw new Error(`${fn}: params.${name}: expected shape ${shapeString(shape)} ${layout}, got ${shapeString(T.shape)}`);
  }
  return T;
}

/** multiHeadAttention()'s checked arguments; written out for TypeScript < 5.7 (see AttentionArgs). */
export interface MultiHeadArgs {
  fn: string;
  Q: Tensor;
  K: Tensor;
  V: Tensor;
  batched: boolean;
  B: number;
  L: number;
  S: number;
  E: number;
  H: number;
  inW: Tensor;
  outW: Tensor;
  inB: Tensor | undefined;
  outB: Tensor | undefined;
  causal: boolean;
  queryOffset: number;
  needWeights: boolean;
  averageWeights: boolean;
  masks: MaskInput[];
  layout: MaskLayout;
  alibi: Float32Array | boolean;
  rope: RopeArgs | null;
  t5: T5Args | null;
  shaw: ShawArgs | null;
  t5Table: Float32Array | null;
  out: Float32Array | null;
}

/** multiHeadAttention()'s arguments, checked once for every backend. */
export function multiHeadArgs(query: unknown, key: unknown, value: unknown, params: MultiHeadParams, options?: MultiHeadOptions, scan?: FiniteScan): MultiHeadArgs {
  const fn = 'multiHeadAttention';
  const o = checkOptions(fn, 'options', options, ['causal', 'queryOffset', 'keyPaddingMask', 'attnMask', 'needWeights', 'averageWeights', 'alibi', 'rope', 't5', 'shaw', 'out']);
  const p = checkOptions(fn, 'params', params, ['numHeads', 'inProjWeight', 'inProjBias', 'outProjWeight', 'outProjBias']);
  if (params === undefined) throw new Error(`${fn}: params: expected { numHeads, inProjWeight, outProjWeight, ... }, got undefined`);

  const Q = checkTensor(fn, 'query', query, { rank: 2, orMore: true, layout: '[B, L, E] or [L, E]' }, scan);
  const batched = Q.shape.length === 3;
  if (Q.shape.length > 3) throw new Error(`${fn}: query: expected a tensor of rank 2 or 3 ([L, E] or [B, L, E]), got shape ${shapeString(Q.shape)}`);
  const layout = batched ? '[B, S, E]' : '[S, E]';
  const K = checkTensor(fn, 'key', key, { rank: Q.shape.length, layout }, scan);
  const V = checkTensor(fn, 'value', value, { rank: Q.shape.length, layout }, scan);
  const B = batched ? Q.shape[0] : 1;
  const [L, E] = Q.shape.slice(-2);
  const S = K.shape.at(-2)!;
  for (const [name, T] of [['key', K], ['value', V]] as const) {
    const want = batched ? [B, S, E] : [S, E];
    if (T.shape.some((d, i) => d !== want[i])) {
      throw new Error(`${fn}: ${name}: expected shape ${shapeString(want)} ${layout} (batch and E as query, S as key), got ${shapeString(T.shape)}`);
    }
  }
  if (E < 1) throw new Error(`${fn}: query: expected an embedding size E >= 1, got shape ${shapeString(Q.shape)}`);
  const H = checkInt(fn, 'params.numHeads', p.numHeads, 1);
  if (E % H !== 0) throw new Error(`${fn}: params.numHeads: expected a divisor of the embedding size ${E}, got ${H}`);
  const inW = checkParam(fn, 'inProjWeight', p.inProjWeight, [3 * E, E], '[3E, E]', scan);
  const outW = checkParam(fn, 'outProjWeight', p.outProjWeight, [E, E], '[E, E]', scan);
  const inB = p.inProjBias === undefined ? undefined : checkParam(fn, 'inProjBias', p.inProjBias, [3 * E], '[3E]', scan);
  const outB = p.outProjBias === undefined ? undefined : checkParam(fn, 'outProjBias', p.outProjBias, [E], '[E]', scan);

  const causal = checkBool(fn, 'options.causal', o.causal, false);
  const queryOffset = checkQueryOffset(fn, o.queryOffset);
  const needWeights = checkBool(fn, 'options.needWeights', o.needWeights, false);
  const averageWeights = checkBool(fn, 'options.averageWeights', o.averageWeights, true);
  const masks: MaskInput[] = [];
  const kpm = optionalMask(fn, 'options.keyPaddingMask', o.keyPaddingMask);
  if (kpm) {
    const want = batched ? [B, S] : [S];
    const got = kpm.mask.shape;
    if (got.length !== want.length || got.some((d, i) => d !== want[i])) {
      throw new Error(`${fn}: options.keyPaddingMask: expected shape ${shapeString(want)} (${batched ? '[B, S]' : '[S]'}), got ${shapeString(got)}`);
    }
    // Scores are [B, H, L, S]: the padding mask reads as [B, 1, 1, S].
    masks.push({ name: 'options.keyPaddingMask', checked: kpm, trueBlocks: true, shape: [B, 1, 1, S] });
  }
  const am = optionalMask(fn, 'options.attnMask', o.attnMask);
  if (am) {
    const got = am.mask.shape;
    const perHead = batched ? B * H : H;
    const ok2 = got.length === 2 && got[0] === L && got[1] === S;
    const ok3 = got.length === 3 && got[0] === perHead && got[1] === L && got[2] === S;
    if (!ok2 && !ok3) {
      throw new Error(`${fn}: options.attnMask: expected shape [${L}, ${S}] ([L, S]) or [${perHead}, ${L}, ${S}] (${batched ? '[B*numHeads, L, S]' : '[numHeads, L, S]'}), got ${shapeString(got)}`);
    }
    masks.push({ name: 'options.attnMask', checked: am, trueBlocks: true, shape: ok3 ? [B, H, L, S] : [L, S] });
  }
  const alibi = checkAlibi(fn, 'options.alibi', o.alibi, H, 'numHeads');
  const rope = checkRope(fn, 'options.rope', o.rope);
  if (rope && (E / H) % 2 !== 0) {
    throw new Error(`${fn}: options.rope: expected an even head size E / numHeads (features turn in pairs), got ${E} / ${H} = ${E / H}`);
  }
  const t5 = checkT5(fn, 'options.t5', o.t5, H, 'numHeads', scan);
  const shaw = checkShaw(fn, 'options.shaw', o.shaw, E / H, E / H, 'the head size E / numHeads', scan);
  const maskAt = maskLayout(fn, [B, H, L, S], causal, queryOffset, masks);
  const outShape = batched ? [B, L, E] : [L, E];
  const out = o.out === undefined ? null : checkOut(fn, 'options.out', o.out, B * L * E, outShape);
  return { fn, Q, K, V, batched, B, L, S, E, H, inW, outW, inB, outB, causal, queryOffset, needWeights, averageWeights, masks, layout: maskAt, alibi, rope, t5, shaw, t5Table: null, out };
}

/** PyTorch nn.MultiheadAttention (batch_first=True) forward; see MultiHeadParams/Options. */
export function multiHeadAttention(m: WasmModule, query: unknown, key: unknown, value: unknown, params: MultiHeadParams, options?: MultiHeadOptions): AttentionResult {
  return withHeapCopies(m, 'multiHeadAttention', (copies) => runMultiHead(m, multiHeadArgs(query, key, value, params, options, copies.scan), copies));
}

/** The WebAssembly run of checked arguments (`copies`: inputs the checks already put in the heap). */
export function runMultiHead(m: WasmModule, a: MultiHeadArgs, copies?: HeapCopies): AttentionResult {
  const { fn, Q, K, V, batched, B, L, S, E, H, inW, outW, inB, outB, causal, queryOffset, needWeights, averageWeights, masks, alibi, rope, t5, shaw } = a;
  const outLen = B * L * E;
  const wLen = averageWeights ? B * L * S : B * H * L * S;
  const lead = batched ? [B] : [];
  const weightsShape = averageWeights ? [...lead, L, S] : [...lead, H, L, S];
  if (outLen === 0) {
    // No query rows (E >= 1): nothing to run, as in runAttention; the core would still size the
    // rope and T5 tables for L and S (an empty batch of L = 2^30 with rope ran out of memory).
    const result: AttentionResult = { output: { data: a.out ?? new Float32Array(0), shape: [...lead, L, E] } };
    if (needWeights) result.weights = { data: new Float32Array(0), shape: weightsShape };
    return result;
  }
  return withScratch(m, fn, (s, check) => {
    const out = s.alloc(outLen * 4);
    const weights = needWeights ? s.alloc(wLen * 4) : 0;
    const args = {
      query: s.put(Q.data), key: s.put(K.data), value: s.put(V.data), B, L, S, E, H,
      inProjWeight: s.put(inW.data), inProjBias: inB ? s.put(inB.data) : null,
      outProjWeight: s.put(outW.data), outProjBias: outB ? s.put(outB.data) : null,
      masks: { ...maskArgs(s, causal, queryOffset, masks), alibi: alibiArgs(s, alibi, H, B * H, L, S), t5: t5HeapArgs(s, t5, L, S) },
      out, weights: weights || null, averageWeights,
    };
    check(m.multiHeadAttention({ ...args, rope, shaw: shawHeapArgs(s, shaw) }));
    const result: AttentionResult = { output: { data: s.take(out, outLen, a.out), shape: [...lead, L, E] } };
    if (needWeights) result.weights = { data: s.take(weights, wLen), shape: weightsShape };
    return result;
  }, copies);
}
