import type { TranslatorInfo } from './translator.js';
/**
 * The Emscripten module as the bindings (cpp/bindings/) expose it: one typed parameter object (or
 * a few positional numbers) per call. Internal.
 *
 * One error convention: every call that can fail returns '' or the message that withScratch()
 * (heap.ts) throws after its `fn: ` prefix. Pointers are byte offsets into the heap; `null` where
 * a pointer is optional. Results that are not written to caller-allocated heap memory come back in
 * an `out` object: text as strings, tensors as JS-owned typed arrays (copied from the heap by the
 * call, not printed as text).
 */
export type Ptr = number;

/** Scores' dimensions: q [...lead, Sq, Dq], k [...lead, Sk, Dk], v [...lead, Sk, Dv]. */
export interface DimsArgs {
  lead: number[];
  Sq: number;
  Sk: number;
  Dq: number;
  Dk: number;
  Dv: number;
}

/** The masks over scores [...lead, Sq, Sk] (masks.ts builds them). */
export interface MaskArgs {
  causal: boolean;
  /** Key position of query row 0 (causal, ALiBi, T5 and Shaw read query i at i + queryOffset). */
  queryOffset: number;
  bools: { ptr: Ptr; shape: number[]; trueBlocks: boolean }[];
  additive: { ptr: Ptr; shape: number[] }[];
  validLens: { ptr: Ptr; length: number } | null;
  /** The paper's slopes when `slopes` is null; the core fills `table` [heads, Sq + Sk - 1]. */
  alibi?: { slopes: Ptr | null; heads: number; table: Ptr } | null;
  t5?: T5TableArgs | null;
}

export interface T5Scheme {
  heads: number;
  numBuckets: number;
  maxDistance: number;
  bidirectional: boolean;
}

/** T5's learned weights [heads, numBuckets] and room for its bias diagonals [heads, Sq + Sk - 1]. */
export interface T5TableArgs extends T5Scheme {
  weights: Ptr;
  table: Ptr;
}

export type ScoreArg = 'scaled_dot' | 'dot' | 'general' | 'additive';

export interface ScoreCall extends DimsArgs {
  q: Ptr;
  k: Ptr;
  score: ScoreArg;
  W: Ptr | null;
  Wq: Ptr | null;
  Wk: Ptr | null;
  wv: Ptr | null;
  hidden: number;
  /** 0: the score's default. */
  scale: number;
}

export interface AttentionCall extends ScoreCall {
  v: Ptr;
  masks: MaskArgs;
  out: Ptr;
  weights: Ptr | null;
}

export interface PatternArg {
  type: 'local' | 'longformer' | 'bigbird';
  window: number;
  global: number[];
  blockSize: number;
  windowBlocks: number;
  randomBlocks: number;
  seed: number;
}

export interface RopeArg {
  base: number;
  offset: number;
  interleaved: boolean;
}

export interface ShawArg {
  keys: Ptr;
  values: Ptr | null;
  maxDistance: number;
}

export interface MultiHeadCall {
  query: Ptr;
  key: Ptr;
  value: Ptr;
  B: number;
  L: number;
  S: number;
  E: number;
  H: number;
  inProjWeight: Ptr;
  inProjBias: Ptr | null;
  outProjWeight: Ptr;
  outProjBias: Ptr | null;
  masks: MaskArgs;
  out: Ptr;
  weights: Ptr | null;
  averageWeights: boolean;
  rope: RopeArg | null;
  shaw: ShawArg | null;
}

export interface SynthMlpArg {
  W1: Ptr;
  b1: Ptr | null;
  W2: Ptr;
  b2: Ptr | null;
  hidden: number;
  out: number;
}

export interface SynthesizerCall {
  kind: 'dense' | 'random' | 'factorized-dense' | 'factorized-random';
  x: Ptr | null;
  v: Ptr;
  batch: number;
  S: number;
  D: number;
  Dv: number;
  mlp: SynthMlpArg | null;
  mlpB: SynthMlpArg | null;
  /** null: the fixed random forms, drawn by the core from `seed`. */
  R: Ptr | null;
  R1: Ptr | null;
  R2: Ptr | null;
  rank: number;
  seed: number;
  q: Ptr | null;
  k: Ptr | null;
  Dqk: number;
  dotWeight: number;
  causal: boolean;
  out: Ptr;
  weights: Ptr | null;
}

