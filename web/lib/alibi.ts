import type { Scratch } from './heap.js';
import { argError } from './errors.js';
import { isTyped } from './tensor.js';
import type { MaskArgs } from './wasm-module.js';

/** The `alibi` option as the bindings read it (with the masks). */
export type AlibiArgs = NonNullable<MaskArgs['alibi']>;

/** Checks an `alibi` option: true, false, undefined, or `heads` finite slopes >= 0. */
export function checkAlibi(fn: string, name: string, x: unknown, heads: number, headsWhat: string): Float32Array | boolean {
  if (x === undefined || x === false || x === true) return x ?? false;
  if (!isTyped(x, 'float32') || x.length !== heads) {
    throw argError(fn, name, `true or a Float32Array of ${heads} slopes (one per head, ${headsWhat})`, x);
  }
  x.forEach((s, i) => {
    if (!(Number.isFinite(s) && s >= 0)) throw new Error(`${fn}: ${name}: expected slopes that are finite and >= 0, got ${s} at index ${i}`);
  });
  return x;
}

/** Heap arguments for a checked `alibi` option over scores [batch, Sq, Sk]; null when off or empty. */
export function alibiArgs(s: Scratch, alibi: Float32Array | boolean, heads: number, batch: number, Sq: number, Sk: number): AlibiArgs | null {
  if (alibi === false || batch === 0 || Sq === 0 || Sk === 0) return null;
  return {
    slopes: alibi === true ? null : s.put(alibi),
    heads,
    table: s.alloc(heads * (Sq + Sk - 1) * 4),
  };
}
