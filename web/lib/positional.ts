import { withScratch } from './heap.js';
import { checkInt } from './tensor.js';
import type { Tensor } from './types.js';
import type { WasmModule } from './wasm-module.js';

/** Sinusoidal positional encoding (Vaswani et al.): [length, dim]; sin on even columns, cos on odd. */
export function positionalEncoding(m: WasmModule, length: unknown, dim: unknown): Tensor {
  const fn = 'positionalEncoding';
  const L = checkInt(fn, 'length', length, 0);
  const D = checkInt(fn, 'dim', dim, 1);
  return withScratch(m, fn, (s, check) => {
    const out = s.alloc(L * D * 4);
    check(m.positionalEncoding(L, D, out));
    return { data: s.take(out, L * D), shape: [L, D] };
  });
}
