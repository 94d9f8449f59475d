// Relative position options of attention and multiHeadAttention: T5's bucketed bias (one more
// additive mask, filled by the core: cpp/src/relative_position.cpp) and Shaw et al.'s relative
// embeddings (their own kernel on WebAssembly).
import { withScratch, type Scratch } from './heap.js';
import { argError } from './errors.js';
import { checkBool, checkInt, checkOptions, checkTensor, shapeString, type FiniteScan } from './tensor.js';
import type { Tensor } from './types.js';
import type { WasmModule } from './wasm-module.js';

/** A checked `t5` option. */
export interface T5Args {
  weights: Float32Array;
  heads: number;
  numBuckets: number;
  maxDistance: number;
  bidirectional: boolean;
}

/** A checked `shaw` option. */
export interface ShawArgs {
  keys: Tensor;
  values: Tensor | null;
  maxDistance: number;
}

/**
 * Checks a `t5` option: { weights [heads, numBuckets], bidirectional?, maxDistance? }. The bucket
 * limits are T5's: per direction at least 2 buckets, and maxDistance beyond the exact ones.
 */
export function checkT5(fn: string, name: string, x: unknown, heads: number, headsWhat: string, scan?: FiniteScan, weightsName = `${name}.weights`): T5Args | null {
  if (x === undefined) return null;
  if (typeof x !== 'object' || x === null || Array.isArray(x)) throw argError(fn, name, '{ weights: [heads, numBuckets], bidirectional?, maxDistance? }', x);
  const o = checkOptions(fn, name, x, ['weights', 'bidirectional', 'maxDistance']);
  if (o.weights === undefined) throw new Error(`${fn}: ${weightsName}: expected the learned bias, a tensor [${heads}, numBuckets] ([heads, numBuckets], heads = ${headsWhat}), got undefined`);
  const W = checkTensor(fn, weightsName, o.weights, { rank: 2, layout: '[heads, numBuckets]' }, scan);
  if (W.shape[0] !== heads) {
    throw new Error(`${fn}: ${weightsName}: expected shape [${heads}, numBuckets] ([heads, numBuckets], heads = ${headsWhat}), got ${shapeString(W.shape)}`);
  }
  const bidirectional = checkBool(fn, `${name}.bidirectional`, o.bidirectional, true);
  const numBuckets = W.shape[1];
  const perDirection = bidirectional ? Math.floor(numBuckets / 2) : numBuckets;
  if (perDirection < 2) {
    throw new Error(`${fn}: ${weightsName}: expected numBuckets >= ${bidirectional ? 4 : 2} (${bidirectional ? 'bidirectional' : 'causal'} scheme), got shape ${shapeString(W.shape)}`);
  }
  if (bidirectional && numBuckets % 2 !== 0) {
    throw new Error(`${fn}: ${weightsName}: expected an even numBuckets (bidirectional scheme: half the buckets per direction), got shape ${shapeString(W.shape)}`);
  }
  const maxExact = Math.floor(perDirection / 2);
  const maxDistance = o.maxDistance === undefined ? 128 : checkInt(fn, `${name}.maxDistance`, o.maxDistance, 0);
  if (maxDistance <= maxExact) {
    throw new Error(`${fn}: ${name}.maxDistance: expected an integer > ${maxExact} (the exact buckets' span, numBuckets / ${bidirectional ? 4 : 2}), got ${maxDistance}`);
  }
  return { weights: W.data, heads, numBuckets, maxDistance, bidirectional };
}

/** Heap arguments of a checked `t5` option over scores [batch, Sq, Sk]; null when off or empty. */
export function t5HeapArgs(s: Scratch, t5: T5Args | null, Sq: number, Sk: number) {
  if (!t5 || Sq === 0 || Sk === 0) return null;
  return { ...t5, weights: s.put(t5.weights), table: s.alloc(t5.heads * (Sq + Sk - 1) * 4) };
}

/**
 * The call with T5's bias diagonals [heads, Sq + Sk - 1] (entry t: j - i = Sk - 1 - t, the query
 * at position i + queryOffset) filled in by the core, for a backend that takes the bias as a mask
 * (WebGPU).
 */
