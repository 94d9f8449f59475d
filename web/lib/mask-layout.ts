// Where each mask element lives for score (b, i, j) of scores shaped [lead..., Sq, Sk]: numpy
// broadcasting of masks and d2l's valid lengths. These checks word the errors users see, for every
// backend, before anything runs (the C++ core repeats the rules in cpp/src/shape.cpp and mask.cpp
// only as assertions, in its own words); the WebGPU backend also uploads these layouts as its mask
// index tables.
import type { MaskInput } from './masks.js';
import { numel, shapeString } from './tensor.js';

/** Element (b, i, j) of a broadcast operand is at batchOffset[b] + i * rowStride + j * colStride. */
export interface Broadcast {
  batchOffset: number[];
  rowStride: number;
  colStride: number;
}

/** Right-aligns `operand` against `target` = [lead..., rows, cols]; each dimension 1 or equal. */
export function broadcastTo(fn: string, name: string, operand: readonly number[], target: readonly number[]): Broadcast {
  const n = target.length, m = operand.length;
  const fail = () => new Error(`${fn}: ${name}: expected a shape that broadcasts to ${shapeString(target)}, got ${shapeString(operand)}`);
  if (n < 2 || m > n) throw fail();
  const stride = new Array<number>(n).fill(0);
  let s = 1;
  for (let t = n - 1; t >= n - m; t--) {
    const d = operand[t + m - n];
    if (d !== target[t] && d !== 1) throw fail();
    stride[t] = d === 1 ? 0 : s;
    s *= d;
  }
  const lead = target.slice(0, -2);
  // No query rows, no mask element is read: leading dimensions of 2^40 need no table.
  const batchOffset = new Array<number>(target[n - 2] === 0 ? 0 : numel(lead));
  for (let idx = 0; idx < batchOffset.length; idx++) {
    let rem = idx, off = 0;
    for (let t = lead.length - 1; t >= 0; t--) {
      off += (rem % lead[t]) * stride[t];
      rem = Math.floor(rem / lead[t]);
    }
    batchOffset[idx] = off;
  }
  return { batchOffset, rowStride: stride[n - 2], colStride: stride[n - 1] };
}

/**
 * validLens of length prod(lead[0..j)) for some j (one per leading prefix, shared by the other
 * dimensions and all rows) or prod(lead) * Sq (one per query row); values in [0, Sk]. The valid
 * length of row i of slice b is data[batchOffset[b] + i * rowStride].
 */
export function validLensLayout(fn: string, name: string, v: Int32Array, lead: readonly number[], Sq: number, Sk: number): Omit<Broadcast, 'colStride'> {
  const batch = numel(lead);
  const rows = Sq === 0 ? 0 : batch;  // no query rows: no table (as broadcastTo)
  let layout: Omit<Broadcast, 'colStride'>;
  if (v.length === batch * Sq && Sq !== 1) {
    layout = { rowStride: 1, batchOffset: Array.from({ length: rows }, (_, b) => b * Sq) };
  } else {
    let prefix = 1, j = 0;
    while (prefix !== v.length && j < lead.length) prefix *= lead[j++];
    if (prefix !== v.length) {
      const allowed: number[] = [];
      for (let t = 0, p = 1; t <= lead.length; t++) {
        allowed.push(p);
        if (t < lead.length) p *= lead[t];
      }
      throw new Error(`${fn}: ${name}: expected length ${allowed.join(', ')}, or ${batch * Sq} (one per query row), got ${v.length}`);
    }
    const per = batch / prefix;
    layout = { rowStride: 0, batchOffset: Array.from({ length: rows }, (_, b) => Math.floor(b / per)) };
  }
  for (let i = 0; i < v.length; i++) {
    if (v[i] < 0 || v[i] > Sk) {
      throw new Error(`${fn}: ${name}: expected values in [0, ${Sk}] (the number of keys), got ${v[i]} at index ${i}`);
    }
  }
  return layout;
}

/** The masks of one call, checked against the scores' shape, with their layouts. */
export interface MaskLayout {
  causal: boolean;
  /** Key position of query row 0: causal rows see keys j <= i + queryOffset. */
  queryOffset: number;
  /** In the order the core applies them: boolean masks first, then additive ones. */
  masks: { input: MaskInput; at: Broadcast }[];
  validLens?: { data: Int32Array; at: Omit<Broadcast, 'colStride'> };
}

/** Checks masks and validLens against scores of shape `target` = [lead..., Sq, Sk]. */
export function maskLayout(fn: string, target: readonly number[], causal: boolean, queryOffset: number, masks: MaskInput[], validLens?: Int32Array): MaskLayout {
  const ordered = [...masks.filter((m) => m.checked.kind === 'bool'), ...masks.filter((m) => m.checked.kind === 'float')];
  const layout: MaskLayout = {
    causal,
    queryOffset,
    masks: ordered.map((input) => ({ input, at: broadcastTo(fn, input.name, input.shape ?? input.checked.mask.shape, target) })),
  };
  if (validLens) {
    const lead = target.slice(0, -2);
    layout.validLens = { data: validLens, at: validLensLayout(fn, 'options.validLens', validLens, lead, target.at(-2)!, target.at(-1)!) };
  }
  return layout;
}
