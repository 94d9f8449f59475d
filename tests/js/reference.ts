// Float64 reference implementations: the textbook formulas, written for clarity, not speed.
import type { BoolTensor, Tensor } from 'attnlab';

export type Ref = { data: Float64Array; shape: number[] };

/** Seeded PRNG (mulberry32) so every test run sees the same inputs. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randn(shape: number[], seed: number, scale = 1): Tensor {
  const r = rng(seed);
  const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
  for (let i = 0; i < data.length; i++) data[i] = (r() * 2 - 1) * scale;
  return { data, shape };
}

export function randBool(shape: number[], seed: number, pTrue: number): BoolTensor {
  const r = rng(seed);
  const data = new Uint8Array(shape.reduce((a, b) => a * b, 1));
  for (let i = 0; i < data.length; i++) data[i] = r() < pTrue ? 1 : 0;
  return { data, shape };
}

/**
 * Largest mixed absolute/relative error: max_i |got_i - want_i| / max(1, |want_i|).
 *
 * This is NOT a pure relative error: for |want| <= 1 it is the absolute error, above 1 the
 * relative error. So `maxError(...) <= 1e-5` reads "within 1e-5 absolute for values of magnitude
 * up to 1, within 1e-5 relative above". That is how the "max relative error <= 1e-5" is
 * checked here, on purpose: the outputs compared are O(1) (unit-scale inputs, probabilities in
 * [0, 1]), and a pure |a - b| / |b| is meaningless for entries near 0, where float32 rounding of
 * a sum of O(1) terms leaves an absolute error of ~1e-7 whatever the size of the result (see
 * tests/js/golden.test.ts for the same measure against PyTorch).
 *
 * Non-finite values: equal infinities of the same sign match (error 0); any other NaN or
 * infinity on either side is an error of Infinity, so it fails every `<= tol`, and it stays the
 * worst whatever follows it. A length mismatch is Infinity too.
 */
export function maxError(got: ArrayLike<number>, want: ArrayLike<number>): number {
  if (got.length !== want.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < got.length; i++) {
    const g = got[i], w = want[i];
    if (g === w) continue;  // also +-Infinity against itself
    if (!Number.isFinite(g) || !Number.isFinite(w)) return Infinity;  // NaN, or a mismatched infinity
    const e = Math.abs(g - w) / Math.max(1, Math.abs(w));
    if (e > worst) worst = e;
  }
  return worst;
}

const prod = (s: number[]) => s.reduce((a, b) => a * b, 1);

/** Offset of element (lead index b, row i, col j) of a mask broadcast to [...lead, Sq, Sk]. */
export function broadcastIndex(maskShape: number[], target: number[]): (b: number, i: number, j: number) => number {
  const n = target.length;
  const strides = new Array(n).fill(0);
  let s = 1;
  for (let t = n - 1; t >= 0; t--) {
    const mi = t - (n - maskShape.length);
    if (mi < 0) break;
    strides[t] = maskShape[mi] === 1 ? 0 : s;
    s *= maskShape[mi];
  }
  const lead = target.slice(0, -2);
  return (b, i, j) => {
    let off = 0;
    let rem = b;
    for (let t = lead.length - 1; t >= 0; t--) {
      off += (rem % lead[t]) * strides[t];
      rem = Math.floor(rem / lead[t]);
    }
    return off + i * strides[n - 2] + j * strides[n - 1];
  };
}

export interface RefMasks {
  causal?: boolean;
  validLens?: Int32Array;
  /** SDPA semantics: bool true = may attend. */
  attnMask?: BoolTensor | Tensor;
}

/** allowed(b,i,j) and bias(b,i,j) for scores of shape [...lead, Sq, Sk]. */
function maskFns(m: RefMasks, lead: number[], Sq: number, Sk: number) {
  const batch = prod(lead);
  const target = [...lead, Sq, Sk];
  let validLen = (_b: number, _i: number) => Sk;
  if (m.validLens) {
    const v = m.validLens;
    if (v.length === batch * Sq && Sq !== 1) validLen = (b, i) => v[b * Sq + i];
    else {
      // one per prefix of the leading dims
      let p = 1, j = 0;
      while (p !== v.length && j < lead.length) p *= lead[j++];
      const per = batch / p;
      validLen = (b) => v[Math.floor(b / per)];
    }
  }
  const mask = m.attnMask;
  const at = mask ? broadcastIndex(mask.shape, target) : null;
  return {
    allowed: (b: number, i: number, j: number) =>
      j < validLen(b, i) && (!m.causal || j <= i) && !(mask && mask.data instanceof Uint8Array && mask.data[at!(b, i, j)] === 0),
    bias: (b: number, i: number, j: number) => (mask && mask.data instanceof Float32Array ? mask.data[at!(b, i, j)] : 0),
  };
}

function softmaxRow(s: number[], ok: boolean[]): number[] {
  let m = -Infinity;
  for (let j = 0; j < s.length; j++) if (ok[j] && s[j] > m) m = s[j];
  if (m === -Infinity) return s.map(() => 0);
  const e = s.map((x, j) => (ok[j] ? Math.exp(x - m) : 0));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
}

