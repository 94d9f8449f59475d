// ALiBi and T5's bias on the GPU: the core's bias -slope[h] * |i - j| (cpp/src/alibi.cpp), and T5's
// table filled by the core (cpp/src/relative_position.cpp), each as one more additive mask, a diagonal table [heads, Sq + Sk - 1] read with row stride +1 and column stride -1 (the
// kernels' u32 index arithmetic wraps, so -1 is 2^32 - 1). Same float operations as the core.
import type { Broadcast } from '../mask-layout.js';
import type { MaskInput } from '../masks.js';
import { MAX_MASKS } from './shaders/masks.js';

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
 * A bias that depends only on i - j, as a diagonal table [heads, Sq + Sk - 1] (entry t: i - j =
 * t - (Sk - 1)), over scores [slices, Sq, Sk], slice b being head b % heads.
 */
export function diagonalMask(name: string, table: Float32Array, heads: number, slices: number, Sq: number, Sk: number): { input: MaskInput; at: Broadcast } {
  const len = Sq + Sk - 1;
  return {
    input: { name, checked: { kind: 'float', mask: { data: table, shape: [heads, len] } }, trueBlocks: false },
    at: { rowStride: 1, colStride: -1, batchOffset: Array.from({ length: slices }, (_, b) => (b % heads) * len + Sk - 1) },
  };
}

/**
 * The ALiBi bias of scores [slices, Sq, Sk], slice b being head b % heads, query i at position
 * i + queryOffset; null when the option is off or the scores are empty (as the core skips it).
 */
export function alibiMask(alibi: Float32Array | boolean, heads: number, slices: number, Sq: number, Sk: number, queryOffset: number): { input: MaskInput; at: Broadcast } | null {
  if (alibi === false || Sq === 0 || Sk === 0) return null;
  const slopes = alibi === true ? paperSlopes(heads) : alibi;
  const len = Sq + Sk - 1;
  const table = new Float32Array(heads * len);
  for (let h = 0; h < heads; h++) {
    // fround: the core's float distance, then one rounding of the float product.
    for (let t = 0; t < len; t++) table[h * len + t] = -slopes[h] * Math.fround(Math.abs(t - (Sk - 1) + queryOffset));
  }
  return diagonalMask('options.alibi', table, heads, slices, Sq, Sk);
}

/**
 * The relative position biases of a call (ALiBi, and T5's from the table the core filled:
 * withT5Table) as masks, appended to its mask layout.
 */
/**
 * More element-wise masks than a kernel takes (MAX_MASKS: masks, a pattern's, ALiBi's and T5's
 * tables count one each): why the call cannot run on the GPU, or null. Such calls had failed
 * inside the GPU path with an internal error, which backend 'auto' did not fall back from.
 */
export function tooManyMasks(masks: number, alibi: Float32Array | boolean, t5: unknown): string | null {
  const n = masks + (alibi === false ? 0 : 1) + (t5 ? 1 : 0);
  return n > MAX_MASKS ? `more than ${MAX_MASKS} element-wise masks at once (here ${n}: masks, ALiBi and T5's bias count one each) are not supported` : null;
}

export function withPositionBiases<L extends { masks: { input: MaskInput; at: Broadcast }[]; queryOffset: number }>(
  layout: L, alibi: Float32Array | boolean, t5Table: Float32Array | null, heads: number, slices: number, Sq: number, Sk: number,
): L {
  const extra = [alibiMask(alibi, heads, slices, Sq, Sk, layout.queryOffset), t5Table && diagonalMask('options.t5', t5Table, heads, slices, Sq, Sk)];
  const masks = extra.filter((x): x is { input: MaskInput; at: Broadcast } => !!x);
  return masks.length ? { ...layout, masks: [...layout.masks, ...masks] } : layout;
}
