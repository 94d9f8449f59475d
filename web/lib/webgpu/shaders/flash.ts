// Fused attention, flash-attention style: each workgroup takes 64 query rows of one slice and walks
// the keys in tiles staged through workgroup memory, keeping a running max, sum and output per row
// (online softmax), so the Sq x Sk scores never reach GPU memory. Tiles past every row's last
// visible key (causal's upper triangle, validLens) are never loaded.
import { maskWgsl } from './masks.js';
import { f32, packUniform, sliceBaseWgsl, viewFields, type View } from './uniform.js';

/** Query rows per workgroup, one per thread. */
export const FLASH_ROWS = 64;
/** Largest head size the fused kernel takes: q and the output row live in registers. */
export const FLASH_MAX_DIM = 128;
const MAX_KEY_TILE = 32;

/** Keys per tile: the largest power of two whose K and V tiles (vec4-padded) fit the workgroup memory. */
export function flashKeyTile(D: number, Dv: number, workgroupBytes: number): number {
  const rowBytes = (Math.ceil(D / 4) + Math.ceil(Dv / 4)) * 16;
  let bc = MAX_KEY_TILE;
  while (bc > 1 && bc * rowBytes + 16 > workgroupBytes) bc /= 2;
  return bc;
}

/** `n` lines of generated WGSL, one per vec4 lane group. */
const unroll = (n: number, line: (c: number) => string) => Array.from({ length: n }, (_, c) => line(c)).join('\n');

/**
 * The kernel for head sizes D (queries, keys) and Dv (values): one pipeline per shape class. A row
 * of q and of the output accumulator are vec4 registers (q0.., a0..), written out unrolled: GPUs
 * (and SwiftShader) keep dynamically indexed private arrays in slow memory.
 */
