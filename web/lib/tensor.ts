import { argError, describe } from './errors.js';
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
      throw argError(fn, `${name}.shape`, 'an array of non-negative integers', shape);
    }
  }
  return shape.slice();
}

type DataKind = 'float32' | 'uint8';
const dataNames: Record<DataKind, string> = { float32: 'Float32Array', uint8: 'Uint8Array' };

function checkData(fn: string, name: string, t: unknown, kind: DataKind): { data: Float32Array | Uint8Array; shape: number[] } {
  if (!isObject(t) || !('data' in t) || !('shape' in t)) {
    throw argError(fn, name, `a tensor { data: ${dataNames[kind]}, shape: number[] }`, t);
  }
  const shape = checkShape(fn, name, t.shape);
  const ok = kind === 'float32' ? t.data instanceof Float32Array : t.data instanceof Uint8Array;
  if (!ok) throw argError(fn, `${name}.data`, `a ${dataNames[kind]}`, t.data);
  const data = t.data as Float32Array | Uint8Array;
  if (data.length !== numel(shape)) {
    throw new Error(`${fn}: ${name}: expected data of length ${numel(shape)} for shape ${shapeString(shape)}, got length ${data.length}`);
  }
  return { data, shape };
}

/**
 * A float32 tensor whose shape is checked. Its values are checked when Scratch.put copies it
 * into the heap (a SIMD kernel there is far faster than a JS loop), so an op reports shape
 * errors first, then the first non-finite value.
 */
export interface CheckedTensor extends Tensor {
  /** The argument's name in error messages. */
  readonly name: string;
  /** Additive masks may hold -Infinity. */
  readonly negInfOk: boolean;
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

/** A float32 tensor of the rank rule, when given; finite values (checked on the way into the heap). */
export function checkTensor(fn: string, name: string, t: unknown, rule?: RankRule): CheckedTensor {
  const { data, shape } = checkData(fn, name, t, 'float32');
  if (rule) checkRank(fn, name, shape, rule);
  return { data: data as Float32Array, shape, name, negInfOk: false };
}

export type CheckedMask = { kind: 'bool'; mask: BoolTensor } | { kind: 'float'; mask: CheckedTensor };

/** A boolean (Uint8Array) or additive (Float32Array, finite or -Infinity) mask. */
export function checkMask(fn: string, name: string, m: unknown): CheckedMask {
  if (isObject(m) && m.data instanceof Uint8Array) {
    const { data, shape } = checkData(fn, name, m, 'uint8');
    return { kind: 'bool', mask: { data: data as Uint8Array, shape } };
  }
  if (isObject(m) && m.data instanceof Float32Array) {
    const { data, shape } = checkData(fn, name, m, 'float32');
    return { kind: 'float', mask: { data: data as Float32Array, shape, name, negInfOk: true } };
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
    throw argError(fn, name, `an integer >= ${min}`, x);
  }
  return x;
}

export function checkBool(fn: string, name: string, x: unknown, fallback: boolean): boolean {
  if (x === undefined) return fallback;
  if (typeof x !== 'boolean') throw argError(fn, name, 'a boolean', x);
  return x;
}

export function checkOneOf<T extends string>(fn: string, name: string, x: unknown, allowed: readonly T[], fallback: T): T {
  if (x === undefined) return fallback;
  if (typeof x !== 'string' || !(allowed as readonly string[]).includes(x)) {
    throw argError(fn, name, `one of ${allowed.map((a) => `'${a}'`).join(', ')}`, x);
  }
  return x as T;
}

export function checkOptions(fn: string, name: string, o: unknown, known: readonly string[]): Record<string, unknown> {
  if (o === undefined) return {};
  if (!isObject(o) || Array.isArray(o)) throw argError(fn, name, 'an object', o);
  for (const key of Object.keys(o)) {
    if (!known.includes(key)) {
      throw new Error(`${fn}: ${name}: unknown option '${key}'; expected one of ${known.join(', ')}`);
    }
  }
  return o;
}

export function checkInt32Array(fn: string, name: string, x: unknown): Int32Array {
  if (!(x instanceof Int32Array)) throw argError(fn, name, 'an Int32Array', x);
  return x;
}

export { describe };
