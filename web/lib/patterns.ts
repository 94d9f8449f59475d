import { withScratch } from './heap.js';
import { argError } from './errors.js';
import { checkBool, checkInt, checkOptions } from './tensor.js';
import type { AttentionPatternOptions, BoolTensor } from './types.js';
import type { WasmModule } from './wasm-module.js';

/** A checked pattern as the bindings read it (`global` holds token or block indices). */
export interface PatternArgs {
  type: 'local' | 'longformer' | 'bigbird';
  window: number;
  global: number[];
  blockSize: number;
  windowBlocks: number;
  randomBlocks: number;
  seed: number;
}

const TYPES = ['local', 'longformer', 'bigbird'] as const;
const KEYS = {
  local: ['type', 'window'],
  longformer: ['type', 'window', 'global'],
  bigbird: ['type', 'blockSize', 'windowBlocks', 'globalBlocks', 'randomBlocks', 'seed'],
} as const;

function checkIndices(fn: string, name: string, x: unknown, limit: number, what: string): number[] {
  if (x === undefined) return [];
  if (!Array.isArray(x)) throw argError(fn, name, `an array of ${what} indices`, x);
  x.forEach((g, t) => {
    if (typeof g !== 'number' || !Number.isSafeInteger(g) || g < 0 || g >= limit) {
      throw new Error(`${fn}: ${name}: expected ${what} indices in [0, ${limit}), got ${String(g)} at index ${t}`);
    }
  });
  return x.slice();
}

/** Checks an AttentionPattern for Sq queries and Sk keys. */
export function checkPattern(fn: string, name: string, p: unknown, Sq: number, Sk: number): PatternArgs {
  if (typeof p !== 'object' || p === null || Array.isArray(p)) {
    throw argError(fn, name, "a pattern { type: 'local' | 'longformer' | 'bigbird', ... }", p);
  }
  const type = (p as { type?: unknown }).type as PatternArgs['type'];
  if (!TYPES.includes(type)) throw argError(fn, `${name}.type`, `one of ${TYPES.map((t) => `'${t}'`).join(', ')}`, type);
  const o = checkOptions(fn, name, p, KEYS[type]);
  const args: PatternArgs = { type, window: 0, global: [], blockSize: 0, windowBlocks: 0, randomBlocks: 0, seed: 0 };
  if (type === 'bigbird') {
    args.blockSize = checkInt(fn, `${name}.blockSize`, o.blockSize, 1);
    args.windowBlocks = o.windowBlocks === undefined ? 1 : checkInt(fn, `${name}.windowBlocks`, o.windowBlocks, 0);
    args.randomBlocks = o.randomBlocks === undefined ? 3 : checkInt(fn, `${name}.randomBlocks`, o.randomBlocks, 0);
    args.seed = o.seed === undefined ? 0 : checkInt(fn, `${name}.seed`, o.seed, 0);
    const blocks = Math.max(Math.ceil(Sq / args.blockSize), Math.ceil(Sk / args.blockSize));
    args.global = o.globalBlocks === undefined ? (blocks > 0 ? [0] : []) : checkIndices(fn, `${name}.globalBlocks`, o.globalBlocks, blocks, 'block');
  } else {
    args.window = checkInt(fn, `${name}.window`, o.window, 0);
    if (type === 'longformer') args.global = checkIndices(fn, `${name}.global`, o.global, Math.max(Sq, Sk), 'token');
  }
  return args;
}

/** The pattern as a boolean tensor [Sq, Sk]: 1 where query i may see key j. */
export function attentionPattern(m: WasmModule, pattern: unknown, Sq: unknown, Sk: unknown, options?: AttentionPatternOptions): BoolTensor {
  const fn = 'attentionPattern';
  const rows = checkInt(fn, 'Sq', Sq, 0);
  const cols = checkInt(fn, 'Sk', Sk, 0);
  const p = checkPattern(fn, 'pattern', pattern, rows, cols);
  const o = checkOptions(fn, 'options', options, ['causal']);
  const causal = checkBool(fn, 'options.causal', o.causal, false);
  return patternMask(m, fn, p, rows, cols, causal);
}

/** A checked pattern as a boolean tensor [Sq, Sk], 1 where query i may see key j. */
export function patternMask(m: WasmModule, fn: string, p: PatternArgs, Sq: number, Sk: number, causal = false): BoolTensor {
  // An empty mask: the core would still walk its Sq rows (Sq = 2^40 with Sk = 0 never returned).
  if (Sq === 0 || Sk === 0) return { data: new Uint8Array(0), shape: [Sq, Sk] };
  return withScratch(m, fn, (s, check) => {
    const out = s.alloc(Sq * Sk);
    check(m.attentionPattern({ pattern: p, Sq, Sk, causal, out }));
    return { data: s.takeBytes(out, Sq * Sk), shape: [Sq, Sk] };
  });
}
