// Batched tiled matmul C = alpha * A B (+ bias): 64 x 64 output tiles per workgroup of 16 x 16
// threads, each thread owning a 4 x 4 block strided by 16 (conflict-free shared-memory reads and
// coalesced stores); A and B pass through workgroup memory in 16-deep slabs. Batches and heads are
// strided views, so multi-head attention reads Q, K, V and writes heads in place, without transposes.
import { packUniform, sliceBaseWgsl, viewFields, f32, type View } from './uniform.js';

export const MATMUL_TILE = 64;
const TK = 16;

/**
 * `transB`: B is read as B(k, j) = b[k * 1 + j * bCol] (a transposed, k-contiguous operand such as
 * K in Q K^T or a PyTorch Linear weight) rather than j-contiguous; it only picks the order in which
 * threads load B, so that neighbouring threads read neighbouring addresses.
 */
export function matmulShader(transB: boolean): string {
  return /* wgsl */ `
const TM: u32 = ${MATMUL_TILE}u;
const TN: u32 = ${MATMUL_TILE}u;
const TK: u32 = ${TK}u;
const TRANS_B: bool = ${transB};

struct MatmulParams {
  M: u32, N: u32, K: u32, heads: u32,
  alpha: f32, hasBias: u32, biasOffset: u32, bCol: u32,
  a: vec4<u32>,  // A(i, k) = A[sliceBase(a) + i * a.w + k]
  b: vec4<u32>,  // B(k, j) = B[sliceBase(b) + k * b.w + j * bCol]
  c: vec4<u32>,  // C(i, j) = C[sliceBase(c) + i * c.w + j]
}
@group(0) @binding(0) var<uniform> P: MatmulParams;
@group(0) @binding(1) var<storage, read> A: array<f32>;
@group(0) @binding(2) var<storage, read> B: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> C: array<f32>;
${sliceBaseWgsl('P.heads')}
var<workgroup> As: array<f32, TK * TM>;  // [k][row]
var<workgroup> Bs: array<f32, TK * TN>;  // [k][col]

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) lx: u32) {
  let bt = wg.z;
  let row0 = wg.y * TM;
  let col0 = wg.x * TN;
  let ab = sliceBase(P.a, bt);
  let bb = sliceBase(P.b, bt);
  // Rows lid.y + 16 r (acc<r>) by columns lid.x + 16 c (lane c): conflict-free shared reads.
  var acc0 = vec4<f32>();
  var acc1 = vec4<f32>();
  var acc2 = vec4<f32>();
  var acc3 = vec4<f32>();
  for (var k0 = 0u; k0 < P.K; k0 += TK) {
    for (var t = lx; t < TM * TK; t += 256u) {
      let r = t / TK;
      let kk = t % TK;
      var x = 0.0;
      if (row0 + r < P.M && k0 + kk < P.K) { x = A[ab + (row0 + r) * P.a.w + k0 + kk]; }
      As[kk * TM + r] = x;
    }
    for (var t = lx; t < TK * TN; t += 256u) {
      var kk = t / TN;
      var cc = t % TN;
      if (TRANS_B) { kk = t % TK; cc = t / TK; }
      var x = 0.0;
      if (k0 + kk < P.K && col0 + cc < P.N) { x = B[bb + (k0 + kk) * P.b.w + (col0 + cc) * P.bCol]; }
      Bs[kk * TN + cc] = x;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < TK; kk++) {
      let b = vec4<f32>(Bs[kk * TN + lid.x], Bs[kk * TN + lid.x + 16u], Bs[kk * TN + lid.x + 32u], Bs[kk * TN + lid.x + 48u]);
      acc0 += As[kk * TM + lid.y] * b;
      acc1 += As[kk * TM + lid.y + 16u] * b;
      acc2 += As[kk * TM + lid.y + 32u] * b;
      acc3 += As[kk * TM + lid.y + 48u] * b;
    }
    workgroupBarrier();
  }
  let cb = sliceBase(P.c, bt);
  store(cb, row0 + lid.y, col0 + lid.x, acc0);
  store(cb, row0 + lid.y + 16u, col0 + lid.x, acc1);
  store(cb, row0 + lid.y + 32u, col0 + lid.x, acc2);
  store(cb, row0 + lid.y + 48u, col0 + lid.x, acc3);
}

// Row i of the thread's block: columns j, j + 16, j + 32, j + 48.
fn store(cb: u32, i: u32, j: u32, acc: vec4<f32>) {
  if (i >= P.M) { return; }
  for (var c = 0u; c < 4u; c++) {
    let jc = j + 16u * c;
    if (jc < P.N) {
      var y = P.alpha * acc[c];
      if (P.hasBias != 0u) { y += bias[P.biasOffset + jc]; }
      C[cb + i * P.c.w + jc] = y;
    }
  }
}
`;
}

export interface MatmulShape {
  M: number;
  N: number;
  K: number;
  /** Slices: batch * heads views of each operand. */
  slices: number;
  heads: number;
  alpha: number;
  /** Offset of the bias in its buffer; null: no bias. */
  biasOffset: number | null;
  a: View;
  /** B's view; its rowStride is the stride of k, bCol that of j. */
  b: View;
  bCol: number;
  c: View;
}

export function matmulParams(s: MatmulShape): Uint32Array {
  return packUniform([
    s.M, s.N, s.K, s.heads,
    f32(s.alpha), s.biasOffset === null ? 0 : 1, s.biasOffset ?? 0, s.bCol,
    ...viewFields(s.a), ...viewFields(s.b), ...viewFields(s.c),
  ]);
}

export function matmulWorkgroups(s: MatmulShape): [number, number, number] {
  return [Math.ceil(s.N / MATMUL_TILE), Math.ceil(s.M / MATMUL_TILE), s.slices];
}