/** Masked softmax over the last axis, in float64, of x [..., Sk] (a vector is one row). */
export function refMaskedSoftmax(x: { data: ArrayLike<number>; shape: number[] }, m: RefMasks): Ref {
  const shape = x.shape.length === 1 ? [1, x.shape[0]] : x.shape;
  const [Sq, Sk] = shape.slice(-2);
  const lead = shape.slice(0, -2);
  const f = maskFns(m, lead, Sq, Sk);
  const out = new Float64Array(x.data.length);
  for (let b = 0; b < prod(lead); b++) {
    for (let i = 0; i < Sq; i++) {
      const s: number[] = [], ok: boolean[] = [];
      for (let j = 0; j < Sk; j++) {
        ok.push(f.allowed(b, i, j));
        s.push(x.data[(b * Sq + i) * Sk + j] + f.bias(b, i, j));
        if (s[j] === -Infinity) ok[j] = false;
      }
      softmaxRow(s, ok).forEach((w, j) => (out[(b * Sq + i) * Sk + j] = w));
    }
  }
  return { data: out, shape: x.shape };
}

export interface RefScore {
  score?: 'scaled_dot' | 'dot' | 'general' | 'additive';
  params?: { W?: Tensor; Wq?: Tensor; Wk?: Tensor; wv?: Tensor };
  scale?: number;
}

export function refScores(q: Tensor, k: Tensor, o: RefScore): Ref {
  const lead = q.shape.slice(0, -2);
  const [Sq, Dq] = q.shape.slice(-2);
  const [Sk, Dk] = k.shape.slice(-2);
  const score = o.score ?? 'scaled_dot';
  const out = new Float64Array(prod(lead) * Sq * Sk);
  const qr = (b: number, i: number, c: number) => q.data[(b * Sq + i) * Dq + c];
  const kr = (b: number, j: number, c: number) => k.data[(b * Sk + j) * Dk + c];
  for (let b = 0; b < prod(lead); b++) {
    for (let i = 0; i < Sq; i++) {
      for (let j = 0; j < Sk; j++) {
        let s = 0;
        if (score === 'dot' || score === 'scaled_dot') {
          for (let c = 0; c < Dq; c++) s += qr(b, i, c) * kr(b, j, c);
          s *= o.scale ?? (score === 'scaled_dot' ? 1 / Math.sqrt(Dq) : 1);
        } else if (score === 'general') {
          const W = o.params!.W!;
          for (let a = 0; a < Dq; a++) for (let c = 0; c < Dk; c++) s += qr(b, i, a) * W.data[a * Dk + c] * kr(b, j, c);
          s *= o.scale ?? 1;
        } else {
          const { Wq, Wk, wv } = o.params!;
          const H = wv!.shape[0];
          for (let h = 0; h < H; h++) {
            let z = 0;
            for (let c = 0; c < Dq; c++) z += Wq!.data[h * Dq + c] * qr(b, i, c);
            for (let c = 0; c < Dk; c++) z += Wk!.data[h * Dk + c] * kr(b, j, c);
            s += wv!.data[h] * Math.tanh(z);
          }
        }
        out[(b * Sq + i) * Sk + j] = s;
      }
    }
  }
  return { data: out, shape: [...lead, Sq, Sk] };
}

export function refAttention(q: Tensor, k: Tensor, v: Tensor, o: RefScore & RefMasks): { output: Ref; weights: Ref } {
  const wd = refMaskedSoftmax(refScores(q, k, o), o);
  const lead = q.shape.slice(0, -2);
  const Sq = q.shape.at(-2)!, Sk = k.shape.at(-2)!, Dv = v.shape.at(-1)!;
  const out = new Float64Array(prod(lead) * Sq * Dv);
  for (let b = 0; b < prod(lead); b++)
    for (let i = 0; i < Sq; i++)
      for (let j = 0; j < Sk; j++) {
        const wij = wd.data[(b * Sq + i) * Sk + j];
        for (let c = 0; c < Dv; c++) out[(b * Sq + i) * Dv + c] += wij * v.data[(b * Sk + j) * Dv + c];
      }
  return { output: { data: out, shape: [...lead, Sq, Dv] }, weights: wd };
}

export interface RefMhaParams {
  numHeads: number;
  inProjWeight: Tensor;
  inProjBias?: Tensor;
  outProjWeight: Tensor;
  outProjBias?: Tensor;
}