export interface LinearAttentionCall {
  method: 'elu' | 'favor+' | 'linformer';
  q: Ptr;
  k: Ptr;
  v: Ptr;
  batch: number;
  Sq: number;
  Sk: number;
  D: number;
  Dv: number;
  causal: boolean;
  features: number;
  rank: number;
  /** FAVOR+'s features and Linformer's E, F (when null) are drawn by the core from it. */
  seed: number;
  E: Ptr | null;
  F: Ptr | null;
  out: Ptr;
}

export interface LshAttentionCall {
  qk: Ptr;
  v: Ptr;
  batch: number;
  S: number;
  D: number;
  Dv: number;
  nBuckets: number;
  nHashes: number;
  /** 0: S / nBuckets. */
  chunkSize: number;
  causal: boolean;
  seed: number;
  out: Ptr;
  buckets: Ptr | null;
  attended: Ptr | null;
}

/** What translatorCreate reports: the public TranslatorInfo but what its config says (arch, languages), and the id the bindings hold it by. */
export interface TranslatorInfoOut extends Omit<TranslatorInfo, 'arch' | 'srcLang' | 'tgtLang'> {
  id: number;
}

/** One sentence's translation. */
export interface TranslationOut {
  /** Every string, one after another: the text, the source tokens, the target tokens, then each beam's text and tokens. */
  strings: string;
  /** Each string's length in `strings` (UTF-16 code units). */
  units: Int32Array;
  /** [source tokens, target tokens, beams, each beam's tokens]. */
  counts: Int32Array;
  /** Source pieces before the model's length limit: more than the source tokens means cut. */
  sourcePieces: number;
  kind: 'alignment' | 'transformer';
  layers: number;
  heads: number;
  /** [layers, heads, T, S] (the alignment: one layer and head). */
  cross: Float32Array;
  /** [layers, heads, T, T]; empty for 'alignment'. */
  decoderSelf: Float32Array;
  /** [layers, heads, S, S]; empty for 'alignment'. */
  encoderSelf: Float32Array;
  /** Each beam's score, then each beam's log-probability. */
  scores: Float32Array;
  /** Each beam: 1 when decoding stopped it at maxLength (its '</s>' forced), else 0. */
  cut: Int32Array;
}

/** The toy trainer's settings, checked by trainer-options.ts (cpp/src/nn/trainer.cpp checks them again). */
export interface TrainerCreateCall {
  task: string; arch: string; hidden: number; symbols: number; minLength: number; maxLength: number; batch: number;
  lr: number; seed: number;
}

export interface TrainerStepOut {
  step: number;
  loss: number;
  tokensPerSecond: number;
}

export interface TrainerEvaluationOut {
  exactMatch: number;
  /** attention: [output.length, source.length]. */
  example: { source: string[]; target: string[]; output: string[]; attention: Float32Array } | null;
}

export interface WasmModule extends ModuleCommon {
  /** Index of the first value at `ptr` that is not finite (-Infinity passes when allowed), or -1. */
  findNonfinite(ptr: Ptr, n: number, negInfOk: boolean): number;
  attention(args: AttentionCall): string;
  attentionScores(args: ScoreCall & { out: Ptr }): string;
  maskedSoftmax(args: { x: Ptr; lead: number[]; Sq: number; Sk: number; masks: MaskArgs; out: Ptr }): string;
  multiHeadAttention(args: MultiHeadCall): string;
  nadarayaWatson(args: {
    queries: Ptr; keys: Ptr; values: Ptr; batch: number; Nq: number; Nk: number; D: number; Dv: number;
    kernel: string; bandwidth: number; out: Ptr; weights: Ptr | null;
  }): string;
  positionalEncoding(length: number, dim: number, out: Ptr): string;
  sparseAttention(args: AttentionCall & { pattern: PatternArg }): string;
  attentionPattern(args: { pattern: PatternArg; Sq: number; Sk: number; causal: boolean; out: Ptr }): string;
  linearAttention(args: LinearAttentionCall): string;
  linear(args: { x: Ptr; rows: number; in: number; weight: Ptr; bias: Ptr | null; out: number; y: Ptr }): string;
  /** `name`: the argument x came from, which an overflow's Error names. */
  rope(args: RopeArg & { x: Ptr; out: Ptr; outer: number; S: number; inner: number; D: number; name: string }): string;
  shawAttention(args: AttentionCall & { shaw: ShawArg }): string;
  t5BiasTable(args: T5Scheme & { weights: Ptr; Sq: number; Sk: number; queryOffset: number; out: Ptr }): string;
  lshAttention(args: LshAttentionCall): string;
  synthesizer(args: SynthesizerCall): string;
  isa(): string;
}