export function withT5Table<A extends { fn: string; t5: T5Args | null; t5Table: Float32Array | null; queryOffset: number }>(m: WasmModule, a: A, Sq: number, Sk: number): A {
  const t5 = a.t5;
  if (!t5 || Sq === 0 || Sk === 0 || t5.heads === 0) return a;
  const len = t5.heads * (Sq + Sk - 1);
  const t5Table = withScratch(m, a.fn, (s, check) => {
    const out = s.alloc(len * 4);
    check(m.t5BiasTable({ ...t5, weights: s.put(t5.weights), Sq, Sk, queryOffset: a.queryOffset, out }));
    return s.take(out, len);
  });
  return { ...a, t5Table };
}

/**
 * Checks a `shaw` option: { keys [2k + 1, D], values? [2k + 1, Dv], maxDistance: k }, D and Dv
 * being the feature sizes each head's keys and values have.
 */
export function checkShaw(fn: string, name: string, x: unknown, D: number, Dv: number, what: string, scan?: FiniteScan): ShawArgs | null {
  if (x === undefined) return null;
  if (typeof x !== 'object' || x === null || Array.isArray(x)) throw argError(fn, name, '{ keys: [2 maxDistance + 1, D], values?, maxDistance }', x);
  const o = checkOptions(fn, name, x, ['keys', 'values', 'maxDistance']);
  const maxDistance = checkInt(fn, `${name}.maxDistance`, o.maxDistance, 0);
  const rows = 2 * maxDistance + 1;
  const table = (field: 'keys' | 'values', cols: number) => {
    const T = checkTensor(fn, `${name}.${field}`, o[field], { rank: 2, layout: `[2 maxDistance + 1, ${field === 'keys' ? 'D' : 'Dv'}]` }, scan);
    if (T.shape[0] !== rows || T.shape[1] !== cols) {
      throw new Error(`${fn}: ${name}.${field}: expected shape [${rows}, ${cols}] ([2 maxDistance + 1, ${what}]), got ${shapeString(T.shape)}`);
    }
    return T;
  };
  if (o.keys === undefined) throw new Error(`${fn}: ${name}.keys: expected the learned relative key embeddings [${rows}, ${D}], got undefined`);
  return { keys: table('keys', D), values: o.values === undefined ? null : table('values', Dv), maxDistance };
}

/** Heap arguments of a checked `shaw` option. */
export function shawHeapArgs(s: Scratch, r: ShawArgs | null) {
  if (!r) return null;
  return { keys: s.put(r.keys.data), values: r.values ? s.put(r.values.data) : null, maxDistance: r.maxDistance };
}

/** T5's bias [heads, Sq, Sk] for learned weights [heads, numBuckets]: for drawing, or as an attnMask elsewhere. */
export function t5Bias(m: WasmModule, weights: unknown, Sq: unknown, Sk: unknown, options?: { bidirectional?: boolean; maxDistance?: number }): Tensor {
  const fn = 't5Bias';
  const W = checkTensor(fn, 'weights', weights, { rank: 2, layout: '[heads, numBuckets]' });
  const rows = checkInt(fn, 'Sq', Sq, 0), cols = checkInt(fn, 'Sk', Sk, 0);
  const o = checkOptions(fn, 'options', options, ['bidirectional', 'maxDistance']);
  // The weights are an argument of their own here, not options.weights.
  const t5 = checkT5(fn, 'options', { ...o, weights: W }, W.shape[0], "weights' rows", undefined, 'weights')!;
  const H = t5.heads, len = rows + cols - 1;
  if (H * rows * cols > 2 ** 31 - 1) {
    throw new Error(`${fn}: Sq, Sk: expected a bias [heads, Sq, Sk] of at most 2^31 - 1 elements (a Float32Array), got [${H}, ${rows}, ${cols}]`);
  }
  const data = new Float32Array(H * rows * cols);
  const table = withT5Table(m, { fn, t5, t5Table: null, queryOffset: 0 }, rows, cols).t5Table;
  if (table) {
    for (let h = 0; h < H; h++)
      for (let i = 0; i < rows; i++)
        for (let j = 0; j < cols; j++) data[(h * rows + i) * cols + j] = table[h * len + i - j + cols - 1];
  }
  return { data, shape: [H, rows, cols] };
}
