import { MAX_BYTES, withScratch, type Scratch } from './heap.js';
import { argError } from './errors.js';
import { checkBool, checkInt, checkOneOf, checkOptions, checkTensor, numel, shapeString } from './tensor.js';
import type { AttentionResult, SynthesizerOptions, Tensor } from './types.js';
import type { WasmModule } from './wasm-module.js';

const KINDS = ['dense', 'random', 'factorized-dense', 'factorized-random'] as const;
const KEYS = {
  dense: ['dense'],
  random: ['R', 'seed'],
  'factorized-dense': ['factorA', 'factorB'],
  'factorized-random': ['R1', 'R2', 'rank', 'seed'],
} as const;

function shaped(fn: string, name: string, t: unknown, shape: number[], layout: string): Tensor {
  const T = checkTensor(fn, name, t, { rank: shape.length, layout });
  if (T.shape.some((d, i) => shape[i] >= 0 && d !== shape[i])) {
    throw new Error(`${fn}: ${name}: expected shape [${shape.map((d) => (d < 0 ? '*' : d)).join(', ')}] ${layout}, got ${shapeString(T.shape)}`);
  }
  return T;
}

interface Mlp { W1: Tensor; b1: Tensor | null; W2: Tensor; b2: Tensor | null; hidden: number; out: number }

/**
 * A 2-layer MLP { W1 [hidden, D], b1?, W2 [out, hidden], b2? }; `out` -1 for any. W2 may have no
 * rows only when S = 0 (no scores to make).
 */
function checkMlp(fn: string, name: string, x: unknown, D: number, out: number, S: number): Mlp {
  if (x === undefined) throw new Error(`${fn}: ${name}: expected the learned MLP { W1 [hidden, ${D}], W2 [${out < 0 ? 'out' : out}, hidden], b1?, b2? }, got undefined`);
  const o = checkOptions(fn, name, x, ['W1', 'b1', 'W2', 'b2']);
  const W1 = shaped(fn, `${name}.W1`, o.W1, [-1, D], '[hidden, D]');
  const hidden = W1.shape[0];
  if (hidden < 1) throw new Error(`${fn}: ${name}.W1: expected hidden >= 1 rows, got shape ${shapeString(W1.shape)}`);
  const W2 = shaped(fn, `${name}.W2`, o.W2, [out, hidden], out < 0 ? '[out, hidden]' : '[S, hidden]');
  if (W2.shape[0] < 1 && S > 0) throw new Error(`${fn}: ${name}.W2: expected out >= 1 rows, got shape ${shapeString(W2.shape)}`);
  const b1 = o.b1 === undefined ? null : shaped(fn, `${name}.b1`, o.b1, [hidden], '[hidden]');
  const b2 = o.b2 === undefined ? null : shaped(fn, `${name}.b2`, o.b2, [W2.shape[0]], '[out]');
  return { W1, b1, W2, b2, hidden, out: W2.shape[0] };
}

function mlpArgs(s: Scratch, m: Mlp | null) {
  if (!m) return null;
  return { W1: s.put(m.W1.data), b1: m.b1 ? s.put(m.b1.data) : null, W2: s.put(m.W2.data), b2: m.b2 ? s.put(m.b2.data) : null, hidden: m.hidden, out: m.out };
}

