import { withScratch } from './heap.js';
import { checkOneOf, checkOptions, checkOut, checkTensor, numel, shapeString } from './tensor.js';
import type { KernelName, NadarayaWatsonOptions, NadarayaWatsonResult, Tensor } from './types.js';
import type { WasmModule } from './wasm-module.js';

const KERNELS: readonly KernelName[] = ['gaussian', 'boxcar', 'epanechnikov', 'triangular'];

/**
 * Nadaraya-Watson regression. Scalar features: queries [Nq], keys [Nk], values [Nk] or [Nk, Dv].
 * Vector features: queries [..., Nq, D], keys [..., Nk, D], values [..., Nk, Dv].
 */
export function nadarayaWatson(m: WasmModule, queries: unknown, keys: unknown, values: unknown, options?: NadarayaWatsonOptions): NadarayaWatsonResult {
  const fn = 'nadarayaWatson';
  const o = checkOptions(fn, 'options', options, ['kernel', 'bandwidth', 'out']);
  const kernel = checkOneOf(fn, 'options.kernel', o.kernel, KERNELS, 'gaussian');
  const h = o.bandwidth === undefined ? 1 : o.bandwidth;
  if (typeof h !== 'number' || !Number.isFinite(h) || h <= 0) {
    throw new Error(`${fn}: options.bandwidth: expected a finite number > 0, got ${String(h)}`);
  }
  const Qt = checkTensor(fn, 'queries', queries, { rank: 1, orMore: true, layout: '[Nq] or [..., Nq, D]' });
  const scalar = Qt.shape.length === 1;
  const Kt = checkTensor(fn, 'keys', keys, scalar ? { rank: 1, layout: '[Nk] (as queries is [Nq])' } : { rank: Qt.shape.length, layout: '[..., Nk, D]' });
  const Vt: Tensor = checkTensor(fn, 'values', values, scalar ? { rank: 1, orMore: true, layout: '[Nk] or [Nk, Dv]' } : { rank: Qt.shape.length, layout: '[..., Nk, Dv]' });
  let lead: number[], Nq: number, Nk: number, D: number, Dv: number;
  if (scalar) {
    [lead, Nq, Nk, D] = [[], Qt.shape[0], Kt.shape[0], 1];
    if (Vt.shape.length > 2 || Vt.shape[0] !== Nk) {
      throw new Error(`${fn}: values: expected shape [${Nk}] or [${Nk}, Dv] (one row per key), got ${shapeString(Vt.shape)}`);
    }
    Dv = Vt.shape.length === 2 ? Vt.shape[1] : 1;
  } else {
    lead = Qt.shape.slice(0, -2);
    [Nq, D] = Qt.shape.slice(-2);
    [Nk] = Kt.shape.slice(-2);
    Dv = Vt.shape.at(-1)!;
    const wantK = [...lead, Nk, D];
    if (Kt.shape.some((d, i) => d !== wantK[i])) {
      throw new Error(`${fn}: keys: expected shape ${shapeString(wantK)} (leading dims and D as queries), got ${shapeString(Kt.shape)}`);
    }
    const wantV = [...lead, Nk];
    if (Vt.shape.slice(0, -1).some((d, i) => d !== wantV[i])) {
      throw new Error(`${fn}: values: expected shape ${shapeString([...wantV, Dv])} (one row per key), got ${shapeString(Vt.shape)}`);
    }
  }
  if (D < 1 || Dv < 1) throw new Error(`${fn}: queries/values: expected feature sizes >= 1, got D = ${D}, Dv = ${Dv}`);
  const batch = numel(lead);
  const outLen = batch * Nq * Dv;
  const wLen = batch * Nq * Nk;
  const outShape = scalar ? (Vt.shape.length === 1 ? [Nq] : [Nq, Dv]) : [...lead, Nq, Dv];
  const into = o.out === undefined ? null : checkOut(fn, 'options.out', o.out, outLen, outShape);
  return withScratch(m, fn, (s, check) => {
    const out = s.alloc(outLen * 4);
    const weights = s.alloc(wLen * 4);
    check(m.nadarayaWatson({
      queries: s.put(Qt.data), keys: s.put(Kt.data), values: s.put(Vt.data),
      batch, Nq, Nk, D, Dv, kernel, bandwidth: h, out, weights,
    }));
    return {
      output: { data: s.take(out, outLen, into), shape: outShape },
      weights: { data: s.take(weights, wLen), shape: [...lead, Nq, Nk] },
    };
  });
}
