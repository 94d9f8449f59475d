import type { Scratch } from './heap.js';
import { checkInt, checkInt32Array, checkMask, describe, type CheckedMask } from './tensor.js';
import type { MaskArgs } from './wasm-module.js';

/** One mask as the bindings take it; `shape` is the shape it broadcasts from. */
export interface MaskInput {
  name: string;
  checked: CheckedMask;
  /** For boolean masks: true entries block (PyTorch MHA) rather than allow (SDPA). */
  trueBlocks: boolean;
  /** Shape to broadcast from, when it differs from the mask's own (a reshape, same data). */
  shape?: number[];
}

/** The `queryOffset` option: the key position of query row 0, an integer >= 0 (default 0). */
export function checkQueryOffset(fn: string, x: unknown): number {
  return x === undefined ? 0 : checkInt(fn, 'options.queryOffset', x, 0);
}

export function optionalMask(fn: string, name: string, m: unknown): CheckedMask | undefined {
  return m === undefined ? undefined : checkMask(fn, name, m);
}

export function optionalValidLens(fn: string, name: string, v: unknown): Int32Array | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) return checkInt32Array(fn, name, v);
  // A plain array, as d2l writes valid_lens: each entry an integer that int32 holds (the range
  // [0, Sk] is checked with the layout, as for an Int32Array).
  const bad = v.findIndex((x) => !Number.isInteger(x) || Math.abs(x as number) > 2147483647);
  if (bad >= 0) throw new Error(`${fn}: ${name}: expected an Int32Array or an array of integers, got ${describe(v[bad])} at index ${bad}`);
  return Int32Array.from(v as number[]);
}

/** Copies the masks, checked by maskLayout(), into the heap. */
export function maskArgs(s: Scratch, causal: boolean, queryOffset: number, masks: MaskInput[], validLens?: Int32Array): MaskArgs {
  const args: MaskArgs = { causal, queryOffset, bools: [], additive: [], validLens: null };
  for (const m of masks) {
    const shape = m.shape ?? m.checked.mask.shape;
    const ptr = s.put(m.checked.mask.data);
    if (m.checked.kind === 'bool') args.bools.push({ ptr, shape, trueBlocks: m.trueBlocks });
    else args.additive.push({ ptr, shape });
  }
  if (validLens) args.validLens = { ptr: s.put(validLens), length: validLens.length };
  return args;
}
