// ALiBi on the GPU: the core's bias -slope[h] * |i - j| (cpp/src/alibi.cpp) as one more additive
// mask, a diagonal table [heads, Sq + Sk - 1] read with row stride +1 and column stride -1 (the
// kernels' u32 index arithmetic wraps, so -1 is 2^32 - 1). Same float operations as the core.
import type { Broadcast } from '../mask-layout.js';
import type { MaskInput } from '../masks.js';

/** The paper's slopes for n heads, as alibi_slopes() computes them. */
function paperSlopes(n: number): Float32Array {
  let p = 1;
  while (p * 2 <= n) p *= 2;
  const slopes: number[] = [];
  for (let h = 1; h <= p; h++) slopes.push(2 ** ((-8 * h) / p));
  for (let h = 1; slopes.length < n; h += 2) slopes.push(2 ** ((-8 * h) / (2 * p)));
  return Float32Array.from(slopes);
}

/**
 * The ALiBi bias of scores [slices, Sq, Sk], slice b being head b % heads; null when the option
 * is off or the scores are empty (as the core skips it).
 */
export function alibiMask(alibi: Float32Array | boolean, heads: number, slices: number, Sq: number, Sk: number): { input: MaskInput; at: Broadcast } | null {
  if (alibi === false || Sq === 0 || Sk === 0) return null;
  const slopes = alibi === true ? paperSlopes(heads) : alibi;
  const len = Sq + Sk - 1;
  const table = new Float32Array(heads * len);
  for (let h = 0; h < heads; h++) {
    for (let t = 0; t < len; t++) table[h * len + t] = -slopes[h] * Math.abs(t - (Sk - 1));
  }
  return {
    input: { name: 'options.alibi', checked: { kind: 'float', mask: { data: table, shape: [heads, len] } }, trueBlocks: false },
    at: { rowStride: 1, colStride: -1, batchOffset: Array.from({ length: slices }, (_, b) => (b % heads) * len + Sk - 1) },
  };
}