/**
 * What every module has: the heap, its one thread pool (cpp/bindings/common.cpp) and the
 * pthread workers' hooks (post.js).
 */
export interface ModuleCommon extends RowGroups {
  _malloc(bytes: number): Ptr;
  _free(ptr: Ptr): void;
  memoryBuffer(): ArrayBufferLike;
  /** Bytes malloc has handed out and not had back. */
  heapUsed(): number;
  /** n > 1: the module's work runs on n threads (the -threads builds); '' or the error message. */
  setThreads(n: number): string;
  threadCount(): number;
  /** The pool's threads running so far, the caller's included. */
  threadsStarted(): number;
  /** Wakes the pool's sleeping workers as an op starts, before its inputs are checked and copied. */
  wakeThreads(): void;
  unrefWorkers(): void;
  terminateWorkers(): void;
}

/**
 * What every module binds for the fp32 register blocks' row groups (cpp/bindings/common.cpp):
 * loader.ts times both sizes and sets one (attnlab/row_groups.hpp).
 */
export interface RowGroups {
  /** 4, or 6 where the build has 6-row groups; returns the rows now used. */
  setRowGroups(rows: number): number;
  /** An attention tile's two products on `rows`-row groups, `reps` times (a checksum). */
  rowGroupsProbe(rows: number, reps: number): number;
}

/**
 * What the modules with the int8 product bind (cpp/bindings/q8.cpp): rows per pass over its
 * weights, which loader.ts times and sets, and the layout weights loaded from now on take
 * (attnlab/nn/gemm.hpp).
 */
export interface Q8RowGroups {
  /** 4, or 5; returns the rows now used. */
  setQ8RowGroups(rows: number): number;
  /** A 5-row product in passes of at most `rows` rows, `reps` times (a checksum). */
  q8RowGroupsProbe(rows: number, reps: number): number;
  /**
   * Relaxed SIMD's byte dot product for weights loaded from now on, where the engine computes it
   * right (the default there); returns whether it is used. The same results either way.
   */
  setQ8Quads(on: boolean): boolean;
  q8Quads(): boolean;
}

/**
 * The nn module (cpp/bindings/translate.cpp, built as attnlab-nn-<variant>): the translators and
 * the toy trainer, instantiated on first use so the home page's module does not carry them.
 */
export interface NnModule extends ModuleCommon, Q8RowGroups {
  translatorCreate(ptr: Ptr, len: number, out: Partial<TranslatorInfoOut>): string;
  translatorTranslate(id: number, text: string, beam: number, maxLength: number, lengthPenalty: number, out: Partial<TranslationOut>): string;
  trainerCreate(args: TrainerCreateCall, out: Partial<{ id: number; parameters: number }>): string;
  trainerStep(id: number, steps: number, out: Partial<TrainerStepOut>): string;
  trainerEvaluate(id: number, n: number, seed: number, out: Partial<TrainerEvaluationOut>): string;
  /** Frees a translator or a trainer (they share ids). */
  dispose(id: number): void;
}

export interface FactoryOptions {
  wasmBinary?: Uint8Array;
  locateFile?: (path: string) => string;
  mainScriptUrlOrBlob?: string;
  pthreadPoolSize?: number;
  printErr?: (text: string) => void;
}

export type ModuleFactory = (options: FactoryOptions) => Promise<WasmModule>;
