/**
 * attnlab: attention mechanisms on WebAssembly.
 *
 * ```ts
 * import { load } from 'attnlab';
 * const lib = await load();
 * const { output, weights } = lib.attention(q, k, v, { causal: true, returnWeights: true });
 * ```
 */
export { load, Attnlab } from './attnlab.js';
export type {
  AttentionOptions, AttentionResult, BoolTensor, HeapStats, KernelName, LoadOptions, Mask,
  MaskedSoftmaxOptions, MultiHeadOptions, MultiHeadParams, NadarayaWatsonOptions,
  NadarayaWatsonResult, ScoreName, ScoreParams, Tensor, Variant,
} from './types.js';