/** nn.MultiheadAttention(batch_first=True): masks in PyTorch MHA semantics (bool true = blocked). */
export function refMultiHead(query: Tensor, key: Tensor, value: Tensor, p: RefMhaParams,
  o: {
    causal?: boolean; keyPaddingMask?: BoolTensor | Tensor; attnMask?: BoolTensor | Tensor; averageWeights?: boolean;
    /** Turns the projected queries (n = L) and keys (n = S), [B, n, E], in place: RoPE. */
    rotate?: (x: Float64Array, n: number) => void;
  }): { output: Ref; weights: Ref } {
  const batched = query.shape.length === 3;
  const B = batched ? query.shape[0] : 1;
  const [L, E] = query.shape.slice(-2);
  const S = key.shape.at(-2)!;
  const H = p.numHeads, hd = E / H;
  const lin = (x: Tensor, rows: number, rowOff: number) => {
    const y = new Float64Array(rows * E);
    for (let r = 0; r < rows; r++)
      for (let o2 = 0; o2 < E; o2++) {
        let s = p.inProjBias ? p.inProjBias.data[rowOff + o2] : 0;
        for (let c = 0; c < E; c++) s += x.data[r * E + c] * p.inProjWeight.data[(rowOff + o2) * E + c];
        y[r * E + o2] = s;
      }
    return y;
  };
  const Q = lin(query, B * L, 0), K = lin(key, B * S, E), V = lin(value, B * S, 2 * E);
  o.rotate?.(Q, L);
  o.rotate?.(K, S);
  const heads = new Float64Array(B * L * E);
  const wAll = new Float64Array(B * H * L * S);
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++)
      for (let i = 0; i < L; i++) {
        const s: number[] = [], ok: boolean[] = [];
        for (let j = 0; j < S; j++) {
          let x = 0;
          for (let c = 0; c < hd; c++) x += Q[(b * L + i) * E + h * hd + c] * K[(b * S + j) * E + h * hd + c];
          x /= Math.sqrt(hd);
          let allowed = !(o.causal && j > i);
          const am = o.attnMask;
          if (am) {
            const idx = am.shape.length === 2 ? i * S + j : ((b * H + h) * L + i) * S + j;
            if (am.data instanceof Uint8Array) allowed &&= am.data[idx] === 0;
            else x += am.data[idx];
          }
          const kp = o.keyPaddingMask;
          if (kp) {
            if (kp.data instanceof Uint8Array) allowed &&= kp.data[b * S + j] === 0;
            else x += kp.data[b * S + j];
          }
          s.push(x);
          ok.push(allowed && x !== -Infinity);
        }
        const w = softmaxRow(s, ok);
        for (let j = 0; j < S; j++) {
          wAll[((b * H + h) * L + i) * S + j] = w[j];
          for (let c = 0; c < hd; c++) heads[(b * L + i) * E + h * hd + c] += w[j] * V[(b * S + j) * E + h * hd + c];
        }
      }
  const out = new Float64Array(B * L * E);
  for (let r = 0; r < B * L; r++)
    for (let o2 = 0; o2 < E; o2++) {
      let s = p.outProjBias ? p.outProjBias.data[o2] : 0;
      for (let c = 0; c < E; c++) s += heads[r * E + c] * p.outProjWeight.data[o2 * E + c];
      out[r * E + o2] = s;
    }
  const lead = batched ? [B] : [];
  let weights: Ref;
  if (o.averageWeights ?? true) {
    const avg = new Float64Array(B * L * S);
    for (let b = 0; b < B; b++) for (let h = 0; h < H; h++) for (let x = 0; x < L * S; x++) avg[b * L * S + x] += wAll[(b * H + h) * L * S + x] / H;
    weights = { data: avg, shape: [...lead, L, S] };
  } else weights = { data: wAll, shape: [...lead, H, L, S] };
  return { output: { data: out, shape: [...lead, L, E] }, weights };
}

export function kernelValue(kernel: string, u: number): number {
  switch (kernel) {
    case 'gaussian': return Math.exp(-0.5 * u * u);
    case 'boxcar': return u <= 1 ? 1 : 0;
    case 'epanechnikov': return Math.max(0, 1 - u * u);
    case 'triangular': return Math.max(0, 1 - u);
  }
  throw new Error(kernel);
}

/** Nadaraya-Watson with features [batch, N, D] (D = 1 for scalar inputs). */
export function refNadarayaWatson(q: number[][][], k: number[][][], v: number[][][], kernel: string, h: number): { output: number[][][]; weights: number[][][] } {
  const output: number[][][] = [], weights: number[][][] = [];
  for (let b = 0; b < q.length; b++) {
    output.push([]); weights.push([]);
    for (const qi of q[b]) {
      const logits = k[b].map((kj) => Math.hypot(...qi.map((x, c) => x - kj[c])) / h);
      let w: number[];
      if (kernel === 'gaussian') {
        const l = logits.map((u) => -0.5 * u * u);
        const m = Math.max(...l);
        const e = l.map((x) => Math.exp(x - m));
        const s = e.reduce((a, c) => a + c, 0);
        w = e.map((x) => x / s);
      } else {
        const kv = logits.map((u) => kernelValue(kernel, u));
        const s = kv.reduce((a, c) => a + c, 0);
        w = s > 0 ? kv.map((x) => x / s) : kv.map(() => 0);
      }
      weights[b].push(w);
      output[b].push(v[b][0].map((_, c) => w.reduce((acc, wj, j) => acc + wj * v[b][j][c], 0)));
    }
  }
  return { output, weights };
}

export function refPositional(length: number, dim: number): Float64Array {
  const out = new Float64Array(length * dim);
  for (let i = 0; i < length; i++)
    for (let c = 0; c < dim; c++) {
      const angle = i / Math.pow(10000, (c - (c % 2)) / dim);
      out[i * dim + c] = c % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
    }
  return out;
}
