// Float64 references for the efficient and positional variants, written from the papers'
// definitions and independent of the library (BigBird's random blocks excepted: they are read
// from the library's pattern and checked on their own).
import type { BoolTensor, Tensor } from 'attnlab';
import type { Ref } from './reference.js';

const prod = (s: number[]) => s.reduce((a, b) => a * b, 1);

/** A pattern [Sq, Sk] from a rule allowed(i, j). */
export function patternFrom(Sq: number, Sk: number, allowed: (i: number, j: number) => boolean): BoolTensor {
  const data = new Uint8Array(Sq * Sk);
  for (let i = 0; i < Sq; i++) for (let j = 0; j < Sk; j++) data[i * Sk + j] = allowed(i, j) ? 1 : 0;
  return { data, shape: [Sq, Sk] };
}

/** Query i sees keys j with |i - j| <= w. */
export const localRule = (w: number) => (i: number, j: number) => Math.abs(i - j) <= w;

/** Local window, plus rows and columns of the global tokens. */
export const longformerRule = (w: number, global: number[]) => (i: number, j: number) =>
  Math.abs(i - j) <= w || global.includes(i) || global.includes(j);

/** A bool pattern and an additive bias as one additive mask (-Infinity where the pattern is 0). */
export function combine(pattern: BoolTensor, bias?: { data: ArrayLike<number>; shape: number[] }): Tensor {
  const shape = bias ? bias.shape : pattern.shape;
  const [Sq, Sk] = pattern.shape;
  const data = new Float32Array(prod(shape));
  for (let t = 0; t < data.length; t++) {
    data[t] = pattern.data[t % (Sq * Sk)] ? (bias ? bias.data[t] : 0) : -Infinity;
  }
  return { data, shape };
}

/** Press et al.'s get_slopes(n). */
export function alibiSlopes(n: number): number[] {
  const pow2 = (m: number) => Array.from({ length: m }, (_, h) => 2 ** (-8 * (h + 1) / m));
  if (Number.isInteger(Math.log2(n))) return pow2(n);
  const p = 2 ** Math.floor(Math.log2(n));
  return [...pow2(p), ...alibiSlopes(2 * p).filter((_, h) => h % 2 === 0).slice(0, n - p)];
}

/** The ALiBi bias [H, Sq, Sk]: -slope[h] |i - j|. */
export function alibiBias(slopes: ArrayLike<number>, Sq: number, Sk: number): { data: Float64Array; shape: number[] } {
  const H = slopes.length;
  const data = new Float64Array(H * Sq * Sk);
  for (let h = 0; h < H; h++)
    for (let i = 0; i < Sq; i++) for (let j = 0; j < Sk; j++) data[(h * Sq + i) * Sk + j] = -slopes[h] * Math.abs(i - j);
  return { data, shape: [H, Sq, Sk] };
}

/** RoPE of x [outer, S, inner, D] (a copy): pair (c0, c1) at row s turns by (offset + s) base^(-2c/D). */
export function refRope(x: ArrayLike<number>, outer: number, S: number, inner: number, D: number,
  o: { base?: number; offset?: number; pairs?: 'interleaved' | 'halves' } = {}): Float64Array {
  const base = o.base ?? 10000, offset = o.offset ?? 0, interleaved = (o.pairs ?? 'interleaved') === 'interleaved';
  const y = Float64Array.from(x);
  for (let r = 0; r < outer; r++)
    for (let s = 0; s < S; s++)
      for (let n = 0; n < inner; n++)
        for (let c = 0; c < D / 2; c++) {
          const angle = (offset + s) * base ** (-2 * c / D);
          const at = ((r * S + s) * inner + n) * D;
          const c0 = interleaved ? at + 2 * c : at + c, c1 = interleaved ? c0 + 1 : c0 + D / 2;
          const a = y[c0], b = y[c1];
          y[c0] = a * Math.cos(angle) - b * Math.sin(angle);
          y[c1] = a * Math.sin(angle) + b * Math.cos(angle);
        }
  return y;
}

/** Float32 tensor from float64 values (inputs for the dense reference). */
export const f32 = (data: ArrayLike<number>, shape: number[]): Tensor => ({ data: Float32Array.from(data), shape });

/** Kernelised attention sum_j phi(q_i).phi(k_j) v_j / sum_j phi(q_i).phi(k_j), j <= i when causal. */
export function refKernelAttention(q: Tensor, k: Tensor, v: Tensor, phi: (x: ArrayLike<number>) => number[], causal: boolean): Ref {
  const lead = q.shape.slice(0, -2);
  const [Sq, D] = q.shape.slice(-2);
  const Sk = k.shape.at(-2)!, Dv = v.shape.at(-1)!;
  const out = new Float64Array(prod(lead) * Sq * Dv);
  for (let b = 0; b < prod(lead); b++) {
    const fk = Array.from({ length: Sk }, (_, j) => phi(k.data.subarray((b * Sk + j) * D, (b * Sk + j + 1) * D)));
    for (let i = 0; i < Sq; i++) {
      const fq = phi(q.data.subarray((b * Sq + i) * D, (b * Sq + i + 1) * D));
      let den = 0;
      for (let j = 0; j < Sk && (!causal || j <= i); j++) {
        const w = fq.reduce((acc, x, c) => acc + x * fk[j][c], 0);
        den += w;
        for (let c = 0; c < Dv; c++) out[(b * Sq + i) * Dv + c] += w * v.data[(b * Sk + j) * Dv + c];
      }
      for (let c = 0; c < Dv; c++) out[(b * Sq + i) * Dv + c] /= den;
    }
  }
  return { data: out, shape: [...lead, Sq, Dv] };
}

export const eluPlusOne = (x: ArrayLike<number>) => Array.from(x, (t) => (t > 0 ? t + 1 : Math.exp(t)));

/** Linformer: softmax(q (E k)^T / sqrt(D)) (F v). */
export function refLinformer(q: Tensor, k: Tensor, v: Tensor, E: Tensor, F: Tensor): Ref {
  const lead = q.shape.slice(0, -2);
  const [Sq, D] = q.shape.slice(-2);
  const Sk = k.shape.at(-2)!, Dv = v.shape.at(-1)!, rank = E.shape[0];
  const out = new Float64Array(prod(lead) * Sq * Dv);
  for (let b = 0; b < prod(lead); b++) {
    const kp = new Float64Array(rank * D), vp = new Float64Array(rank * Dv);
    for (let r = 0; r < rank; r++)
      for (let j = 0; j < Sk; j++) {
        for (let c = 0; c < D; c++) kp[r * D + c] += E.data[r * Sk + j] * k.data[(b * Sk + j) * D + c];
        for (let c = 0; c < Dv; c++) vp[r * Dv + c] += F.data[r * Sk + j] * v.data[(b * Sk + j) * Dv + c];
      }
    for (let i = 0; i < Sq; i++) {
      const s = Array.from({ length: rank }, (_, r) => {
        let d = 0;
        for (let c = 0; c < D; c++) d += q.data[(b * Sq + i) * D + c] * kp[r * D + c];
        return d / Math.sqrt(D);
      });
      const m = Math.max(...s);
      const e = s.map((x) => Math.exp(x - m));
      const sum = e.reduce((a, x) => a + x, 0);
      for (let r = 0; r < rank; r++)
        for (let c = 0; c < Dv; c++) out[(b * Sq + i) * Dv + c] += (e[r] / sum) * vp[r * Dv + c];
    }
  }
  return { data: out, shape: [...lead, Sq, Dv] };
}
