// Float64 references for issue 18's variants, from the papers' definitions: T5's buckets (as Hugging
// Face's T5, its float32 logarithm included), Shaw's relative embeddings, Reformer's LSH attention
// (with the core's seeded generator ported, so the rotations are the same), and the Synthesizer's
// score forms.
import type { Tensor } from 'attnlab';

const prod = (s: number[]) => s.reduce((a, b) => a * b, 1);

/** Hugging Face T5Attention._relative_position_bucket for rel = j - i. */
export function t5Bucket(rel: number, bidirectional: boolean, numBuckets: number, maxDistance: number): number {
  let n = numBuckets, bucket = 0;
  if (bidirectional) {
    n = Math.floor(n / 2);
    if (rel > 0) bucket += n;
    rel = Math.abs(rel);
  } else rel = -Math.min(rel, 0);
  const maxExact = Math.floor(n / 2);
  if (rel < maxExact) return bucket + rel;
  const f = Math.fround;  // torch's float32 arithmetic
  const large = Math.trunc(f(f(f(Math.log(f(rel / maxExact))) / f(Math.log(maxDistance / maxExact))) * (n - maxExact)));
  return bucket + Math.min(maxExact + large, n - 1);
}

/** T5's bias [H, Sq, Sk] from weights [H, numBuckets]. */
export function t5Bias(weights: Tensor, Sq: number, Sk: number, bidirectional = true, maxDistance = 128): Tensor {
  const [H, nb] = weights.shape;
  const data = new Float32Array(H * Sq * Sk);
  for (let h = 0; h < H; h++)
    for (let i = 0; i < Sq; i++)
      for (let j = 0; j < Sk; j++) data[(h * Sq + i) * Sk + j] = weights.data[h * nb + t5Bucket(j - i, bidirectional, nb, maxDistance)];
  return { data, shape: [H, Sq, Sk] };
}

function softmax(s: number[], ok: boolean[]): number[] {
  const m = Math.max(...s.filter((_, j) => ok[j]));
  if (!Number.isFinite(m)) return s.map(() => 0);
  const e = s.map((x, j) => (ok[j] ? Math.exp(x - m) : 0));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
}

/**
 * Shaw attention of q [batch, Sq, D], k [batch, Sk, D], v [batch, Sk, Dv] (flat arrays), scores
 * scale q_i . (k_j + aK[clip(j - i)]), outputs sum_j w_ij (v_j + aV[clip(j - i)]); query i at
 * key position i + queryOffset (in the distances and the causal mask).
 */
export function refShaw(q: ArrayLike<number>, k: ArrayLike<number>, v: ArrayLike<number>, batch: number, Sq: number, Sk: number, D: number, Dv: number,
  aK: ArrayLike<number>, aV: ArrayLike<number> | null, kmax: number, o: { causal?: boolean; scale?: number; queryOffset?: number } = {}) {
  const scale = o.scale ?? 1 / Math.sqrt(D);
  const out = new Float64Array(batch * Sq * Dv), weights = new Float64Array(batch * Sq * Sk);
  const at = o.queryOffset ?? 0;  // query i sits at key position i + at
  const rel = (i: number, j: number) => Math.min(Math.max(j - i - at, -kmax), kmax) + kmax;
  for (let b = 0; b < batch; b++)
    for (let i = 0; i < Sq; i++) {
      const s: number[] = [], ok: boolean[] = [];
      for (let j = 0; j < Sk; j++) {
        let x = 0;
        for (let c = 0; c < D; c++) x += q[(b * Sq + i) * D + c] * (k[(b * Sk + j) * D + c] + aK[rel(i, j) * D + c]);
        s.push(scale * x);
        ok.push(!(o.causal && j > i + at));
      }
      const w = softmax(s, ok);
      for (let j = 0; j < Sk; j++) {
        weights[(b * Sq + i) * Sk + j] = w[j];
        for (let c = 0; c < Dv; c++) out[(b * Sq + i) * Dv + c] += w[j] * (v[(b * Sk + j) * Dv + c] + (aV ? aV[rel(i, j) * Dv + c] : 0));
      }
    }
  return { out, weights };
}

const MASK = (1n << 64n) - 1n;

