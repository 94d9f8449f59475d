import { withScratch } from './heap.js';
import { maskLayout, type MaskLayout } from './mask-layout.js';
import { checkQueryOffset, maskArgs, optionalMask, optionalValidLens, type MaskInput } from './masks.js';
import { checkBool, checkOptions, checkOut, checkTensor } from './tensor.js';
import type { MaskedSoftmaxOptions, Tensor } from './types.js';
import type { WasmModule } from './wasm-module.js';

/** maskedSoftmax()'s checked arguments; written out for TypeScript < 5.7 (see AttentionArgs). */
export interface MaskedSoftmaxArgs {
  fn: string;
  X: Tensor;
  lead: number[];
  Sq: number;
  Sk: number;
  causal: boolean;
  queryOffset: number;
  validLens: Int32Array | undefined;
  masks: MaskInput[];
  layout: MaskLayout;
  out: Float32Array | null;
}

/** maskedSoftmax()'s arguments, checked once for every backend. */
export function maskedSoftmaxArgs(x: unknown, options?: MaskedSoftmaxOptions): MaskedSoftmaxArgs {
  const fn = 'maskedSoftmax';
  const o = checkOptions(fn, 'options', options, ['causal', 'queryOffset', 'validLens', 'attnMask', 'out']);
  const X = checkTensor(fn, 'x', x, { rank: 1, orMore: true, layout: '[..., Sk]' });
  const causal = checkBool(fn, 'options.causal', o.causal, false);
  const queryOffset = checkQueryOffset(fn, o.queryOffset);
  const validLens = optionalValidLens(fn, 'options.validLens', o.validLens);
  const mask = optionalMask(fn, 'options.attnMask', o.attnMask);
  const masks: MaskInput[] = mask ? [{ name: 'options.attnMask', checked: mask, trueBlocks: false }] : [];
  // A vector is one row: [Sk] reads as [1, Sk].
  const shape = X.shape.length === 1 ? [1, X.shape[0]] : X.shape;
  const layout = maskLayout(fn, shape, causal, queryOffset, masks, validLens);
  const out = o.out === undefined ? null : checkOut(fn, 'options.out', o.out, X.data.length, X.shape);
  return { fn, X, lead: shape.slice(0, -2), Sq: shape.at(-2)!, Sk: shape.at(-1)!, causal, queryOffset, validLens, masks, layout, out };
}

/** Softmax over the last axis of x [..., Sk] with masks; a fully masked row is all zeros. */
export function maskedSoftmax(m: WasmModule, x: unknown, options?: MaskedSoftmaxOptions): Tensor {
  return runMaskedSoftmax(m, maskedSoftmaxArgs(x, options));
}

/** The WebAssembly run of checked arguments. */
export function runMaskedSoftmax(m: WasmModule, a: MaskedSoftmaxArgs): Tensor {
  const { fn, X, lead, Sq, Sk, causal, queryOffset, validLens, masks } = a;
  // Nothing to run; leading dimensions of 2^40 over empty rows would loop the core that long.
  if (X.data.length === 0) return { data: a.out ?? new Float32Array(0), shape: X.shape };
  return withScratch(m, fn, (s, check) => {
    const out = s.alloc(X.data.length * 4);
    check(m.maskedSoftmax({
      x: s.put(X.data), lead, Sq, Sk,
      masks: maskArgs(s, causal, queryOffset, masks, validLens),
      out,
    }));
    return { data: s.take(out, X.data.length, a.out), shape: X.shape };
  });
}