/** Synthesizer attention of tokens x [..., S, D] (null for the random kinds) and v [..., S, Dv]. */
export function synthesizer(m: WasmModule, x: unknown, v: unknown, options: SynthesizerOptions): AttentionResult {
  const fn = 'synthesizer';
  if (typeof options !== 'object' || options === null) throw argError(fn, 'options', "{ kind: 'dense' | 'random' | 'factorized-dense' | 'factorized-random', ... }", options);
  // Required (the types say so): no fallback, so a missing kind is named, not taken for 'dense'.
  const kind = checkOneOf(fn, 'options.kind', (options as { kind?: unknown }).kind, KINDS);
  const o = checkOptions(fn, 'options', options, ['kind', 'dot', 'causal', 'returnWeights', ...KEYS[kind]]);
  const V = checkTensor(fn, 'v', v, { rank: 2, orMore: true, layout: '[..., S, Dv]' });
  const lead = V.shape.slice(0, -2);
  const [S, Dv] = V.shape.slice(-2);
  if (Dv < 1) throw new Error(`${fn}: v: expected a last dimension >= 1, got shape ${shapeString(V.shape)}`);
  const sameRows = (name: string, T: Tensor) => {
    if (T.shape.length !== lead.length + 2 || [...lead, S].some((d, i) => d !== T.shape[i])) {
      throw new Error(`${fn}: ${name}: expected shape [${[...lead, S].join(', ')}, D] (leading dimensions and S as v), got ${shapeString(T.shape)}`);
    }
    return T;
  };
  const dense = kind === 'dense' || kind === 'factorized-dense';
  let X: Tensor | null = null;
  if (dense) {
    if (x === null || x === undefined) throw new Error(`${fn}: x: expected the tokens [..., S, D] for kind '${kind}', got ${String(x)}`);
    X = sameRows('x', checkTensor(fn, 'x', x, { rank: 2, orMore: true, layout: '[..., S, D]' }));
  } else if (x !== null && x !== undefined) {
    // The random kinds do not read the tokens; given, they are still checked, so a malformed x is
    // not silently taken.
    sameRows('x', checkTensor(fn, 'x', x, { rank: 2, orMore: true, layout: '[..., S, D]' }));
  }
  const D = X ? X.shape.at(-1)! : 0;
  let mlp: Mlp | null = null, mlpB: Mlp | null = null;
  if (kind === 'dense') mlp = checkMlp(fn, 'options.dense', o.dense, D, S, S);
  if (kind === 'factorized-dense') {
    mlp = checkMlp(fn, 'options.factorA', o.factorA, D, -1, S);
    mlpB = checkMlp(fn, 'options.factorB', o.factorB, D, -1, S);
    if (mlp.out * mlpB.out !== S) {
      throw new Error(`${fn}: options.factorA, options.factorB: expected output sizes a, b with a * b = S = ${S}, got ${mlp.out} * ${mlpB.out}`);
    }
  }
  const R = o.R === undefined ? null : shaped(fn, 'options.R', o.R, [S, S], '[S, S]');
  let rank = o.rank === undefined ? 8 : checkInt(fn, 'options.rank', o.rank, 1);
  let R1: Tensor | null = null, R2: Tensor | null = null;
  if (o.R1 !== undefined || o.R2 !== undefined) {
    if (o.R1 === undefined || o.R2 === undefined) throw new Error(`${fn}: options.${o.R1 === undefined ? 'R1' : 'R2'}: expected a tensor [S, rank] (R1 and R2 go together), got undefined`);
    R1 = shaped(fn, 'options.R1', o.R1, [S, -1], '[S, rank]');
    // R1's columns are the rank; a different options.rank beside them was silently overridden.
    if (o.rank !== undefined && o.rank !== R1.shape[1]) {
      throw new Error(`${fn}: options.rank: expected R1's ${R1.shape[1]} columns (or no rank with R1 and R2), got ${o.rank}`);
    }
    rank = R1.shape[1];
    R2 = shaped(fn, 'options.R2', o.R2, [S, rank], '[S, rank]');
    if (rank < 1) throw new Error(`${fn}: options.R1: expected rank >= 1 columns, got shape ${shapeString(R1.shape)}`);
  }
  const seed = o.seed === undefined ? 0 : checkInt(fn, 'options.seed', o.seed, 0);
  let Q: Tensor | null = null, K: Tensor | null = null, dotWeight = 0;
  if (o.dot !== undefined) {
    const d = checkOptions(fn, 'options.dot', o.dot, ['q', 'k', 'weight']);
    Q = sameRows('options.dot.q', checkTensor(fn, 'options.dot.q', d.q, { rank: 2, orMore: true, layout: '[..., S, D]' }));
    K = sameRows('options.dot.k', checkTensor(fn, 'options.dot.k', d.k, { rank: 2, orMore: true, layout: '[..., S, D]' }));
    if (K.shape.at(-1) !== Q.shape.at(-1) || Q.shape.at(-1)! < 1) throw new Error(`${fn}: options.dot.k: expected the last dimension to equal q's (${Q.shape.at(-1)}), got shape ${shapeString(K.shape)}`);
    dotWeight = d.weight === undefined ? 0.5 : (d.weight as number);
    if (typeof dotWeight !== 'number' || !(dotWeight > 0 && dotWeight <= 1)) throw argError(fn, 'options.dot.weight', 'a number in (0, 1]', d.weight);
  }
  const causal = checkBool(fn, 'options.causal', o.causal, false);
  const returnWeights = checkBool(fn, 'options.returnWeights', o.returnWeights, false);

  const batch = numel(lead);
  const outLen = batch * S * Dv, wLen = batch * S * S;
  if (outLen === 0) {
    // Nothing to run (Dv >= 1): no scores to draw or make (the core would ask for parameters an
    // empty R [0, 0] does not need), and no empty slices to loop over.
    const result: AttentionResult = { output: { data: new Float32Array(0), shape: [...lead, S, Dv] } };
    if (returnWeights) result.weights = { data: new Float32Array(0), shape: [...lead, S, S] };
    return result;
  }
  // The fixed random forms are drawn in the core's heap.
  const drawn = kind === 'random' && !R ? 4 * S * S : kind === 'factorized-random' && !R1 ? 8 * S * rank : 0;
  if (drawn > MAX_BYTES) {
    const what = kind === 'random' ? `v: expected S with a fixed random R [S, S] (no options.R) within the WebAssembly heap's 2 GiB limit, got S = ${S}` : `options.rank: expected fixed random R1, R2 [S, rank] within the WebAssembly heap's 2 GiB limit, got [${S}, ${rank}]`;
    throw new Error(`${fn}: ${what}: ${drawn} bytes`);
  }
  return withScratch(m, fn, (s, check) => {
    const out = s.alloc(outLen * 4);
    const weights = returnWeights ? s.alloc(wLen * 4) : null;
    check(m.synthesizer({
      kind, x: X ? s.put(X.data) : null, v: s.put(V.data), batch, S, D, Dv, mlp: mlpArgs(s, mlp), mlpB: mlpArgs(s, mlpB),
      R: R ? s.put(R.data) : null, R1: R1 ? s.put(R1.data) : null, R2: R2 ? s.put(R2.data) : null, rank, seed,
      q: Q ? s.put(Q.data) : null, k: K ? s.put(K.data) : null, Dqk: Q ? Q.shape.at(-1)! : 0, dotWeight, causal, out, weights,
    }));
    const result: AttentionResult = { output: { data: s.take(out, outLen), shape: [...lead, S, Dv] } };
    if (weights) result.weights = { data: s.take(weights, wLen), shape: [...lead, S, S] };
    return result;
  });
}
