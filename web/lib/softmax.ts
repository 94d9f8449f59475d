import { withScratch } from './heap.js';
import { maskArgs, optionalMask, optionalValidLens } from './masks.js';
import { checkBool, checkOptions, checkTensor } from './tensor.js';
import type { MaskedSoftmaxOptions, Tensor } from './types.js';
import type { WasmModule } from './wasm-module.js';

/** Softmax over the last axis of x [..., Sk] with masks; a fully masked row is all zeros. */
export function maskedSoftmax(m: WasmModule, x: unknown, options?: MaskedSoftmaxOptions): Tensor {
  const fn = 'maskedSoftmax';
  const o = checkOptions(fn, 'options', options, ['causal', 'validLens', 'attnMask']);
  const X = checkTensor(fn, 'x', x, { rank: 1, orMore: true, layout: '[..., Sk]' });
  const causal = checkBool(fn, 'options.causal', o.causal, false);
  const validLens = optionalValidLens(fn, 'options.validLens', o.validLens);
  const mask = optionalMask(fn, 'options.attnMask', o.attnMask);
  // A vector is one row: [Sk] reads as [1, Sk].
  const shape = X.shape.length === 1 ? [1, X.shape[0]] : X.shape;
  const lead = shape.slice(0, -2);
  return withScratch(m, fn, (s, check) => {
    const out = s.alloc(X.data.length * 4);
    check(m.maskedSoftmax({
      x: s.put(X), lead, Sq: shape.at(-2)!, Sk: shape.at(-1)!,
      masks: maskArgs(s, causal, mask ? [{ name: 'options.attnMask', checked: mask, trueBlocks: false }] : [], validLens),
      out,
    }));
    return { data: s.take(out, X.data.length), shape: X.shape };
  });
}
