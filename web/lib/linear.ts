import { withHeapCopies, withScratch } from './heap.js';
import { checkOptions, checkOut, checkTensor, numel, shapeString } from './tensor.js';
import type { LinearOptions, Tensor } from './types.js';
import type { WasmModule } from './wasm-module.js';

/** PyTorch nn.Linear forward: x [..., in] W^T + bias -> [..., out], on the matmul kernels of MHA. */
export function linear(m: WasmModule, x: unknown, weight: unknown, bias?: unknown, options?: LinearOptions): Tensor {
  const fn = 'linear';
  const o = checkOptions(fn, 'options', options, ['out']);
  return withHeapCopies(m, fn, (copies) => {
    const X = checkTensor(fn, 'x', x, { rank: 1, orMore: true, layout: '[..., in]' }, copies.scan);
    const W = checkTensor(fn, 'weight', weight, { rank: 2, layout: '[out, in]' }, copies.scan);
    const [outF, inF] = W.shape;
    if (X.shape.at(-1) !== inF) {
      throw new Error(`${fn}: x: expected a last dimension of ${inF} (weight is [out, in] = ${shapeString(W.shape)}), got shape ${shapeString(X.shape)}`);
    }
    const B = bias === undefined ? null : checkTensor(fn, 'bias', bias, { rank: 1, layout: '[out]' }, copies.scan);
    if (B && B.shape[0] !== outF) throw new Error(`${fn}: bias: expected shape [${outF}] ([out]), got ${shapeString(B.shape)}`);
    const rows = numel(X.shape.slice(0, -1));
    const shape = [...X.shape.slice(0, -1), outF];
    const into = o.out === undefined ? null : checkOut(fn, 'options.out', o.out, rows * outF, shape);
    return withScratch(m, fn, (s, check) => {
      const out = s.alloc(rows * outF * 4);
      check(m.linear({ x: s.put(X.data), rows, in: inF, weight: s.put(W.data), bias: B ? s.put(B.data) : null, out: outF, y: out }));
      return { data: s.take(out, rows * outF, into), shape };
    }, copies);
  });
}
