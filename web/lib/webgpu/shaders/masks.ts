// The masks of a call as the kernels read them: one u32 storage buffer holding, per mask, a table
// of slice offsets (from mask-layout.ts) and the mask's values, plus a uniform block of strides.
// Blocked entries keep the bit pattern of -Infinity and are recognised by bits, never by float
// arithmetic: WGSL lets compilers assume infinities away.
import type { MaskLayout } from '../../mask-layout.js';

/** Element-wise masks a kernel can take: MHA's key padding mask, its attn_mask and ALiBi. */
export const MAX_MASKS = 3;

const NEG_INF_BITS = 0xff800000;

/**
 * WGSL declarations: `MaskParams` (a uniform struct), `visibleKeys(b, i)` (the keys [0, hi) that
 * causal and validLens leave to row i of slice b) and `applyMasks(b, i, j, &s)` (adds the
 * additive masks to score s; false when a mask blocks key j). The bindings place the two resources
 * in group 0; `Sk` is the WGSL expression for the number of keys.
 */
export function maskWgsl(paramsBinding: number, dataBinding: number, Sk: string): string {
  return /* wgsl */ `
struct MaskParams {
  count: u32,      // element-wise masks in use, at most ${MAX_MASKS}
  causal: u32,
  hasValidLens: u32,
  validLensTable: u32,
  validLensRowStride: u32,
  queryOffset: u32,  // causal: row i sees keys j <= i + queryOffset
  _pad1: u32, _pad2: u32,
  // per mask: x = index of its slice-offset table in maskData, y = row stride, z = column stride
  masks: array<vec4<u32>, ${MAX_MASKS}>,
}
@group(0) @binding(${paramsBinding}) var<uniform> MP: MaskParams;
@group(0) @binding(${dataBinding}) var<storage, read> maskData: array<u32>;

const NEG_INF_BITS: u32 = ${NEG_INF_BITS}u;

fn visibleKeys(b: u32, i: u32) -> u32 {
  var hi = ${Sk};
  if (MP.causal != 0u) { hi = min(hi, i + MP.queryOffset + 1u); }
  if (MP.hasValidLens != 0u) {
    hi = min(hi, maskData[maskData[MP.validLensTable + b] + i * MP.validLensRowStride]);
  }
  return hi;
}

fn applyMasks(b: u32, i: u32, j: u32, s: ptr<function, f32>) -> bool {
  for (var t = 0u; t < MP.count; t++) {
    let m = MP.masks[t];
    let bits = maskData[maskData[m.x + b] + i * m.y + j * m.z];
    if (bits == NEG_INF_BITS) { return false; }
    *s += bitcast<f32>(bits);
  }
  return true;
}
`;
}

/** What `maskWgsl`'s two bindings hold for one call. */
export interface PackedMasks {
  params: Uint32Array;
  data: Uint32Array;
}

/**
 * Packs a checked mask layout. Boolean masks become 0 (keep) or -Infinity (block) per their
 * convention; validLens become a mask-like table with one value per row or per slice.
 */
export function packMasks(layout: MaskLayout): PackedMasks {
  const params = new Uint32Array(8 + 4 * MAX_MASKS);
  if (layout.masks.length > MAX_MASKS) throw new Error(`internal: at most ${MAX_MASKS} element-wise masks, got ${layout.masks.length}`);
  const batch = layout.masks[0]?.at.batchOffset.length ?? layout.validLens?.at.batchOffset.length ?? 0;
  let words = 1;  // never empty: a binding needs a non-zero size
  for (const m of layout.masks) words += batch + m.input.checked.mask.data.length;
  if (layout.validLens) words += batch + layout.validLens.data.length;
  const data = new Uint32Array(words);
  const asFloat = new Float32Array(data.buffer);
  let at = 1;
  // A table of `batch` absolute offsets, then the values it points into.
  const table = (offsets: number[], values: number) => {
    const start = at;
    for (let b = 0; b < offsets.length; b++) data[start + b] = start + offsets.length + offsets[b];
    at += offsets.length + values;
    return start;
  };
  layout.masks.forEach((m, t) => {
    const start = table(m.at.batchOffset, m.input.checked.mask.data.length);
    const base = start + m.at.batchOffset.length;
    const c = m.input.checked;
    if (c.kind === 'bool') {
      const blockedWhen = m.input.trueBlocks;
      for (let e = 0; e < c.mask.data.length; e++) data[base + e] = (c.mask.data[e] !== 0) === blockedWhen ? NEG_INF_BITS : 0;
    } else {
      asFloat.set(c.mask.data, base);
    }
    params.set([start, m.at.rowStride, m.at.colStride, 0], 8 + 4 * t);
  });
  params[0] = layout.masks.length;
  params[1] = layout.causal ? 1 : 0;
  // Past 2^31 every key is visible anyway (Sk is below that): capped, i + queryOffset + 1 cannot
  // wrap in u32.
  params[5] = Math.min(layout.queryOffset, 2 ** 31);
  if (layout.validLens) {
    const { data: v, at: vAt } = layout.validLens;
    const start = table(vAt.batchOffset, v.length);
    data.set(v, start + vAt.batchOffset.length);
    params[2] = 1;
    params[3] = start;
    params[4] = vAt.rowStride;
  }
  return { params, data };
}
