// The checkpoint module (cpp/bindings/pretrained.cpp, built as attnlab-pretrained-<variant>):
// its interface and its instantiation. Kept apart from wasm-module.ts / loader.ts, whose module
// is the home page's: loading a checkpoint costs the page nothing until loadModel() is called.
import { fastestSingleThreaded, importGlue, instantiateGlue, startThreads, threadsSupported, type GlueAssets } from '../loader.js';
import type { ModuleCommon, Ptr, Q8RowGroups } from '../wasm-module.js';

/** pretrainedOpen's arguments: config.json's text and the safetensors header copied into the heap. */
export interface PretrainedOpenCall {
  config: string;
  header: Ptr;
  headerLength: number;
  fileSize: number;
  /** Bytes the parameters and KV cache may take. */
  maxBytes: number;
  /** int8 weights for the dense layers and the output projection. */
  quantize: boolean;
}

export interface PretrainedInfoOut {
  id: number;
  architecture: string;
  family: 'gpt2' | 'bert' | 'gpt-neo';
  layers: number;
  heads: number;
  hidden: number;
  vocab: number;
  /** BERT's token types (type_vocab_size; 2 where the config does not say). */
  typeVocab: number;
  positions: number;
  /** false: BertModel's last hidden states instead of logits. */
  logits: boolean;
  parameterBytes: number;
}

/** pretrainedRun's arguments: token ids (and BERT's token types, or null), each in int32's range. */
export interface PretrainedRunCall {
  id: number;
  ids: readonly number[];
  types: readonly number[] | null;
  attentions: boolean;
  /** Decoders: append the ids to the KV cache instead of starting over. */
  extend: boolean;
}

export interface PretrainedRunOut {
  rows: number;
  cols: number;
  ctx: number;
  /** [rows, cols]: logits, or BertModel's hidden states. */
  logits: Float32Array;
  /** [layers, heads, rows, ctx]; only when asked for. */
  attention?: Float32Array;
}

/**
 * The embind functions of cpp/bindings/pretrained.cpp, on wasm-module.ts's convention: each call
 * that can fail returns '' or the error message, and results come back in an `out` object.
 */
export interface PretrainedWasm extends ModuleCommon, Q8RowGroups {
  pretrainedHeaderLength(first8: Ptr, fileSize: number, out: Partial<{ length: number }>): string;
  pretrainedOpen(args: PretrainedOpenCall, out: Partial<PretrainedInfoOut>): string;
  pretrainedFeed(id: number, offset: number, ptr: Ptr, n: number): string;
  pretrainedFinish(id: number): string;
  pretrainedRun(args: PretrainedRunCall, out: Partial<PretrainedRunOut>): string;
  pretrainedDispose(id: number): void;
}

export type PretrainedVariant = 'scalar' | 'simd' | 'simd-threads' | 'relaxed-simd' | 'relaxed-simd-threads';

// Spelled out literally, as loader.ts's: bundlers see `new URL('…', import.meta.url)` and ship them.
const assets: Record<PretrainedVariant, GlueAssets<PretrainedWasm>> = {
  scalar: {
    wasm: () => new URL('../wasm/attnlab-pretrained-scalar.wasm', import.meta.url),
    script: () => new URL('../wasm/attnlab-pretrained-scalar.mjs', import.meta.url),
    module: () => importGlue(new URL('../wasm/attnlab-pretrained-scalar.mjs', import.meta.url)),
  },
  simd: {
    wasm: () => new URL('../wasm/attnlab-pretrained-simd.wasm', import.meta.url),
    script: () => new URL('../wasm/attnlab-pretrained-simd.mjs', import.meta.url),
    module: () => importGlue(new URL('../wasm/attnlab-pretrained-simd.mjs', import.meta.url)),
  },
  'simd-threads': {
    wasm: () => new URL('../wasm/attnlab-pretrained-simd-threads.wasm', import.meta.url),
    script: () => new URL('../wasm/attnlab-pretrained-simd-threads.mjs', import.meta.url),
    module: () => importGlue(new URL('../wasm/attnlab-pretrained-simd-threads.mjs', import.meta.url)),
    worker: () => new URL('../wasm/attnlab-pretrained-simd-threads.worker.js', import.meta.url),
  },
  'relaxed-simd': {
    wasm: () => new URL('../wasm/attnlab-pretrained-relaxed-simd.wasm', import.meta.url),
    script: () => new URL('../wasm/attnlab-pretrained-relaxed-simd.mjs', import.meta.url),
    module: () => importGlue(new URL('../wasm/attnlab-pretrained-relaxed-simd.mjs', import.meta.url)),
  },
  'relaxed-simd-threads': {
    wasm: () => new URL('../wasm/attnlab-pretrained-relaxed-simd-threads.wasm', import.meta.url),
    script: () => new URL('../wasm/attnlab-pretrained-relaxed-simd-threads.mjs', import.meta.url),
    module: () => importGlue(new URL('../wasm/attnlab-pretrained-relaxed-simd-threads.mjs', import.meta.url)),
    worker: () => new URL('../wasm/attnlab-pretrained-relaxed-simd-threads.worker.js', import.meta.url),
  },
};

/**
 * A fresh instance per model: its heap holds that model alone, and dispose() frees it whole.
 * `threads` > 1 takes the build's threaded twin (SharedArrayBuffer: Node, or a cross-origin isolated
 * page; attnlab may be on another origin, whose host sends CORP: instantiateGlue starts the pool).
 */
export async function instantiatePretrained(variant?: 'scalar' | 'simd' | 'relaxed-simd', threads = 1): Promise<PretrainedWasm> {
  if (threads > 1 && !threadsSupported())
    throw new Error('loadModel: options.threads: expected 1 here (threads need SharedArrayBuffer: a cross-origin isolated page), got ' + threads);
  // By default the fastest build the engine validates (relaxed SIMD's fused multiply-add first).
  const single = variant ?? fastestSingleThreaded();
  const v: PretrainedVariant = threads <= 1 ? single : single === 'relaxed-simd' ? 'relaxed-simd-threads' : 'simd-threads';
  // Emscripten 3.1.6's threaded factory waits for its whole pool: n - 1 workers (the caller is the
  // nth). The library's loader starts them (a same-origin bootstrap where attnlab is hosted elsewhere).
  const m = await instantiateGlue(assets[v], v.endsWith('-threads') ? threads - 1 : 0);
  if (v.endsWith('-threads')) {
    const err = await startThreads(m, threads);
    if (err) throw new Error(`loadModel: ${err}`);
  }
  return m;
}
