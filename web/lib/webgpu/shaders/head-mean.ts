// Attention weights averaged over heads, [B, H, L*S] -> [B, L*S], summing heads in order as the
// WebAssembly core does (so the result does not depend on scheduling).
import { f32, packUniform } from './uniform.js';

const WG = 256;

export function headMeanShader(): string {
  return /* wgsl */ `
struct MeanParams { heads: u32, inner: u32, total: u32, invHeads: f32 }
@group(0) @binding(0) var<uniform> P: MeanParams;
@group(0) @binding(1) var<storage, read> W: array<f32>;
@group(0) @binding(2) var<storage, read_write> Out: array<f32>;

@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = gid.y * nwg.x * ${WG}u + gid.x;
  if (idx >= P.total) { return; }
  let b = idx / P.inner;
  let x = idx % P.inner;
  var acc = 0.0;
  for (var h = 0u; h < P.heads; h++) { acc += W[(b * P.heads + h) * P.inner + x]; }
  Out[idx] = acc * P.invHeads;
}
`;
}

export interface HeadMeanShape {
  heads: number;
  inner: number;
  total: number;
}

export const headMeanParams = (s: HeadMeanShape) => packUniform([s.heads, s.inner, s.total, f32(Math.fround(1 / s.heads))]);

export function headMeanWorkgroups(s: HeadMeanShape): [number, number, number] {
  const groups = Math.ceil(s.total / WG);
  return [Math.min(groups, 65535), Math.ceil(groups / 65535), 1];
}
