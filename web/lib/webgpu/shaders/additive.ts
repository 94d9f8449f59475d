// Bahdanau's additive scores s[i, j] = sum_h wv[h] tanh(qp[i, h] + kp[j, h]) over projected queries
// qp [slices, Sq, hidden] and keys kp [slices, Sk, hidden]: 16 x 16 score tiles per workgroup, the
// hidden axis staged through workgroup memory 16 at a time. Sums run over h in order, as the core's.
import { packUniform } from './uniform.js';

const T = 16;

export function additiveShader(): string {
  return /* wgsl */ `
const T: u32 = ${T}u;

struct AdditiveParams { Sq: u32, Sk: u32, hidden: u32, _pad: u32 }
@group(0) @binding(0) var<uniform> P: AdditiveParams;
@group(0) @binding(1) var<storage, read> QP: array<f32>;
@group(0) @binding(2) var<storage, read> KP: array<f32>;
@group(0) @binding(3) var<storage, read> wv: array<f32>;
@group(0) @binding(4) var<storage, read_write> S: array<f32>;
var<workgroup> qTile: array<f32, T * T>;  // [query][h]
var<workgroup> kTile: array<f32, T * T>;  // [key][h]
var<workgroup> wTile: array<f32, T>;

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let bt = wg.z;
  let i = wg.y * T + lid.y;
  let j = wg.x * T + lid.x;
  var acc = 0.0;
  for (var h0 = 0u; h0 < P.hidden; h0 += T) {
    let h = h0 + lid.x;
    let qi = wg.y * T + lid.y;
    let kj = wg.x * T + lid.y;
    var qx = 0.0;
    var kx = 0.0;
    var w = 0.0;
    if (qi < P.Sq && h < P.hidden) { qx = QP[(bt * P.Sq + qi) * P.hidden + h]; }
    if (kj < P.Sk && h < P.hidden) { kx = KP[(bt * P.Sk + kj) * P.hidden + h]; }
    if (h < P.hidden) { w = wv[h]; }
    qTile[lid.y * T + lid.x] = qx;
    kTile[lid.y * T + lid.x] = kx;
    if (lid.y == 0u) { wTile[lid.x] = w; }
    workgroupBarrier();
    let hn = min(T, P.hidden - h0);
    for (var t = 0u; t < hn; t++) {
      // tanh saturates to +-1 in f32 well before 15; the clamp keeps exp-based tanh from overflowing.
      acc += wTile[t] * tanh(clamp(qTile[lid.y * T + t] + kTile[lid.x * T + t], -15.0, 15.0));
    }
    workgroupBarrier();
  }
  if (i < P.Sq && j < P.Sk) { S[(bt * P.Sq + i) * P.Sk + j] = acc; }
}
`;
}

export interface AdditiveShape {
  Sq: number;
  Sk: number;
  hidden: number;
  slices: number;
}

export const additiveParams = (s: AdditiveShape) => packUniform([s.Sq, s.Sk, s.hidden, 0]);

export function additiveWorkgroups(s: AdditiveShape): [number, number, number] {
  return [Math.ceil(s.Sk / T), Math.ceil(s.Sq / T), s.slices];
}
