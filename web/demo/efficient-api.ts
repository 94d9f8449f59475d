// The efficient-attention part of the attnlab API, typed structurally so this page compiles
// against builds with or without it; `efficientApi(lib)` is null when the build lacks it.
import type { Attnlab, Tensor } from 'attnlab';

export type Pattern =
  | { type: 'local'; window: number }
  | { type: 'longformer'; window: number; global?: number[] }
  | { type: 'bigbird'; blockSize: number; windowBlocks?: number; globalBlocks?: number[]; randomBlocks?: number; seed?: number };

export interface EfficientApi {
  attentionPattern(pattern: Pattern, Sq: number, Sk: number, options?: { causal?: boolean }): { data: Uint8Array; shape: number[] };
  attention(q: Tensor, k: Tensor, v: Tensor, options?: { pattern?: Pattern; causal?: boolean }): { output: Tensor };
  linearAttention(q: Tensor, k: Tensor, v: Tensor, options?: { method?: 'elu'; causal?: boolean }): { output: Tensor };
}

export function efficientApi(lib: Attnlab): EfficientApi | null {
  const l = lib as unknown as Partial<EfficientApi>;
  return typeof l.attentionPattern === 'function' && typeof l.linearAttention === 'function' ? (lib as unknown as EfficientApi) : null;
}

export type Method = 'dense' | 'local' | 'longformer' | 'bigbird' | 'linear';

export function patternFor(method: Method, window: number, block: number): Pattern | null {
  if (method === 'local') return { type: 'local', window };
  if (method === 'longformer') return { type: 'longformer', window, global: [0] };
  if (method === 'bigbird') return { type: 'bigbird', blockSize: block, windowBlocks: 1, globalBlocks: [0], randomBlocks: 2, seed: 0 };
  return null;
}
