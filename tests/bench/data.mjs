// Inputs of the benchmark and their float64 reference: seeded, so every peer sees the same numbers.

/** Seeded uniform values in [-1, 1) (mulberry32), as tests/js/reference.ts. */
export function random(n, seed) {
  let a = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  }
  return out;
}

/** q, k, v as [H, S, d]. */
export function inputs(H, S, d) {
  const n = H * S * d;
  return { q: random(n, 1 + S), k: random(n, 2 + S), v: random(n, 3 + S) };
}

/** [H, S, d] <-> [S, H*d] (the BSNH layout of com.microsoft MultiHeadAttention, batch 1). */
export function toBSNH(x, H, S, d) {
  const y = new Float32Array(x.length);
  for (let h = 0; h < H; h++)
    for (let s = 0; s < S; s++) y.set(x.subarray((h * S + s) * d, (h * S + s + 1) * d), (s * H + h) * d);
  return y;
}
export function fromBSNH(y, H, S, d) {
  const x = new Float32Array(y.length);
  for (let h = 0; h < H; h++)
    for (let s = 0; s < S; s++) x.set(y.subarray((s * H + h) * d, (s * H + h + 1) * d), (h * S + s) * d);
  return x;
}

/** Which query rows the check covers: all, or an even sample (first and last included) of big shapes. */
export function checkedRows(H, S) {
  if (H * S * S <= 8 * 1024 * 1024) return null;  // all
  const rows = [];
  const n = 256;
  for (let t = 0; t < n; t++) rows.push(Math.round((t * (S - 1)) / (n - 1)));
  return rows;
}

/** Float64 reference output rows (scaled dot-product softmax attention), [H][rows][d]. */
export function reference({ q, k, v }, H, S, d, causal, rows) {
  const list = rows ?? Array.from({ length: S }, (_, i) => i);
  const scale = 1 / Math.sqrt(d);
  const out = new Float64Array(H * list.length * d);
  const s = new Float64Array(S);
  for (let h = 0; h < H; h++) {
    const base = h * S * d;
    list.forEach((i, r) => {
      const hi = causal ? i + 1 : S;
      let m = -Infinity;
      for (let j = 0; j < hi; j++) {
        let acc = 0;
        for (let c = 0; c < d; c++) acc += q[base + i * d + c] * k[base + j * d + c];
        s[j] = acc * scale;
        if (s[j] > m) m = s[j];
      }
      let sum = 0;
      for (let j = 0; j < hi; j++) sum += (s[j] = Math.exp(s[j] - m));
      const o = (h * list.length + r) * d;
      for (let j = 0; j < hi; j++) {
        const w = s[j] / sum;
        for (let c = 0; c < d; c++) out[o + c] += w * v[base + j * d + c];
      }
    });
  }
  return out;
}

/** Largest |got - want| / max(1, |want|) over the checked rows; got is [H, S, d]. */
export function maxError(got, want, H, S, d, rows) {
  const list = rows ?? Array.from({ length: S }, (_, i) => i);
  let worst = 0;
  for (let h = 0; h < H; h++)
    list.forEach((i, r) => {
      for (let c = 0; c < d; c++) {
        const w = want[(h * list.length + r) * d + c];
        const e = Math.abs(got[(h * S + i) * d + c] - w) / Math.max(1, Math.abs(w));
        if (!(e <= worst)) worst = e;  // NaN sticks
      }
    });
  return worst;
}
