// The checkpoint module (cpp/bindings/pretrained.cpp, built as attnlab-pretrained-<variant>):
// its interface and its instantiation. Kept apart from wasm-module.ts / loader.ts, whose module
// is the home page's: loading a checkpoint costs the page nothing until loadModel() is called.
import { isNode, simdSupported } from '../loader.js';

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
}

type Factory = (options: { wasmBinary?: Uint8Array; locateFile?: (p: string) => string }) => Promise<PretrainedWasm>;

const assets = {
  scalar: {
    wasm: () => new URL('../wasm/attnlab-pretrained-scalar.wasm', import.meta.url),
    script: () => new URL('../wasm/attnlab-pretrained-scalar.js', import.meta.url),
    module: () => new URL('../wasm/attnlab-pretrained-scalar.mjs', import.meta.url),
  },
  simd: {
    wasm: () => new URL('../wasm/attnlab-pretrained-simd.wasm', import.meta.url),
    script: () => new URL('../wasm/attnlab-pretrained-simd.js', import.meta.url),
    module: () => new URL('../wasm/attnlab-pretrained-simd.mjs', import.meta.url),
  },
};

type NodeProcess = { getBuiltinModule?: (id: string) => unknown };
const node = <T>(id: string): T => ((globalThis as { process?: NodeProcess }).process!.getBuiltinModule!(id) as T);

/** A fresh instance per model: its heap holds that model alone, and dispose() frees it whole. */
export async function instantiatePretrained(variant?: 'scalar' | 'simd'): Promise<PretrainedWasm> {
  const a = assets[variant ?? (simdSupported() ? 'simd' : 'scalar')];
  if (isNode) {
    const { createRequire } = node<{ createRequire: (from: string) => (id: string) => unknown }>('node:module');
    const { fileURLToPath } = node<{ fileURLToPath: (u: URL) => string }>('node:url');
    const { readFile } = node<{ promises: { readFile: (p: string) => Promise<Uint8Array> } }>('node:fs').promises;
    const factory = createRequire(import.meta.url)(fileURLToPath(a.script())) as Factory;
    return factory({ wasmBinary: await readFile(fileURLToPath(a.wasm())) });
  }
  const glue = (await import(/* @vite-ignore */ /* webpackIgnore: true */ a.module().href)) as { default: Factory };
  return glue.default({ locateFile: (p) => (p.endsWith('.wasm') ? a.wasm().href : p) });
}
