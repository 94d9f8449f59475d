// Where the heads page gets its attention maps. Today: a Transformer-shaped stack with seeded
// random weights run through attnlab's multiHeadAttention, labelled as untrained. When the
// trained translator lands (lib.loadTranslator), a second AttentionModel wraps it: the page only
// talks to this interface.
import type { Attnlab, MultiHeadParams, Tensor } from 'attnlab';
import { decoderInputs, gaussian, rng } from '../components/lib';

export type Maps = number[][][][]; // [layer][head][queries][keys]

export interface AttentionMaps {
  sourceTokens: string[];
  targetTokens: string[];
  /** The target as text where the model wrote it (a trained translator); absent where it was given. */
  target?: string;
  /**
   * The decoder self-attention's keys where they are not targetTokens: a translator's targetTokens
   * are the pieces it wrote, its keys the pieces it read ('<bos>', then each written one).
   */
  decoderKeys?: string[];
  encoderSelf: Maps;
  decoderSelf: Maps;
  cross: Maps;
}

export interface AttentionModel {
  name: string;
  trained: boolean;
  layers: number;
  heads: number;
  run(source: string, target: string): AttentionMaps | Promise<AttentionMaps>;
}

/** Words and punctuation, lower-cased. */
export function tokenize(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}']+|[^\s\p{L}\p{N}]/gu) ?? []).slice(0, 40);
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

function normals(n: number, seed: number, sd: number): Float32Array {
  const g = gaussian(rng(seed));
  return Float32Array.from({ length: n }, () => g() * sd);
}

function layerNorm(x: Float32Array, rows: number, E: number): Float32Array {
  const out = new Float32Array(x.length);
  for (let i = 0; i < rows; i++) {
    const r = x.subarray(i * E, (i + 1) * E);
    const mean = r.reduce((a, b) => a + b, 0) / E;
    const v = r.reduce((a, b) => a + (b - mean) ** 2, 0) / E;
    const s = 1 / Math.sqrt(v + 1e-5);
    for (let j = 0; j < E; j++) out[i * E + j] = (r[j] - mean) * s;
  }
  return out;
}

/** [H, L, S] rows from `data` starting at `offset`: a typed array (in the page) or the plain
 * array a Worker's reply carries. */
function split(data: ArrayLike<number>, offset: number, H: number, L: number, S: number): number[][][] {
  return Array.from({ length: H }, (_, h) => Array.from({ length: L }, (_, i) =>
    Array.from({ length: S }, (_, j) => data[offset + (h * L + i) * S + j])));
}

