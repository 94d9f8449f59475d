// Masked softmax over rows of x [rows = slices * Sq, Sk]: one workgroup per row. Each thread folds
// its strided share of the row into a running (max, sum), the workgroup merges those pairs in a
// tree, and a second sweep writes exp(x - max) / sum, or 0 for keys the masks hide.
import { maskWgsl } from './masks.js';
import { packUniform } from './uniform.js';

const WG = 128;

export function softmaxShader(): string {
  return /* wgsl */ `
const WG: u32 = ${WG}u;
const M_INIT: f32 = -3.4028234663852886e38;  // -FLT_MAX, as in flash.ts

struct SoftmaxParams { Sq: u32, Sk: u32, rows: u32, _pad: u32 }
@group(0) @binding(0) var<uniform> P: SoftmaxParams;
${maskWgsl(1, 2, 'P.Sk')}
@group(0) @binding(3) var<storage, read> X: array<f32>;
@group(0) @binding(4) var<storage, read_write> Y: array<f32>;
var<workgroup> redMax: array<f32, WG>;
var<workgroup> redSum: array<f32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lx: u32) {
  let row = wg.y * 65535u + wg.x;
  if (row >= P.rows) { return; }
  let bt = row / P.Sq;
  let i = row % P.Sq;
  let hi = visibleKeys(bt, i);
  let rb = row * P.Sk;
  var m = M_INIT;
  var l = 0.0;
  for (var j = lx; j < hi; j += WG) {
    var x = X[rb + j];
    if (applyMasks(bt, i, j, &x)) {
      let mNew = max(m, x);
      l = l * exp(m - mNew) + exp(x - mNew);
      m = mNew;
    }
  }
  redMax[lx] = m;
  redSum[lx] = l;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lx < stride) {
      let m2 = redMax[lx + stride];
      let mNew = max(m, m2);
      l = l * exp(m - mNew) + redSum[lx + stride] * exp(m2 - mNew);
      m = mNew;
      redMax[lx] = m;
      redSum[lx] = l;
    }
    workgroupBarrier();
  }
  let rowMax = redMax[0];
  let sum = redSum[0];
  // No visible key: sum = 0 and the row is all zeros.
  let inv = select(0.0, 1.0 / sum, sum > 0.0);
  for (var j = lx; j < P.Sk; j += WG) {
    var y = 0.0;
    if (j < hi) {
      var x = X[rb + j];
      if (applyMasks(bt, i, j, &x)) { y = exp(x - rowMax) * inv; }
    }
    Y[rb + j] = y;
  }
}
`;
}

export interface SoftmaxShape {
  Sq: number;
  Sk: number;
  rows: number;
}

export const softmaxParams = (s: SoftmaxShape) => packUniform([s.Sq, s.Sk, s.rows, 0]);

export function softmaxWorkgroups(s: SoftmaxShape): [number, number, number] {
  return [Math.min(s.rows, 65535), Math.ceil(s.rows / 65535), 1];
}