export function flashShader(D: number, Dv: number, keyTile: number): string {
  const D4 = Math.ceil(D / 4), DV4 = Math.ceil(Dv / 4);
  return /* wgsl */ `
const D: u32 = ${D}u;
const DV: u32 = ${Dv}u;
const D4: u32 = ${D4}u;
const DV4: u32 = ${DV4}u;
const BR: u32 = ${FLASH_ROWS}u;
const BC: u32 = ${keyTile}u;
// -FLT_MAX: at or below any score, yet finite. A row whose every key sits at -FLT_MAX (Hugging
// Face's mask value) gets equal weights, as on WebAssembly; -3.0e38 left such rows all zero.
const M_INIT: f32 = -3.4028234663852886e38;

struct FlashParams {
  Sq: u32, Sk: u32, heads: u32, slices: u32,
  scale: f32, _pad0: u32, _pad1: u32, _pad2: u32,
  q: vec4<u32>, k: vec4<u32>, v: vec4<u32>, o: vec4<u32>,
}
@group(0) @binding(0) var<uniform> P: FlashParams;
${maskWgsl(1, 2, 'P.Sk')}
@group(0) @binding(3) var<storage, read> Q: array<f32>;
@group(0) @binding(4) var<storage, read> K: array<f32>;
@group(0) @binding(5) var<storage, read> V: array<f32>;
@group(0) @binding(6) var<storage, read_write> O: array<f32>;
${sliceBaseWgsl('P.heads')}
var<workgroup> kTile: array<vec4<f32>, BC * D4>;
var<workgroup> vTile: array<vec4<f32>, BC * DV4>;
var<workgroup> lastKeyAtomic: atomic<u32>;
var<workgroup> lastKey: u32;

// Elements c .. c+3 of the row starting at index at; zero past the row end (D or Dv).
fn loadQ(at: u32, c: u32) -> vec4<f32> {
  var r = vec4<f32>();
  for (var e = 0u; e < 4u; e++) { if (c + e < D) { r[e] = Q[at + c + e]; } }
  return r;
}
fn loadK(at: u32, c: u32) -> vec4<f32> {
  var r = vec4<f32>();
  for (var e = 0u; e < 4u; e++) { if (c + e < D) { r[e] = K[at + c + e]; } }
  return r;
}
fn loadV(at: u32, c: u32) -> vec4<f32> {
  var r = vec4<f32>();
  for (var e = 0u; e < 4u; e++) { if (c + e < DV) { r[e] = V[at + c + e]; } }
  return r;
}

@compute @workgroup_size(BR)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lx: u32) {
  let bt = wg.z * 65535u + wg.y;
  if (bt >= P.slices) { return; }
  let i = wg.x * BR + lx;
  let live = i < P.Sq;
  var hi = 0u;
  if (live) { hi = visibleKeys(bt, i); }
  atomicMax(&lastKeyAtomic, hi);
  workgroupBarrier();
  if (lx == 0u) { lastKey = atomicLoad(&lastKeyAtomic); }
  let end = workgroupUniformLoad(&lastKey);

  let qb = sliceBase(P.q, bt) + min(i, P.Sq - 1u) * P.q.w;
${unroll(D4, (c) => `  let q${c} = loadQ(qb, ${4 * c}u);`)}
${unroll(DV4, (c) => `  var a${c} = vec4<f32>();`)}
  var m = M_INIT;
  var l = 0.0;
  let kb = sliceBase(P.k, bt);
  let vb = sliceBase(P.v, bt);
  for (var j0 = 0u; j0 < end; j0 += BC) {
    let n = min(BC, end - j0);
    for (var t = lx; t < BC * D4; t += BR) {
      if (t / D4 < n) { kTile[t] = loadK(kb + (j0 + t / D4) * P.k.w, 4u * (t % D4)); }
    }
    for (var t = lx; t < BC * DV4; t += BR) {
      if (t / DV4 < n) { vTile[t] = loadV(vb + (j0 + t / DV4) * P.v.w, 4u * (t % DV4)); }
    }
    workgroupBarrier();
    // Online softmax, key by key: the accumulator is rescaled only when a new maximum appears.
    let jn = select(0u, min(BC, hi - j0), live && j0 < hi);
    for (var jj = 0u; jj < jn; jj++) {
      let kt = jj * D4;
      var x = P.scale * (${Array.from({ length: D4 }, (_, c) => `dot(q${c}, kTile[kt + ${c}u])`).join(' + ')});
      if (applyMasks(bt, i, j0 + jj, &x)) {
        var p = 1.0;
        if (x > m) {
          let correction = exp(m - x);
          l *= correction;
${unroll(DV4, (c) => `          a${c} *= correction;`)}
          m = x;
        } else {
          p = exp(x - m);
        }
        l += p;
        let vt = jj * DV4;
${unroll(DV4, (c) => `        a${c} += p * vTile[vt + ${c}u];`)}
      }
    }
    workgroupBarrier();
  }
  if (live) {
    // A row that sees no key has l = 0: zero output, as the WebAssembly core gives.
    let inv = select(0.0, 1.0 / l, l > 0.0);
    let ob = sliceBase(P.o, bt) + i * P.o.w;
${unroll(Dv, (c) => `    O[ob + ${c}u] = a${c >> 2}[${c & 3}] * inv;`)}
  }
}
`;
}

export interface FlashShape {
  Sq: number;
  Sk: number;
  slices: number;
  heads: number;
  scale: number;
  q: View;
  k: View;
  v: View;
  o: View;
}

export function flashParams(s: FlashShape): Uint32Array {
  return packUniform([
    s.Sq, s.Sk, s.heads, s.slices, f32(s.scale), 0, 0, 0,
    ...viewFields(s.q), ...viewFields(s.k), ...viewFields(s.v), ...viewFields(s.o),
  ]);
}

export function flashWorkgroups(s: FlashShape): [number, number, number] {
  return [Math.ceil(s.Sq / FLASH_ROWS), Math.min(s.slices, 65535), Math.ceil(s.slices / 65535)];
}
