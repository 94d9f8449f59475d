import { sameLead } from './attention.js';
import { MAX_BYTES, withScratch } from './heap.js';
import { checkBool, checkInt, checkOneOf, checkOptions, checkTensor, numel, shapeString } from './tensor.js';
import type { AttentionResult, LinearAttentionOptions, Tensor } from './types.js';
import type { WasmModule } from './wasm-module.js';

const METHODS = ['elu', 'favor+', 'linformer'] as const;
const KEYS = {
  elu: ['method', 'causal'],
  'favor+': ['method', 'causal', 'features', 'seed'],
  linformer: ['method', 'rank', 'projection', 'seed'],
} as const;

/** A projection [rank, Sk] of Linformer's. */
function checkProjection(fn: string, name: string, t: unknown, rank: number | null, Sk: number): Tensor {
  const P = checkTensor(fn, name, t, { rank: 2, layout: '[rank, Sk]' });
  if (P.shape[0] < 1 || P.shape[1] !== Sk || (rank !== null && P.shape[0] !== rank)) {
    throw new Error(`${fn}: ${name}: expected shape [${rank ?? 'rank >= 1'}, ${Sk}] ([rank, Sk]), got ${shapeString(P.shape)}`);
  }
  return P;
}

/** Linear-cost attention of q [..., Sq, D], k [..., Sk, D], v [..., Sk, Dv]; see LinearAttentionOptions. */
export function linearAttention(m: WasmModule, q: unknown, k: unknown, v: unknown, options?: LinearAttentionOptions): AttentionResult {
  const fn = 'linearAttention';
  const method = checkOneOf(fn, 'options.method', checkOptions(fn, 'options', options, ['method', 'causal', 'features', 'rank', 'projection', 'seed']).method, METHODS, 'elu');
  if (method === 'linformer' && (options as { causal?: unknown }).causal !== undefined) {
    throw new Error(`${fn}: options.causal: Linformer projects the whole sequence, so it has no causal form; use method 'elu' or 'favor+'`);
  }
  const o = checkOptions(fn, 'options', options, KEYS[method]);
  const Q = checkTensor(fn, 'q', q, { rank: 2, orMore: true, layout: '[..., Sq, D]' });
  const K = checkTensor(fn, 'k', k, { rank: 2, orMore: true, layout: '[..., Sk, D]' });
  const V = checkTensor(fn, 'v', v, { rank: 2, orMore: true, layout: '[..., Sk, Dv]' });
  const lead = Q.shape.slice(0, -2);
  sameLead(fn, 'k', K, lead);
  sameLead(fn, 'v', V, lead);
  const [Sq, D] = Q.shape.slice(-2);
  const [Sk, Dk] = K.shape.slice(-2);
  const Dv = V.shape.at(-1)!;
  if (D < 1) throw new Error(`${fn}: q: expected a last dimension >= 1, got shape ${shapeString(Q.shape)}`);
  if (Dk !== D) throw new Error(`${fn}: k: expected the last dimension to equal q's (${D}), got shape ${shapeString(K.shape)}`);
  if (V.shape.at(-2) !== Sk) throw new Error(`${fn}: v: expected ${Sk} rows (Sk, as k), got shape ${shapeString(V.shape)}`);
  if (Dv < 1) throw new Error(`${fn}: v: expected a last dimension >= 1, got shape ${shapeString(V.shape)}`);

  const causal = checkBool(fn, 'options.causal', o.causal, false);
  const features = o.features === undefined ? 256 : checkInt(fn, 'options.features', o.features, 1);
  const seed = o.seed === undefined ? 0 : checkInt(fn, 'options.seed', o.seed, 0);
  let rank = o.rank === undefined ? null : checkInt(fn, 'options.rank', o.rank, 1);
  let E: Tensor | null = null, F: Tensor | null = null;
  if (o.projection !== undefined) {
    const p = checkOptions(fn, 'options.projection', o.projection, ['E', 'F']);
    E = checkProjection(fn, 'options.projection.E', p.E, rank, Sk);
    rank = E.shape[0];
    F = p.F === undefined ? E : checkProjection(fn, 'options.projection.F', p.F, rank, Sk);
  }

  const batch = numel(lead);
  const outLen = batch * Sq * Dv;
  // Nothing to run; leading dimensions of 2^40 over empty slices would loop the core that long.
  if (outLen === 0) return { output: { data: new Float32Array(0), shape: [...lead, Sq, Dv] } };
  // The core's working memory, named by the option that sets it (an allocation failure there would
  // only say "out of memory"): FAVOR+'s features W [m, D] and a slice's key features and state;
  // Linformer's drawn E, F [rank, Sk] and its projected keys and values.
  const r = rank ?? 64;
  const work = method === 'favor+' ? 4 * (features * (D + Sk + Dv + 2) + D)
    : method === 'linformer' ? 4 * ((E ? 0 : 2 * r * Sk) + r * (D + Dv + 1)) : 0;
  if (work > MAX_BYTES) {
    const what = method === 'favor+'
      ? `options.features: expected working memory within the WebAssembly heap's 2 GiB limit, got ${work} bytes (features x (D + Sk + Dv + 2) = ${features} x ${D + Sk + Dv + 2} floats)`
      : `options.rank: expected working memory within the WebAssembly heap's 2 GiB limit, got ${work} bytes (rank x (${E ? '' : '2 Sk + '}D + Dv + 1) = ${r} x ${(E ? 0 : 2 * Sk) + D + Dv + 1} floats)`;
    throw new Error(`${fn}: ${what}`);
  }
  return withScratch(m, fn, (s, check) => {
    const out = s.alloc(outLen * 4);
    const Ep = E ? s.put(E.data) : null;
    check(m.linearAttention({
      method, q: s.put(Q.data), k: s.put(K.data), v: s.put(V.data), batch, Sq, Sk, D, Dv, causal,
      features, rank: r, seed, E: Ep, F: F === E ? Ep : s.put(F!.data), out,
    }));
    return { output: { data: s.take(out, outLen), shape: [...lead, Sq, Dv] } };
  });
}