/** The core's Rng (cpp/include/attnlab/random.hpp): splitmix64 and Box-Muller. */
export class Rng {
  #state: bigint;
  constructor(seed: number) { this.#state = BigInt(seed); }
  next(): bigint {
    this.#state = (this.#state + 0x9e3779b97f4a7c15n) & MASK;
    let z = this.#state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
    return z ^ (z >> 31n);
  }
  uniform(): number { return (Number(this.next() >> 11n) + 0.5) * 2 ** -53; }
  normal(): number {
    const u1 = this.uniform(), u2 = this.uniform();
    return Math.sqrt(-2 * Math.log(u1)) * Math.cos(6.283185307179586 * u2);
  }
}

/** Reformer's LSH attention in float64 over qk [..., S, D], v [..., S, Dv]; see lsh_attention.hpp. */
export function refLsh(qk: Tensor, v: Tensor, o: { nBuckets: number; nHashes: number; chunkSize?: number; causal?: boolean; seed?: number }) {
  const [S, D] = qk.shape.slice(-2), Dv = v.shape.at(-1)!, batch = prod(qk.shape.slice(0, -2));
  const H = o.nHashes, half = o.nBuckets / 2, L = o.chunkSize ?? S / o.nBuckets, chunks = S / L, W = chunks > 1 ? 2 * L : L;
  const rng = new Rng(o.seed ?? 0);
  const R = Array.from({ length: H * D * half }, () => Math.fround(rng.normal()));
  const out = new Float64Array(batch * S * Dv), buckets = new Int32Array(batch * H * S), attended = new Int32Array(batch * H * S * W);
  for (let b = 0; b < batch; b++) {
    const x = (j: number, c: number) => qk.data[(b * S + j) * D + c];
    const norm = Array.from({ length: S }, (_, j) => Math.sqrt(Array.from({ length: D }, (_, c) => x(j, c) ** 2).reduce((a, c) => a + c, 0)));
    const lse = new Float64Array(H * S), outs = new Float64Array(H * S * Dv);
    for (let h = 0; h < H; h++) {
      const bucket = Array.from({ length: S }, (_, j) => {
        const y: number[] = [];
        for (let c = 0; c < half; c++) {
          let acc = 0;
          for (let d = 0; d < D; d++) acc += x(j, d) * R[(h * D + d) * half + c];
          y.push(acc);
        }
        const all = [...y, ...y.map((t) => -t)];
        return all.indexOf(Math.max(...all));
      });
      bucket.forEach((t, j) => (buckets[(b * H + h) * S + j] = t));
      const order = Array.from({ length: S }, (_, j) => j).sort((a, c) => bucket[a] - bucket[c] || a - c);
      for (let t = 0; t < S; t++) {
        const i = order[t], c = Math.floor(t / L), prev = (c + chunks - 1) % chunks;
        const keys = [...(chunks > 1 ? order.slice(prev * L, prev * L + L) : []), ...order.slice(c * L, c * L + L)];
        const ok = keys.map((j) => !(o.causal && j > i));
        const others = keys.filter((j, w) => ok[w] && j !== i).length;
        const s = keys.map((j) => {
          if (j === i) return -1e5;
          let dot = 0;
          for (let d = 0; d < D; d++) dot += x(i, d) * x(j, d);
          return dot / norm[j] / Math.sqrt(D);
        });
        const w = softmax(s, ok);
        const m = Math.max(...s.filter((_, u) => ok[u]));
        lse[h * S + i] = m + Math.log(s.reduce((a, y, u) => a + (ok[u] ? Math.exp(y - m) : 0), 0));
        keys.forEach((j, u) => {
          attended[((b * H + h) * S + i) * W + u] = !ok[u] || (j === i && others > 0) ? -1 : j;
          for (let c2 = 0; c2 < Dv; c2++) outs[(h * S + i) * Dv + c2] += w[u] * v.data[(b * S + j) * Dv + c2];
        });
      }
    }
    for (let i = 0; i < S; i++) {
      const m = Math.max(...Array.from({ length: H }, (_, h) => lse[h * S + i]));
      const total = Array.from({ length: H }, (_, h) => Math.exp(lse[h * S + i] - m)).reduce((a, c) => a + c, 0);
      for (let h = 0; h < H; h++)
        for (let c = 0; c < Dv; c++) out[(b * S + i) * Dv + c] += (Math.exp(lse[h * S + i] - m) / total) * outs[(h * S + i) * Dv + c];
    }
  }
  return { out, buckets, attended, W };
}

/** Softmax attention over scores given as score(b, i, j), causal or not: outputs and weights. */
export function refFromScores(v: Tensor, batch: number, S: number, score: (b: number, i: number, j: number) => number, causal = false) {
  const Dv = v.shape.at(-1)!;
  const out = new Float64Array(batch * S * Dv), weights = new Float64Array(batch * S * S);
  for (let b = 0; b < batch; b++)
    for (let i = 0; i < S; i++) {
      const ok = Array.from({ length: S }, (_, j) => !causal || j <= i);
      const w = softmax(Array.from({ length: S }, (_, j) => (ok[j] ? score(b, i, j) : 0)), ok);
      for (let j = 0; j < S; j++) {
        weights[(b * S + i) * S + j] = w[j];
        for (let c = 0; c < Dv; c++) out[(b * S + i) * Dv + c] += w[j] * v.data[(b * S + j) * Dv + c];
      }
    }
  return { out, weights };
}

/** W2 relu(W1 x + b1) + b2 of one token x [D]. */
export function refMlp(x: ArrayLike<number>, m: { W1: Tensor; b1?: Tensor; W2: Tensor; b2?: Tensor }): number[] {
  const [hidden, D] = m.W1.shape, out = m.W2.shape[0];
  const h = Array.from({ length: hidden }, (_, t) => {
    let s = m.b1 ? m.b1.data[t] : 0;
    for (let c = 0; c < D; c++) s += m.W1.data[t * D + c] * x[c];
    return Math.max(0, s);
  });
  return Array.from({ length: out }, (_, o) => h.reduce((s, y, t) => s + y * m.W2.data[o * hidden + t], m.b2 ? m.b2.data[o] : 0));
}
