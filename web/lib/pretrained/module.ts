// The checkpoint module (cpp/bindings/pretrained.cpp, built as attnlab-pretrained-<variant>):
// its interface and its instantiation. Kept apart from wasm-module.ts / loader.ts, whose module
// is the home page's: loading a checkpoint costs the page nothing until loadModel() is called.
import { fastestSingleThreaded, importGlue, instantiateGlue, isNode, threadsSupported, type GlueAssets } from '../loader.js';

/** The embind functions of cpp/bindings/pretrained.cpp. Each returns JSON text; `{"error": …}` on failure. */
export interface PretrainedWasm {
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  memoryBuffer(): ArrayBufferLike;
  heapUsed(): number;
  pretrainedHeaderLength(first8: number, fileSize: number): string;
  pretrainedOpen(config: string, header: number, headerLength: number, fileSize: number, maxBytes: number): string;
  pretrainedFeed(id: number, offset: number, ptr: number, n: number): string;
  pretrainedFinish(id: number): string;
  pretrainedRun(id: number, ids: number, n: number, types: number, attentions: boolean, extend: boolean): string;
  pretrainedDispose(id: number): void;
  pretrainedSetThreads(n: number): string;
  unrefWorkers(): void;
  terminateWorkers(): void;
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
 * `threads` > 1 takes the simd-threads build (SharedArrayBuffer: Node, or a cross-origin isolated
 * page serving attnlab from its own origin).
 */
export async function instantiatePretrained(variant?: 'scalar' | 'simd' | 'relaxed-simd', threads = 1): Promise<PretrainedWasm> {
  if (threads > 1 && !threadsSupported())
    throw new Error('loadModel: options.threads: expected 1 here (threads need SharedArrayBuffer: a cross-origin isolated page), got ' + threads);
  // By default the fastest build the engine validates (relaxed SIMD's fused multiply-add first).
  const single = variant ?? fastestSingleThreaded();
  const v: PretrainedVariant = threads <= 1 ? single : single === 'relaxed-simd' ? 'relaxed-simd-threads' : 'simd-threads';
  // Emscripten 3.1.6's threaded factory waits for its whole pool: n - 1 workers (the caller is the
  // nth). The library's loader starts them (a same-origin bootstrap where attnlab is hosted elsewhere).
  const m = await instantiateGlue(assets[v], v === 'simd-threads' ? threads - 1 : 0);
  if (v.endsWith('-threads')) {
    const r = JSON.parse(m.pretrainedSetThreads(threads)) as { error?: string };
    if (r.error) throw new Error(`loadModel: ${r.error}`);
    if (isNode) m.unrefWorkers();  // idle workers must not keep a Node process alive
  }
  return m;
}
