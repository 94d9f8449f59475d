import { argError, describe, intError } from './errors.js';
import type { BoolTensor, Tensor } from './types.js';

export function numel(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

export function shapeString(shape: readonly number[]): string {
  return `[${shape.join(', ')}]`;
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null;
}

/** Checks `shape` is an array of non-negative integers and returns a copy. */
export function checkShape(fn: string, name: string, shape: unknown): number[] {
  if (!Array.isArray(shape)) throw argError(fn, `${name}.shape`, 'an array of non-negative integers', shape);
  for (const d of shape) {
    if (typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0) {
      throw intError(fn, `${name}.shape`, 'an array of non-negative integers', shape);
    }
  }
  // + 0 turns -0 (Math.round(-0.2), -1 * 0), which passes as 0, into 0: it would otherwise reach
  // the results' shapes, where Object.is and test matchers tell it from 0.
  return shape.map((d: number) => d + 0);
}

type DataKind = 'float32' | 'uint8';
const dataTypes = { float32: Float32Array, uint8: Uint8Array, int32: Int32Array } as const;

/**
 * %TypedArray%.prototype's Symbol.toStringTag getter: the internal [[TypedArrayName]] slot, or
 * undefined for anything without it.
 */
const typedArrayName = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag)!.get!;

/**
 * Whether `x` is a typed array of `kind`, by its internal slot, not instanceof: a Proxy over a
 * typed array inherits the prototype but not the slots (copying it into the heap throws a raw
 * TypeError), and a typed array of another realm (an iframe's, a vm context's, Jest's test
 * environments') has the slots but another prototype. Subclasses (Node's Buffer) pass.
 */
export function isTyped<K extends keyof typeof dataTypes>(x: unknown, kind: K): x is InstanceType<(typeof dataTypes)[K]> {
  return typedArrayName.call(x) === dataTypes[kind].name;
}

/** The message for a value that is not a real typed array of `kind`, naming a look-alike as such. */
function typedError(fn: string, name: string, x: unknown, kind: keyof typeof dataTypes): Error {
  const want = `${kind === 'int32' ? 'an' : 'a'} ${dataTypes[kind].name}`;
  if (x instanceof dataTypes[kind]) {
    return new Error(`${fn}: ${name}: expected ${want}, got an object that only inherits from one (a Proxy?); pass the typed array itself`);
  }
  return argError(fn, name, want, x);
}

const arrayBufferByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength')!.get!;

/**
 * Whether `x` is an ArrayBuffer (not a SharedArrayBuffer), of this realm or another, by its
 * internal slot: ArrayBuffer.prototype.byteLength's getter throws for anything else.
 */