/** A Transformer encoder-decoder's attention with seeded random weights: untrained. */
export function untrainedModel(lib: Attnlab, seed = 7, layers = 2, heads = 4, E = 32): AttentionModel {
  // Queries and keys projected with a larger spread than PyTorch's init, so the random heads
  // are visibly different from one another rather than all near-uniform.
  const params = (tag: number): MultiHeadParams => {
    const w = normals(3 * E * E, seed * 1000 + tag, 1 / Math.sqrt(E));
    for (let i = 0; i < 2 * E * E; i++) w[i] *= 2.2;
    return {
      numHeads: heads,
      inProjWeight: { data: w, shape: [3 * E, E] },
      inProjBias: { data: new Float32Array(3 * E), shape: [3 * E] },
      outProjWeight: { data: normals(E * E, seed * 1000 + tag + 500, 1 / Math.sqrt(E)), shape: [E, E] },
      outProjBias: { data: new Float32Array(E), shape: [E] },
    };
  };
  const embed = (tokens: string[]): Float32Array => {
    const L = tokens.length;
    const pe = lib.positionalEncoding(Math.max(1, L), E).data;
    const x = new Float32Array(L * E);
    tokens.forEach((tok, i) => {
      const e = normals(E, hash(tok) ^ seed, 1);
      for (let j = 0; j < E; j++) x[i * E + j] = e[j] + pe[i * E + j];
    });
    return x;
  };
  return {
    name: `untrained Transformer (random weights, seed ${seed})`,
    trained: false,
    layers,
    heads,
    run(source: string, target: string): AttentionMaps {
      const src = [...tokenize(source), '<eos>'];
      const tgt = ['<bos>', ...tokenize(target)];
      const Ls = src.length;
      const Lt = tgt.length;
      const T = (data: Float32Array, L: number): Tensor => ({ data, shape: [1, L, E] });
      let x = embed(src);
      const encoderSelf: Maps = [];
      for (let l = 0; l < layers; l++) {
        const r = lib.multiHeadAttention(T(x, Ls), T(x, Ls), T(x, Ls), params(l), { needWeights: true, averageWeights: false });
        encoderSelf.push(split(r.weights!.data, 0, heads, Ls, Ls));
        x = layerNorm(x.map((v, i) => v + r.output.data[i]), Ls, E);
      }
      let y = embed(tgt);
      const decoderSelf: Maps = [];
      const cross: Maps = [];
      for (let l = 0; l < layers; l++) {
        const a = lib.multiHeadAttention(T(y, Lt), T(y, Lt), T(y, Lt), params(100 + l), { causal: true, needWeights: true, averageWeights: false });
        decoderSelf.push(split(a.weights!.data, 0, heads, Lt, Lt));
        y = layerNorm(y.map((v, i) => v + a.output.data[i]), Lt, E);
        const c = lib.multiHeadAttention(T(y, Lt), T(x, Ls), T(x, Ls), params(200 + l), { needWeights: true, averageWeights: false });
        cross.push(split(c.weights!.data, 0, heads, Lt, Ls));
        y = layerNorm(y.map((v, i) => v + c.output.data[i]), Lt, E);
      }
      return { sourceTokens: src, targetTokens: tgt, encoderSelf, decoderSelf, cross };
    },
  };
}

/** What the trained Transformer translator returns (see lib.loadTranslator), structurally; from a
 * Worker the tensors' data arrive as plain arrays. */
interface TensorData { data: ArrayLike<number>; shape: number[] }
interface TransformerAttention { kind: 'transformer'; layers?: number; heads?: number; encoderSelf?: TensorData; decoderSelf?: TensorData; cross?: TensorData }
interface TransformerTranslation {
  text: string;
  sourceTokens: string[];
  targetTokens: string[];
  /** Any translator's attention; only a Transformer's (kind 'transformer') is usable here. */
  attention: object;
}
export interface TrainedTranslator {
  translate(text: string, options?: { beam?: number; maxLength?: number }): TransformerTranslation | Promise<TransformerTranslation>;
}

function layersOf(t: TensorData | undefined, layers: number, heads: number, L: number, S: number): Maps {
  if (!t) return [];
  return Array.from({ length: layers }, (_, l) => split(t.data, l * heads * L * S, heads, L, S));
}

/**
 * The shipped Transformer translator as an AttentionModel: the target side is the model's own
 * translation of the source (the typed target is ignored).
 */
export function translatorModel(tr: TrainedTranslator, name: string, layers: number, heads: number): AttentionModel {
  return {
    name,
    trained: true,
    layers,
    heads,
    async run(source: string): Promise<AttentionMaps> {
      const r = await tr.translate(source, { beam: 1 });
      const kind = (r.attention as { kind?: string }).kind;
      if (kind !== 'transformer') throw new Error(`expected a Transformer's attention, got '${kind}'`);
      const a = r.attention as TransformerAttention;
      const S = r.sourceTokens.length;
      const T = r.targetTokens.length;
      // layers and heads: from the result, else from the cross-attention's shape [L, H, T, S].
      const layers = a.layers ?? a.cross?.shape[0] ?? 0;
      const heads = a.heads ?? a.cross?.shape[1] ?? 0;
      return {
        sourceTokens: r.sourceTokens,
        targetTokens: r.targetTokens,
        target: r.text,
        decoderKeys: decoderInputs(r.targetTokens),
        encoderSelf: layersOf(a.encoderSelf, layers, heads, S, S),
        decoderSelf: layersOf(a.decoderSelf, layers, heads, T, T),
        cross: layersOf(a.cross, layers, heads, T, S),
      };
    },
  };
}
