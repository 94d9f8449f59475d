// The efficient-attention part of the attnlab API, typed structurally so this page compiles
// against builds with or without it; `efficientApi(lib)` is null when the build lacks it.
import type { Attnlab, Tensor } from 'attnlab';

export type Pattern =
  | { type: 'local'; window: number }
  | { type: 'longformer'; window: number; global?: number[] }
  | { type: 'bigbird'; blockSize: number; windowBlocks?: number; globalBlocks?: number[]; randomBlocks?: number; seed?: number };

export interface LshApi {
  lshAttention(qk: Tensor, v: Tensor, options?: { nBuckets?: number; nHashes?: number; causal?: boolean; seed?: number; returnBuckets?: boolean; returnAttended?: boolean }): {
    output: Tensor; buckets?: { data: Int32Array; shape: number[] }; attended?: { data: Int32Array; shape: number[] };
  };
  synthesizer(x: Tensor | null, v: Tensor, options: { kind: 'dense'; dense: { W1: Tensor; W2: Tensor } }): { output: Tensor };
}

export interface EfficientApi extends Partial<LshApi> {
  attentionPattern(pattern: Pattern, Sq: number, Sk: number, options?: { causal?: boolean }): { data: Uint8Array; shape: number[] };
  attention(q: Tensor, k: Tensor, v: Tensor, options?: { pattern?: Pattern; causal?: boolean }): { output: Tensor };
  linearAttention(q: Tensor, k: Tensor, v: Tensor, options?: { method?: 'elu'; causal?: boolean }): { output: Tensor };
}

/** The LSH and Synthesizer calls, or null when this build lacks them. */
export function lshApi(api: EfficientApi): LshApi | null {
  return typeof api.lshAttention === 'function' && typeof api.synthesizer === 'function' ? (api as LshApi) : null;
}

export function efficientApi(lib: Attnlab): EfficientApi | null {
  const l = lib as unknown as Partial<EfficientApi>;
  return typeof l.attentionPattern === 'function' && typeof l.linearAttention === 'function' ? (lib as unknown as EfficientApi) : null;
}

export type Method = 'dense' | 'local' | 'longformer' | 'bigbird' | 'linear' | 'lsh' | 'synthesizer';

/**
 * The timed call of a method at S tokens of size d (q, k, v [1, S, d]). LSH: chunks of 32 tokens
 * (nBuckets = S / 32), 2 rounds. Synthesizer: dense, an MLP d -> 32 -> S per token.
 */
export function costCall(api: EfficientApi, method: Method, q: Tensor, k: Tensor, v: Tensor, window: number, block: number, random: (n: number, seed: number) => Float32Array): () => unknown {
  const [, S, d] = q.shape;
  const lsh = lshApi(api);
  if (method === 'linear') return () => api.linearAttention(q, k, v);
  if (method === 'lsh' && lsh) return () => lsh.lshAttention(q, v, { nBuckets: Math.max(2, S / 32), nHashes: 2 });
  if (method === 'synthesizer' && lsh) {
    const dense = { W1: { data: random(32 * d, 4), shape: [32, d] }, W2: { data: random(S * 32, 5), shape: [S, 32] } };
    return () => lsh.synthesizer(q, v, { kind: 'dense', dense });
  }
  const pattern = patternFor(method, window, block);
  return () => api.attention(q, k, v, pattern ? { pattern } : {});
}

export function patternFor(method: Method, window: number, block: number): Pattern | null {
  if (method === 'local') return { type: 'local', window };
  if (method === 'longformer') return { type: 'longformer', window, global: [0] };
  if (method === 'bigbird') return { type: 'bigbird', blockSize: block, windowBlocks: 1, globalBlocks: [0], randomBlocks: 2, seed: 0 };
  return null;
}
