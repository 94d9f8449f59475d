import { withScratch } from './heap.js';
import { argError, intError } from './errors.js';
import { checkOneOf, checkOptions, checkTensor, numel, shapeString } from './tensor.js';
import type { RopeOptions, Tensor } from './types.js';
import type { WasmModule } from './wasm-module.js';

/** RoPE settings as the bindings read them. */
export interface RopeArgs {
  base: number;
  offset: number;
  interleaved: boolean;
}

/** Checks RopeOptions (or `true` for the defaults, in `attention` and `multiHeadAttention`). */
export function checkRope(fn: string, name: string, x: unknown): RopeArgs | null {
  if (x === undefined || x === false) return null;
  const o = checkOptions(fn, name, x === true ? {} : x, ['base', 'offset', 'pairs']);
  // undefined, not null, takes the default, as for every other option.
  const base = o.base === undefined ? 10000 : o.base;
  if (typeof base !== 'number' || !Number.isFinite(base) || base <= 0) throw argError(fn, `${name}.base`, 'a finite number > 0', base);
  const offset = o.offset === undefined ? 0 : o.offset;
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) throw intError(fn, `${name}.offset`, 'an integer >= 0', offset);
  const pairs = checkOneOf(fn, `${name}.pairs`, o.pairs, ['interleaved', 'halves'] as const, 'interleaved');
  return { base, offset, interleaved: pairs === 'interleaved' };
}

/** Throws unless the feature size `D` of `name` (shape `shape`) is even and >= 2. */
export function checkEvenFeatures(fn: string, name: string, D: number, shape: number[], what: string): void {
  if (D < 2 || D % 2 !== 0) {
    throw new Error(`${fn}: ${name}: expected an even ${what} >= 2 for rotary embedding (features turn in pairs), got shape ${shapeString(shape)}`);
  }
}

/** Rotary position embedding of x [..., S, D] (D even): the vector at row s turns for position offset + s. */
export function rope(m: WasmModule, x: unknown, options?: RopeOptions): Tensor {
  const fn = 'rope';
  const X = checkTensor(fn, 'x', x, { rank: 2, orMore: true, layout: '[..., S, D]' });
  // An options object or nothing: checkRope's true and false (attention's `rope: true`) mean
  // nothing here, and false reached the core as a NaN base.
  const r = checkRope(fn, 'options', checkOptions(fn, 'options', options, ['base', 'offset', 'pairs']))!;
  const [S, D] = X.shape.slice(-2);
  checkEvenFeatures(fn, 'x', D, X.shape, 'last dimension');
  // Nothing to turn; the core would still build its [S, D / 2] angle tables (x [0, 2^27, 8] ran
  // out of memory, and a larger S wraps the table's size).
  if (X.data.length === 0) return { data: new Float32Array(0), shape: X.shape };
  return withScratch(m, fn, (s, check) => {
    const p = s.put(X.data);
    check(m.rope({ x: p, out: p, outer: numel(X.shape.slice(0, -2)), S, inner: 1, D, ...r, name: 'x' }));
    return { data: s.take(p, X.data.length), shape: X.shape };
  });
}
