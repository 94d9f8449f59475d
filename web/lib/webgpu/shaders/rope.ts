// Rotary position embedding of x [outer, S, inner, D] (cpp/src/rope.cpp): pair c of the vector at
// position s turns by (offset + s) * base^(-2c / D). One thread per pair. The cos/sin tables come
// from the CPU, computed in double as the core does: angles reach offset + S radians, where the
// GPU's f32 sin and cos are far too coarse. The first index whose rotation passed float32 (a
// component near FLT_MAX lengthened by the turn) goes to `firstBad` (atomicMin; 0xffffffff: none),
// which the op reads back to raise WebAssembly's Error (cpp/src/rope.cpp).

import type { RopeArgs } from '../../rope.js';
import { packUniform } from './uniform.js';

const WG = 256;

export function ropeShader(): string {
  return /* wgsl */ `
struct RopeParams {
  S: u32, inner: u32, half: u32, pairs: u32,
  step: u32, partner: u32, _pad0: u32, _pad1: u32,
}
@group(0) @binding(0) var<uniform> P: RopeParams;
@group(0) @binding(1) var<storage, read> table: array<f32>;  // cos [S, half], then sin [S, half]
@group(0) @binding(2) var<storage, read> X: array<f32>;
@group(0) @binding(3) var<storage, read_write> Out: array<f32>;
@group(0) @binding(4) var<storage, read_write> firstBad: atomic<u32>;

// By bits: WGSL lets compilers assume floats are finite.
fn overflowed(x: f32) -> bool { return (bitcast<u32>(x) & 0x7f800000u) == 0x7f800000u; }

@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = gid.y * nwg.x * ${WG}u + gid.x;
  if (idx >= P.pairs) { return; }
  let c = idx % P.half;
  let vec = idx / P.half;  // (o * S + s) * inner + n
  let s = (vec / P.inner) % P.S;
  let c0 = vec * 2u * P.half + c * P.step;
  let c1 = c0 + P.partner;
  let cs = table[s * P.half + c];
  let sn = table[(P.S + s) * P.half + c];
  let a = X[c0];
  let b = X[c1];
  let r0 = a * cs - b * sn;
  let r1 = a * sn + b * cs;
  Out[c0] = r0;
  Out[c1] = r1;
  // Only a finite pair's turn counts: a projection that overflowed before is another error.
  if (!overflowed(a) && !overflowed(b)) {
    if (overflowed(r0)) { atomicMin(&firstBad, c0); } else if (overflowed(r1)) { atomicMin(&firstBad, c1); }
  }
}
`;
}

/** The cos and sin tables of positions offset .. offset + S - 1 for feature size D. */
export function ropeTable(r: RopeArgs, S: number, D: number): Float32Array {
  const half = D / 2;
  const t = new Float32Array(2 * S * half);
  for (let s = 0; s < S; s++) {
    for (let c = 0; c < half; c++) {
      const angle = (r.offset + s) * Math.pow(r.base, (-2 * c) / D);
      t[s * half + c] = Math.cos(angle);
      t[(S + s) * half + c] = Math.sin(angle);
    }
  }
  return t;
}

export interface RopeShape {
  outer: number;
  S: number;
  inner: number;
  D: number;
  interleaved: boolean;
}

const pairs = (s: RopeShape) => (s.outer * s.S * s.inner * s.D) / 2;

export const ropeParams = (s: RopeShape) =>
  packUniform([s.S, s.inner, s.D / 2, pairs(s), s.interleaved ? 2 : 1, s.interleaved ? 1 : s.D / 2, 0, 0]);

export function ropeWorkgroups(s: RopeShape): [number, number, number] {
  const groups = Math.ceil(pairs(s) / WG);
  return [Math.min(groups, 65535), Math.ceil(groups / 65535), 1];
}