export function isArrayBuffer(x: unknown): x is ArrayBuffer {
  try {
    arrayBufferByteLength.call(x);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why a typed array reads as empty when its buffer was transferred (postMessage's transfer list,
 * ArrayBuffer.prototype.transfer): a detached buffer's views have length 0, which alone would
 * read as a wrong size. Only a detached buffer refuses a new view (ArrayBuffer.prototype.detached
 * is not in Node 20).
 */
function detachedNote(data: ArrayBufferView): string {
  if (data.byteLength !== 0 || !isArrayBuffer(data.buffer)) return '';
  try {
    new Uint8Array(data.buffer);
    return '';
  } catch {
    return ' (its ArrayBuffer is detached: transferred away, e.g. to a Worker)';
  }
}

function checkData(fn: string, name: string, t: unknown, kind: DataKind): { data: Float32Array | Uint8Array; shape: number[] } {
  if (!isObject(t) || !('data' in t) || !('shape' in t)) {
    throw argError(fn, name, `a tensor { data: ${dataTypes[kind].name}, shape: number[] }`, t);
  }
  const shape = checkShape(fn, name, t.shape);
  if (!isTyped(t.data, kind)) throw typedError(fn, `${name}.data`, t.data, kind);
  const data = t.data as Float32Array | Uint8Array;
  if (data.length !== numel(shape)) {
    throw new Error(`${fn}: ${name}: expected data of length ${numel(shape)} for shape ${shapeString(shape)}, got length ${data.length}${detachedNote(data)}`);
  }
  return { data, shape };
}

/** Index of the first value that is not finite (-Infinity passes when allowed), or -1. */
export type FiniteScan = (data: Float32Array, allowNegInf: boolean) => number;

export const jsFiniteScan: FiniteScan = (data, allowNegInf) => {
  for (let i = 0; i < data.length; i++) {
    const x = data[i];
    // x - x is 0 for finite x and NaN for NaN and ±Infinity: one test covers all three.
    if (x - x !== 0 && !(allowNegInf && x === -Infinity)) return i;
  }
  return -1;
};

function checkFinite(fn: string, name: string, data: Float32Array, allowNegInf: boolean, scan: FiniteScan = jsFiniteScan): void {
  const i = scan(data, allowNegInf);
  if (i >= 0) {
    const expected = allowNegInf ? 'finite values or -Infinity' : 'finite values';
    throw new Error(`${fn}: ${name}: expected ${expected}, got ${data[i]} at index ${i}`);
  }
}

export interface RankRule {
  /** Exact rank, or the minimum when `orMore`. */
  rank: number;
  orMore?: boolean;
  /** How the dimensions read, for messages: "[..., Sq, D]". */
  layout: string;
}

function checkRank(fn: string, name: string, shape: number[], rule: RankRule): void {
  const ok = rule.orMore ? shape.length >= rule.rank : shape.length === rule.rank;
  if (!ok) {
    const what = rule.orMore ? `rank >= ${rule.rank}` : `rank ${rule.rank}`;
    throw new Error(`${fn}: ${name}: expected a tensor of ${what} ${rule.layout}, got shape ${shapeString(shape)}`);
  }
}

/**
 * A float32 tensor with finite values and, when given, the rank rule. `scan` looks for non-finite
 * values: a JS loop by default, the SIMD kernel (heapFiniteScan) where a module is at hand.
 */
export function checkTensor(fn: string, name: string, t: unknown, rule?: RankRule, scan?: FiniteScan): Tensor {
  const { data, shape } = checkData(fn, name, t, 'float32');
  if (rule) checkRank(fn, name, shape, rule);
  checkFinite(fn, name, data as Float32Array, false, scan);
  return { data: data as Float32Array, shape };
}

export type CheckedMask = { kind: 'bool'; mask: BoolTensor } | { kind: 'float'; mask: Tensor };

/** A boolean (Uint8Array) or additive (Float32Array, finite or -Infinity) mask. */
export function checkMask(fn: string, name: string, m: unknown): CheckedMask {
  if (isObject(m) && isTyped(m.data, 'uint8')) {
    const { data, shape } = checkData(fn, name, m, 'uint8');
    return { kind: 'bool', mask: { data: data as Uint8Array, shape } };
  }
  if (isObject(m) && isTyped(m.data, 'float32')) {
    const { data, shape } = checkData(fn, name, m, 'float32');
    checkFinite(fn, name, data as Float32Array, true);
    return { kind: 'float', mask: { data: data as Float32Array, shape } };
  }
  if (isObject(m) && (m.data instanceof Uint8Array || m.data instanceof Float32Array)) {
    throw typedError(fn, `${name}.data`, m.data, m.data instanceof Uint8Array ? 'uint8' : 'float32');
  }
  if (isObject(m) && m.data !== undefined) {
    // A mask-like object whose data is another array (Int32Array, Int8Array, a plain array): name
    // the data and what it is, not just "an object".
    throw argError(fn, `${name}.data`, 'a Uint8Array (boolean mask) or Float32Array (additive mask)', m.data);
  }
  throw argError(fn, name, 'a mask { data: Uint8Array (boolean) or Float32Array (additive), shape }', m);
}

export function checkDim(fn: string, name: string, shape: number[], axis: number, expected: number, what: string): void {
  const got = shape[axis];
  if (got !== expected) {
    throw new Error(`${fn}: ${name}: expected ${what} ${expected}, got shape ${shapeString(shape)}`);
  }
}

export function checkInt(fn: string, name: string, x: unknown, min: number): number {
  if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < min) {
    throw intError(fn, name, `an integer >= ${min}`, x);
  }
  return x + 0;  // -0 as 0, as in checkShape
}

export function checkBool(fn: string, name: string, x: unknown, fallback: boolean): boolean {
  if (x === undefined) return fallback;
  if (typeof x !== 'boolean') throw argError(fn, name, 'a boolean', x);
  return x;
}

/** One of `allowed`; `fallback` when x is undefined, or an Error there when there is no fallback (required). */
export function checkOneOf<T extends string>(fn: string, name: string, x: unknown, allowed: readonly T[], fallback?: T): T {
  if (x === undefined && fallback !== undefined) return fallback;
  if (typeof x !== 'string' || !(allowed as readonly string[]).includes(x)) {
    throw argError(fn, name, `one of ${allowed.map((a) => `'${a}'`).join(', ')}`, x);
  }
  return x as T;
}

// By their [object Tag], which another realm's (an iframe's, a vm context's) carry too, where
// instanceof would let them through as {}.
const NOT_OPTIONS = new Set(['Map', 'Set', 'WeakMap', 'WeakSet', 'Date', 'RegExp', 'Promise', 'Error', 'ArrayBuffer']);

/** Throws unless `o` is an object whose own keys are its options; `expected` names it when it is no object at all. */
export function checkOptionsObject(fn: string, name: string, o: unknown, expected = 'an object'): Record<string, unknown> {
  // A typed array, like a plain one, is a positional argument in the wrong place (d2l's
  // masked_softmax(X, valid_lens)): its indices read as unknown options, and an empty one passed.
  if (!isObject(o) || Array.isArray(o) || ArrayBuffer.isView(o)) throw argError(fn, name, expected, o);
  // A Map of options (or a Date, a Promise...) has no own keys: it would pass as {} and every
  // option in it would be silently ignored. Class instances with fields are objects like any other.
  if (NOT_OPTIONS.has(Object.prototype.toString.call(o).slice(8, -1))) throw argError(fn, name, 'a plain object ({ option: value })', o);
  return o;
}

export function checkOptions(fn: string, name: string, o: unknown, known: readonly string[]): Record<string, unknown> {
  if (o === undefined) return {};
  const r = checkOptionsObject(fn, name, o);
  for (const key of Object.keys(r)) {
    if (!known.includes(key)) {
      throw new Error(`${fn}: ${name}: unknown option '${key}'; expected one of ${known.join(', ')}`);
    }
  }
  return r;
}

/**
 * A caller's array for a result (options.out): a Float32Array of exactly `length` values. Its
 * contents do not matter (it is written, not read), so it may be one of the call's inputs.
 */
export function checkOut(fn: string, name: string, x: unknown, length: number, shape: readonly number[]): Float32Array {
  if (!isTyped(x, 'float32')) throw typedError(fn, name, x, 'float32');
  if (x.length !== length) {
    throw new Error(`${fn}: ${name}: expected a Float32Array of length ${length} (the output's shape ${shapeString([...shape])}), got length ${x.length}${detachedNote(x)}`);
  }
  return x;
}

export function checkInt32Array(fn: string, name: string, x: unknown): Int32Array {
  if (!isTyped(x, 'int32')) throw typedError(fn, name, x, 'int32');
  return x;
}

export { describe };
