/**
 * attnlab: attention mechanisms on WebAssembly.
 *
 * ```ts
 * import { load } from 'attnlab';
 * const lib = await load();
 * const { output, weights } = lib.attention(q, k, v, { causal: true, returnWeights: true });
 *
 * // WebGPU where there is an adapter, else WebAssembly; the …Async ops serve both.
 * const gpuLib = await load({ backend: 'auto' });
 * const { output: o } = await gpuLib.attentionAsync(q, k, v, { causal: true });
 * ```
 */
export { load, Attnlab } from './attnlab.js';
export type {
  AttentionOptions, AttentionPattern, AttentionPatternOptions, AttentionResult, AttentionResultWithWeights, AttentionScoresOptions, BigBirdPattern,
  BoolTensor, BoolTensorInput, EluAttentionOptions, FavorAttentionOptions, HeapStats, KernelName,
  LinearAttentionOptions, LinearOptions, LinformerAttentionOptions, LoadOptions, LocalPattern, LongformerPattern,
  Mask, MaskedSoftmaxOptions, MultiHeadOptions, MultiHeadParams, NadarayaWatsonOptions,
  NadarayaWatsonResult, RopeOptions, ScoreName, ScoreParams, Tensor, TensorInput, Variant,
} from './types.js';
export type {
  Int32Tensor, LshAttentionOptions, LshAttentionResult, ShawOptions, SynthesizerMlp, SynthesizerOptions, T5BiasOptions,
} from './types.js';
export { Translator, translatorNames } from './translator.js';
export { WorkerTranslator } from './translator-remote.js';
export type {
  AlignmentAttention, BeamResult, LoadProgress, LoadTranslatorOptions, LoadWorkerTranslatorOptions, SentenceTranslation, TransformerAttention,
  TranslateOptions, TranslationResult, TranslatorArch, TranslatorInfo, TranslatorName, TranslatorSource, WorkerTranslateOptions,
} from './translator.js';
export type {
  CreateTrainerOptions, TrainerExample, TrainerOptions, TrainerProgress, TrainerResult, TrainerSession, TrainerTask,
} from './trainer.js';
export type { Backend, GpuAdapterInfo, GpuCacheOptions, GpuProvider, GpuStats } from './types.js';
export { GpuUnavailableError } from './webgpu/errors.js';
export * from './pretrained/index.js';
