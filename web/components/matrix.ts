// Turning what callers pass (nested arrays, attnlab tensors, JSON) into plain row arrays.

export interface TensorLike {
  data: ArrayLike<number>;
  shape: number[];
}

export type MatrixInput = number[][] | TensorLike | null | undefined;

/** Rows of a 2-D matrix. A tensor with more dimensions gives its first [rows, cols] slice. */
export function toRows(m: MatrixInput): number[][] {
  if (!m) return [];
  if (Array.isArray(m)) return m.map((r) => copyRow(r, 0, r.length));
  const { data, shape } = m;
  if (!shape || shape.length === 0) return [];
  const cols = shape[shape.length - 1];
  const rows = shape.length >= 2 ? shape[shape.length - 2] : 1;
  return sliceRows(data, 0, rows, cols);
}

/** Slices of a tensor with shape [..., R, C]: one matrix per leading index. */
export function toMatrices(t: TensorLike | number[][][] | null | undefined): number[][][] {
  if (!t) return [];
  if (Array.isArray(t)) return t.map((m) => toRows(m));
  const { data, shape } = t;
  if (shape.length < 2) return [toRows(t)];
  const [R, C] = shape.slice(-2);
  const n = shape.slice(0, -2).reduce((a, b) => a * b, 1);
  const out: number[][][] = [];
  for (let k = 0; k < n; k++) out.push(sliceRows(data, k * R * C, R, C));
  return out;
}

/**
 * What is wrong with `t` as attention heads, [heads][queries][keys]: nested arrays (every head
 * one size, its rows of one length) or a tensor. '' when nothing is (null too: no heads). A head
 * view or model view given anything else drew nothing, or threw, and said nothing.
 */
export function headsProblem(t: unknown): string {
  if (t === null || t === undefined) return '';
  if (!Array.isArray(t)) {
    const x = t as Partial<TensorLike>;
    return Array.isArray(x.shape) && typeof x.data?.length === 'number' ? '' : 'expected [heads][queries][keys] arrays of numbers, or a tensor';
  }
  if (!t.every((m) => Array.isArray(m) && m.every(Array.isArray))) return 'expected [heads][queries][keys] arrays of numbers, or a tensor';
  const sizes = new Set<string>();
  for (const m of t as unknown[][][]) {
    const lengths = new Set(m.map((r) => r.length));
    if (lengths.size > 1) return `expected rows of equal length, got lengths ${[...lengths].join(', ')}`;
    sizes.add(`${m.length} x ${m[0]?.length ?? 0}`);
  }
  return sizes.size > 1 ? `expected heads of one size, got ${[...sizes].join(', ')}` : '';
}

// Plain loops, not Array.from with a callback: a 512-token model's 144 heads are 38 M values,
// which took seconds to copy that way.
function copyRow(d: ArrayLike<number>, from: number, n: number): number[] {
  const r: number[] = new Array(n);
  for (let j = 0; j < n; j++) r[j] = +d[from + j];
  return r;
}
function sliceRows(d: ArrayLike<number>, from: number, rows: number, cols: number): number[][] {
  const out: number[][] = new Array(rows);
  for (let i = 0; i < rows; i++) out[i] = copyRow(d, from + i * cols, cols);
  return out;
}

export function extent(rows: number[][], skip?: boolean[][]): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  rows.forEach((r, i) => r.forEach((v, j) => {
    if (skip?.[i]?.[j] || !Number.isFinite(v)) return;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }));
  if (lo === Infinity) return [0, 1];
  return [lo, hi];
}
