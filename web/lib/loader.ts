// Finds and instantiates a WebAssembly build. Asset URLs are spelled out literally so bundlers
// (Vite, webpack) see `new URL('…', import.meta.url)` and ship the files.
import type { ModuleFactory, WasmModule } from './wasm-module.js';
import type { Variant } from './types.js';

interface Assets {
  wasm: () => URL;
  /** The classic-script glue: required by Node, importScripts()-ed by pthread workers. */
  script: () => URL;
  /** The ES module twin of `script`, for browsers. */
  module: () => Promise<{ default: ModuleFactory }>;
  worker?: () => URL;
}

/**
 * The ES glue is imported by URL, not by a static specifier: bundlers ship it as an asset (from
 * the literal `new URL`) and leave this import alone, so attnlab's module graph has no dynamic
 * imports to split. Vite can then bundle Workers that import attnlab (the trainer's, a user's) in
 * its default 'iife' worker format, with no configuration.
 */
const importGlue = (url: URL): Promise<{ default: ModuleFactory }> =>
  import(/* @vite-ignore */ /* webpackIgnore: true */ url.href);

const assets: Record<Variant, Assets> = {
  scalar: {
    wasm: () => new URL('./wasm/attnlab-scalar.wasm', import.meta.url),
    script: () => new URL('./wasm/attnlab-scalar.js', import.meta.url),
    module: () => importGlue(new URL('./wasm/attnlab-scalar.mjs', import.meta.url)),
  },
  simd: {
    wasm: () => new URL('./wasm/attnlab-simd.wasm', import.meta.url),
    script: () => new URL('./wasm/attnlab-simd.js', import.meta.url),
    module: () => importGlue(new URL('./wasm/attnlab-simd.mjs', import.meta.url)),
  },
  'simd-threads': {
    wasm: () => new URL('./wasm/attnlab-simd-threads.wasm', import.meta.url),
    script: () => new URL('./wasm/attnlab-simd-threads.js', import.meta.url),
    module: () => importGlue(new URL('./wasm/attnlab-simd-threads.mjs', import.meta.url)),
    worker: () => new URL('./wasm/attnlab-simd-threads.worker.js', import.meta.url),
  },
};

type NodeProcess = {
  versions?: { node?: string };
  getBuiltinModule?: (id: string) => unknown;
};
const nodeProcess = (globalThis as { process?: NodeProcess }).process;

export const isNode = typeof nodeProcess?.versions?.node === 'string' && typeof (globalThis as { window?: unknown }).window === 'undefined';

/** A Node built-in without a static import, so browser bundles never see `node:` specifiers. */
function nodeBuiltin<T>(id: string): T {
  const get = nodeProcess?.getBuiltinModule;
  if (!get) throw new Error(`attnlab needs Node >= 20.16 (process.getBuiltinModule); this is Node ${nodeProcess?.versions?.node}`);
  return get(id) as T;
}

// The smallest module using a SIMD128 instruction (i8x16.splat); validates only where SIMD runs.
const simdProbe = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);

export function simdSupported(): boolean {
  try {
    return WebAssembly.validate(simdProbe);
  } catch {
    return false;
  }
}

/** Threads need SharedArrayBuffer; browsers grant it to cross-origin isolated pages only. */
export function threadsSupported(): boolean {
  if (typeof SharedArrayBuffer === 'undefined') return false;
  if (isNode) return true;
  return (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true;
}

export function hardwareThreads(): number {
  if (isNode) {
    const os = nodeBuiltin<{ availableParallelism?: () => number; cpus: () => unknown[] }>('node:os');
    return os.availableParallelism?.() ?? os.cpus().length;
  }
  return (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency ?? 1;
}

export async function instantiate(variant: Variant, poolSize: number): Promise<WasmModule> {
  const a = assets[variant];
  if (isNode) {
    const { createRequire } = nodeBuiltin<{ createRequire: (from: string) => (id: string) => unknown }>('node:module');
    const { fileURLToPath } = nodeBuiltin<{ fileURLToPath: (u: URL) => string }>('node:url');
    const { readFile } = nodeBuiltin<{ promises: { readFile: (p: string) => Promise<Uint8Array> } }>('node:fs').promises;
    const factory = createRequire(import.meta.url)(fileURLToPath(a.script())) as ModuleFactory;
    // Emscripten 3.1.6 would fetch() a file path in Node 20; hand it the bytes instead.
    const wasmBinary = await readFile(fileURLToPath(a.wasm()));
    return factory({
      wasmBinary,
      pthreadPoolSize: poolSize,
      // Relative to the glue script: a literal-free `new URL(…)` keeps bundlers from copying the
      // whole wasm/ directory into browser builds.
      locateFile: (path) => fileURLToPath(new URL(path, a.script())),
    });
  }
  const factory = (await a.module()).default;
  // A worker that fails to start would leave the factory's promise pending forever (Emscripten
  // only logs it): turn that log line into a rejection.
  let failed: (e: Error) => void = () => {};
  const workerFailure = new Promise<never>((_, reject) => (failed = reject));
  const module = factory({
    pthreadPoolSize: poolSize,
    mainScriptUrlOrBlob: a.script().href,
    locateFile: (path) => {
      if (path.endsWith('.wasm')) return a.wasm().href;
      if (path.endsWith('.worker.js') && a.worker) return workerUrl(a.worker());
      return path;
    },
    printErr: (text: string) => {
      if (/worker sent an error|failed to asynchronously prepare wasm/i.test(text)) {
        failed(new Error(`load: the '${variant}' build failed to start: ${text}`));
      }
      console.warn(text);
    },
  });
  return Promise.race([module, workerFailure]);
}

/**
 * Bundlers may inline a small worker script as a data: URL; a worker from a data: URL has an
 * opaque origin and cannot load the rest of the build. A blob: URL keeps the page's origin.
 */
function workerUrl(url: URL): string {
  if (url.protocol !== 'data:') return url.href;
  const [head, body] = url.href.split(',', 2);
  const text = head.endsWith(';base64') ? atob(body) : decodeURIComponent(body);
  return URL.createObjectURL(new Blob([text], { type: 'text/javascript' }));
}
