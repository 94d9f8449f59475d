// Finds and instantiates a WebAssembly build. Asset URLs are spelled out literally so bundlers
// (Vite, webpack) see `new URL('…', import.meta.url)` and ship the files.
import type { FactoryOptions, ModuleCommon, NnModule, Q8RowGroups, RowGroups, WasmModule } from './wasm-module.js';
import type { PretrainedWasm } from './pretrained/module.js';
import { guardModule } from './trap.js';
import type { Variant } from './types.js';

/** One build's files. `M` is the module its factory resolves to. */
export interface GlueAssets<M> {
  wasm: () => URL;
  /**
   * The glue: one ES module per build, imported by browsers, bundlers and Node alike; pthread
   * workers import() it too (by the URL given as `mainScriptUrlOrBlob`).
   */
  script: () => URL;
  module: () => Promise<{ default: (options: FactoryOptions) => Promise<M> }>;
  worker?: () => URL;
}

/**
 * The glue is imported by URL, not by a static specifier: bundlers ship it as an asset (from
 * the literal `new URL`) and leave this import alone, so attnlab's module graph has no dynamic
 * imports to split. Vite can then bundle Workers that import attnlab (the trainer's, a user's) in
 * its default 'iife' worker format, with no configuration.
 */
export const importGlue = <M>(url: URL): Promise<{ default: (options: FactoryOptions) => Promise<M> }> =>
  import(/* @vite-ignore */ /* webpackIgnore: true */ url.href).catch((e: unknown) => {
    const reason = e instanceof Error ? e.message : String(e);
    // Vite's dev server pre-bundles attnlab into node_modules/.vite/deps/, where the relative
    // URLs point at nothing: say the one setting that fixes it.
    if (url.pathname.includes('/.vite/deps/')) throw new GlueMovedError(reason, url, GlueMovedError.vite);
    // A bundler that ships no files named by new URL (esbuild, Rollup) left this code in its bundle and
    // the URL as written, beside the bundle: say so, and what to do.
    if (!/\/loader\.[jt]s$/.test(new URL(import.meta.url).pathname) && /\/wasm\/attnlab-[a-z-]+\.mjs$/.test(url.pathname)) {
      throw new GlueMovedError(reason, url, GlueMovedError.bundled(import.meta.url));
    }
    throw e;
  });

/** The glue's import failed because attnlab's code was moved away from its files: `hint` says how. */
export class GlueMovedError extends Error {
  static readonly vite = "Vite's dev server pre-bundled attnlab into .vite/deps/, away from its WebAssembly files; " +
    "add optimizeDeps: { exclude: ['attnlab'] } to vite.config";
  static bundled(bundle: string): string {
    return `attnlab was bundled into ${bundle} without the files it loads by new URL('./wasm/…', import.meta.url), ` +
      "which this bundler does not ship (esbuild and Rollup do not); keep attnlab external to the bundle (attnlab's README: Bundlers)";
  }

  constructor(reason: string, readonly url: URL, readonly hint: string) {
    super(`${reason}: ${hint}`);
  }
}

const assets: Record<Variant, GlueAssets<WasmModule>> = {
  scalar: {
    wasm: () => new URL('./wasm/attnlab-scalar.wasm', import.meta.url),
    script: () => new URL('./wasm/attnlab-scalar.mjs', import.meta.url),
    module: () => importGlue(new URL('./wasm/attnlab-scalar.mjs', import.meta.url)),
  },
  simd: {
    wasm: () => new URL('./wasm/attnlab-simd.wasm', import.meta.url),
    script: () => new URL('./wasm/attnlab-simd.mjs', import.meta.url),
    module: () => importGlue(new URL('./wasm/attnlab-simd.mjs', import.meta.url)),
  },
  'simd-threads': {
    wasm: () => new URL('./wasm/attnlab-simd-threads.wasm', import.meta.url),
    script: () => new URL('./wasm/attnlab-simd-threads.mjs', import.meta.url),
    module: () => importGlue(new URL('./wasm/attnlab-simd-threads.mjs', import.meta.url)),
    worker: () => new URL('./wasm/attnlab-simd-threads.worker.js', import.meta.url),
  },
  'relaxed-simd': {
    wasm: () => new URL('./wasm/attnlab-relaxed-simd.wasm', import.meta.url),
    script: () => new URL('./wasm/attnlab-relaxed-simd.mjs', import.meta.url),
    module: () => importGlue(new URL('./wasm/attnlab-relaxed-simd.mjs', import.meta.url)),
  },
  'relaxed-simd-threads': {
    wasm: () => new URL('./wasm/attnlab-relaxed-simd-threads.wasm', import.meta.url),
    script: () => new URL('./wasm/attnlab-relaxed-simd-threads.mjs', import.meta.url),
    module: () => importGlue(new URL('./wasm/attnlab-relaxed-simd-threads.mjs', import.meta.url)),
    worker: () => new URL('./wasm/attnlab-relaxed-simd-threads.worker.js', import.meta.url),
  },
};

// The translators and the trainer (attnlab-nn-<variant>): fetched on their first use only.
const nnAssets: Record<Variant, GlueAssets<NnModule>> = {
  scalar: {
    wasm: () => new URL('./wasm/attnlab-nn-scalar.wasm', import.meta.url),
    script: () => new URL('./wasm/attnlab-nn-scalar.mjs', import.meta.url),
    module: () => importGlue(new URL('./wasm/attnlab-nn-scalar.mjs', import.meta.url)),
  },
  simd: {
    wasm: () => new URL('./wasm/attnlab-nn-simd.wasm', import.meta.url),
    script: () => new URL('./wasm/attnlab-nn-simd.mjs', import.meta.url),
    module: () => importGlue(new URL('./wasm/attnlab-nn-simd.mjs', import.meta.url)),
  },
  'simd-threads': {
    wasm: () => new URL('./wasm/attnlab-nn-simd-threads.wasm', import.meta.url),
    script: () => new URL('./wasm/attnlab-nn-simd-threads.mjs', import.meta.url),
    module: () => importGlue(new URL('./wasm/attnlab-nn-simd-threads.mjs', import.meta.url)),
    worker: () => new URL('./wasm/attnlab-nn-simd-threads.worker.js', import.meta.url),
  },
  'relaxed-simd': {
    wasm: () => new URL('./wasm/attnlab-nn-relaxed-simd.wasm', import.meta.url),
    script: () => new URL('./wasm/attnlab-nn-relaxed-simd.mjs', import.meta.url),
    module: () => importGlue(new URL('./wasm/attnlab-nn-relaxed-simd.mjs', import.meta.url)),
  },
  'relaxed-simd-threads': {
    wasm: () => new URL('./wasm/attnlab-nn-relaxed-simd-threads.wasm', import.meta.url),
    script: () => new URL('./wasm/attnlab-nn-relaxed-simd-threads.mjs', import.meta.url),
    module: () => importGlue(new URL('./wasm/attnlab-nn-relaxed-simd-threads.mjs', import.meta.url)),
    worker: () => new URL('./wasm/attnlab-nn-relaxed-simd-threads.worker.js', import.meta.url),
  },
};

type NodeProcess = {
  versions?: { node?: string; v8?: string; bun?: string };
  getBuiltinModule?: (id: string) => unknown;
};
const nodeProcess = (globalThis as { process?: NodeProcess }).process;

/** Whether `g` (a realm's global) is Node's, or a runtime's that reports Node's versions: not a page. */
function isNodeRealm(g: object): boolean {
  const { process, window } = g as { process?: NodeProcess; window?: unknown };
  return typeof process?.versions?.node === 'string' && window === undefined;
}
export const isNode = isNodeRealm(globalThis);

/** A Node built-in without a static import, so browser bundles never see `node:` specifiers. */
export function nodeBuiltin<T>(id: string): T {
  const get = nodeProcess?.getBuiltinModule;
  if (!get) throw new Error(`attnlab needs Node >= 20.16 (process.getBuiltinModule); this is Node ${nodeProcess?.versions?.node}`);
  return get(id) as T;
}

const validates = (bytes: Uint8Array<ArrayBuffer>): boolean => {
  try {
    return WebAssembly.validate(bytes);
  } catch {
    return false;
  }
};

// The smallest module using a SIMD128 instruction (i8x16.splat); validates only where SIMD runs.
const simdProbe = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);
// The smallest module with an exception-handling block (try / catch_all, the encoding
// -fwasm-exceptions emits): the SIMD builds' C++ exceptions are WebAssembly's own. Chromium 95,
// Firefox 100, Safari 15.2 and Node 17 have it; of the engines with SIMD128, Firefox 89-99 lack it.
const exceptionsProbe = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 3, 2, 1, 0, 10, 8, 1, 6, 0, 6, 64, 25, 11, 11]);

/** What of the SIMD builds' needs (SIMD128, then exception handling) this engine lacks, or ''. */
export function simdBuildsMissing(): string {
  if (!validates(simdProbe)) return 'WebAssembly SIMD';
  if (!validates(exceptionsProbe)) return 'WebAssembly exception handling';
  return '';
}

/** Whether the SIMD builds run here: SIMD128 and exception handling. */
export const simdSupported = (): boolean => simdBuildsMissing() === '';

// The smallest module using f32x4.relaxed_madd (fd 85 02), of its v128 parameter three times:
// validates only where relaxed SIMD runs (Chromium >= 114, Node >= 21, Node 20 with
// --experimental-wasm-relaxed-simd).
const relaxedProbe = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 6, 1, 96, 1, 123, 1, 123, 3, 2, 1, 0, 10, 13, 1, 11, 0,
  32, 0, 32, 0, 32, 0, 253, 133, 2, 11]);

export function relaxedSimdSupported(): boolean {
  return simdSupported() && validates(relaxedProbe);
}

/** @internal The probes' bytes, for a test that each needs its feature and no other. */
export const featureProbes = { simd: simdProbe, exceptions: exceptionsProbe, relaxed: relaxedProbe };

export const isRelaxed = (v: Variant): boolean => v.startsWith('relaxed-');
export const isThreaded = (v: Variant): boolean => v.endsWith('-threads');

/**
 * The builds load() tries, fastest first: all of them by default; from a requested build down,
 * never to a relaxed one when a non-relaxed build was asked for (its rounding is what the caller
 * chose), nor to a threaded one when a single-threaded build was.
 */
export function variantChain(requested?: Variant): Variant[] {
  const all: Variant[] = ['relaxed-simd-threads', 'relaxed-simd', 'simd-threads', 'simd', 'scalar'];
  return requested ? all.slice(all.indexOf(requested)).filter((v) => (isRelaxed(requested) || !isRelaxed(v)) && (isThreaded(requested) || !isThreaded(v))) : all;
}

/** The fastest single-threaded build this engine validates: what the trainer's Worker runs. */
export function fastestSingleThreaded(): Variant {
  return relaxedSimdSupported() ? 'relaxed-simd' : simdSupported() ? 'simd' : 'scalar';
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

export function instantiate(variant: Variant, poolSize: number): Promise<WasmModule> {
  return instantiateGlue(assets[variant], poolSize);
}

/**
 * The nn module of `variant`. On a threaded build the translators run on `threads` threads (a
 * beam's rows split between them, a single row's products spread over them; the trainer stays on
 * one); Emscripten 3.1.6's threaded factory never resolves with an empty pool, so a threaded
 * build gets at least one worker, idle with `threads` = 1. Workers are unref'd in Node.
 */
export async function instantiateNn(variant: Variant, threads = 1): Promise<NnModule> {
  const m = await instantiateGlue(nnAssets[variant], isThreaded(variant) ? Math.max(1, threads - 1) : 0);
  if (isThreaded(variant)) {
    const err = await startThreads(m, threads);
    if (err) throw new Error(err);
  }
  return m;
}

/**
 * Sizes a module's pool to `threads` and waits until its workers run: '' or the error message.
 * Each worker allocates its thread-local block from the heap as it starts (Emscripten 3.1.6's
 * emscripten_tls_init), on its own time: in Chromium it came 0-100 ms after setThreads returned,
 * so heapStats() moved by 16-32 bytes under a caller who had just loaded. The first op also gets
 * every thread. Workers already loaded start without the page's event loop; the wait still yields
 * to it, through a MessageChannel, which fake timers (Vitest's, Jest's) leave running where they
 * would freeze setTimeout and Date. It gives up after 20,000 turns (0.2-1 s): ops run correctly on
 * the threads that did start. In Node the workers are then unref'd: idle, they must not keep the
 * process alive.
 */
export async function startThreads(m: ModuleCommon, threads: number): Promise<string> {
  const err = m.setThreads(threads);
  if (err) return err;
  if (m.threadsStarted() < threads) {
    const { port1, port2 } = new MessageChannel();
    try {
      for (let turn = 0; m.threadsStarted() < threads && turn < 20_000; turn++)
        await new Promise((resolve) => { port1.onmessage = resolve; port2.postMessage(null); });
    } finally {
      port1.close();
    }
  }
  if (isNode) m.unrefWorkers();
  return '';
}

/**
 * Every function of the three modules (the core, nn and checkpoint modules) that runs WebAssembly
 * when the library calls it: a Record, so that one added to their interfaces and not here fails
 * to compile. Not post.js's hooks, which are JavaScript alone.
 */
const CALLS: Record<Exclude<keyof (WasmModule & NnModule & PretrainedWasm), 'memoryBuffer' | 'unrefWorkers' | 'terminateWorkers'>, true> = {
  _malloc: true, _free: true, heapUsed: true, setThreads: true, threadCount: true, threadsStarted: true, wakeThreads: true,
  setRowGroups: true, rowGroupsProbe: true, setQ8RowGroups: true, q8RowGroupsProbe: true, setQ8Quads: true, q8Quads: true,
  findNonfinite: true, attention: true, attentionScores: true, maskedSoftmax: true, multiHeadAttention: true, nadarayaWatson: true,
  positionalEncoding: true, sparseAttention: true, attentionPattern: true, linearAttention: true, linear: true, rope: true, shawAttention: true,
  t5BiasTable: true, lshAttention: true, synthesizer: true, isa: true,
  translatorCreate: true, translatorTranslate: true, trainerCreate: true, trainerStep: true, trainerEvaluate: true, dispose: true,
  pretrainedHeaderLength: true, pretrainedOpen: true, pretrainedFeed: true, pretrainedFinish: true, pretrainedRun: true, pretrainedDispose: true,
};

/**
 * Instantiates any of attnlab's builds (the library's, the checkpoint module's) from its files,
 * each of its CALLS recording a trap (trap.ts) from the start, in a Worker too.
 */
export async function instantiateGlue<M extends ModuleCommon>(a: GlueAssets<M>, poolSize: number): Promise<M> {
  const m = await instantiateFiles(a, poolSize);
  guardModule(m, Object.keys(CALLS));
  tuneRowGroups(m);
  return m;
}

// Per realm: the engine decides, and every module follows (undefined: not measured yet).
let sixRows: boolean | undefined;
let fiveQ8Rows: boolean | undefined;

// Node 20's V8 (11.3, relaxed SIMD behind --experimental-wasm-relaxed-simd) computes
// i32x4.relaxed_dot_i8x16_i7x16_add_s wrong in its baseline compiler (Liftoff: twice the dot
// product, the addend dropped) and right once a function is optimised, so the module's own check
// at start (kernels::q8_quads_supported) passes or fails by tier. There the int8 weights keep
// SIMD128's kernel. V8 11.4 (Chrome 114), the first to ship relaxed SIMD, and later compute it right.
const v8Version = nodeProcess?.versions?.v8?.split('.').map(Number) ?? [];
const baselineRelaxedDotWrong = isNode && (v8Version[0] < 11 || (v8Version[0] === 11 && v8Version[1] < 4));

/**
 * Register blocks whose speed is up to the engine's compiler, measured once per realm on the first
 * module that has them, and set on every module before its first op:
 * - the relaxed builds' fp32 blocks (the fused attention kernel's query rows, the dense layer's
 *   rows) can take 6 rows: 12 accumulators, which fit x86-64's 16 vector registers once the
 *   multiply-add is one instruction. Chromium 156 ran attention 1.09-1.12x and the dense layer's
 *   kernel 1.10x faster so, Node 20's V8 attention 1.05-1.07x (it spilled them, at half speed,
 *   while the blocks were inlined into their callers' loops: attnlab/row_groups.hpp). Not timed
 *   in V8 either: timing needs a fine clock, which a page that is not cross-origin isolated (most
 *   pages that embed attnlab) does not have, and there Chromium's relaxed attention had kept 4
 *   rows and run 1.05-1.07x slower (H8 S512: 11.5 against 10.4-10.9 ms).
 * - the int8 product (the translators', int8 checkpoints') can take a beam of 5 rows in one pass
 *   over the weights instead of 2 + 3 (attnlab/nn/gemm.hpp). Not timed in V8 (Node, Chromium), where
 *   it is known to be faster: 1.38x in Node 20, 1.25x in Chromium 156, since its kernel is out of
 *   line. There, timing it caught the 5-row code still in V8's baseline tier (its optimised code
 *   can arrive 30 ms after the module's first calls) in 3 of 40 Node processes, which then chose 2 + 3
 *   and ran beam-5 translations 1.27x slower. Nor timed where its weights take relaxed SIMD's byte
 *   dot product (q8Quads: passes of at most 3 rows, faster still).
 * Outside V8 each is timed in turns against its 4-row form, at least 8 and until neither time has improved by
 * 1% for 4 turns (the first calls run V8's baseline tier), and kept when 2% faster; a few ms each.
 * A page's first moments are noisy (compiler threads share the cores): over fresh Chromium 156
 * pages on 2 cores the ratios came out 1.03-1.15 for 6 fp32 rows and 1.02-1.26 for the 5-row int8
 * pass, where an engine that spills them comes out near 0.6 (Node 20's V8, blocks inlined): 2%
 * picks the wide form where it fits without risking it where it spills. That needs a fine clock:
 * where performance.now() is coarsened (a page that is not cross-origin isolated), engines other
 * than V8 keep 4 rows. Int8 results never depend on it; attention's move only in their last bits, where a
 * group's rows see different numbers of keys.
 */
function tuneRowGroups(m: RowGroups & Partial<Q8RowGroups>): void {
  if (baselineRelaxedDotWrong) m.setQ8Quads?.(false);
  const timed = isNode || (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true;
  if (m.setRowGroups(6) === 6) {
    // ~0.2 ms (4 rows) and 0.3 ms (6) a call once optimised: 40+ ticks of an isolated page's 5 us clock.
    sixRows ??= wideRows(isV8(), timed, () => faster((rows) => m.rowGroupsProbe(rows, 192), 6, true));
    m.setRowGroups(sixRows ? 6 : 4);
  }
  if (m.setQ8RowGroups && m.q8RowGroupsProbe && !m.q8Quads?.()) {
    const probe = m.q8RowGroupsProbe.bind(m);
    fiveQ8Rows ??= wideRows(isV8(), timed, () => faster((rows) => probe(rows, 32), 5, false));  // ~0.2 ms a call
    m.setQ8RowGroups(fiveQ8Rows ? 5 : 4);
  }
}

/**
 * Whether modules take a wide register block (tuneRowGroups): in V8 untimed, where it is known to
 * be faster; elsewhere only where `measure` (timing both forms) says so on a fine clock (`timed`).
 */
export function wideRows(v8: boolean, timed: boolean, measure: () => boolean): boolean {
  return v8 || (timed && measure());
}

/**
 * Whether `g` (the realm's global) is V8: Node (11.3 and later: attnlab needs Node >= 20.16; not
 * Bun, which reports Node's versions but runs JavaScriptCore) or a Chromium-based browser, page or
 * worker (navigator.userAgentData, which secure contexts have; elsewhere the product is timed).
 */
export function isV8(g: object = globalThis): boolean {
  const { process, navigator } = g as { process?: NodeProcess; navigator?: { userAgentData?: { brands?: { brand: string }[] } } };
  if (isNodeRealm(g)) return typeof process?.versions?.bun !== 'string';
  return navigator?.userAgentData?.brands?.some((b) => b.brand === 'Chromium') ?? false;
}

/**
 * Whether `probe(wide)` is 2% faster than `probe(4)`: per row if `perRow` (the probe's work grows
 * with its rows), else per call (the same work either way).
 */
export function faster(probe: (rows: number) => void, wide: number, perRow: boolean): boolean {
  const time = (rows: number) => {
    const t0 = performance.now();
    probe(rows);
    return (performance.now() - t0) / (perRow ? rows : 1);
  };
  let best4 = Infinity, bestWide = Infinity;
  for (let turn = 0, still = 0; turn < 24 && (turn < 8 || still < 4); turn++) {
    const t4 = time(4), tw = time(wide);
    still = t4 < 0.99 * best4 || tw < 0.99 * bestWide ? 0 : still + 1;
    best4 = Math.min(best4, t4);
    bestWide = Math.min(bestWide, tw);
  }
  return bestWide * 1.02 < best4;
}

async function instantiateFiles<M>(a: GlueAssets<M>, poolSize: number): Promise<M> {
  if (isNode) {
    const { fileURLToPath } = nodeBuiltin<{ fileURLToPath: (u: URL) => string }>('node:url');
    const { readFile } = nodeBuiltin<{ promises: { readFile: (p: string) => Promise<Uint8Array> } }>('node:fs').promises;
    const factory = (await a.module()).default;
    // Emscripten 3.1.6 would fetch() a file path in Node 20; hand it the bytes instead.
    const wasmBinary = await readFile(fileURLToPath(a.wasm()));
    return factory({
      wasmBinary,
      pthreadPoolSize: poolSize,
      // Relative to the glue: a literal-free `new URL(…)` keeps bundlers from copying the
      // whole wasm/ directory into browser builds.
      locateFile: (path) => fileURLToPath(new URL(path, a.script())),
    });
  }
  const factory = (await a.module()).default;
  const worker = a.worker ? workerUrl(a.worker()) : null;
  // A worker that fails to start would leave the factory's promise pending forever (Emscripten
  // only logs it): turn that log line into a rejection.
  let failed: (e: Error) => void = () => {};
  const workerFailure = new Promise<never>((_, reject) => (failed = reject));
  // Emscripten 3.1.6 (MODULARIZE) builds the module on this very object: post.js's hooks land
  // here even while the factory's promise is pending, so a failed start can still end its workers.
  const options: FactoryOptions & { terminateWorkers?: () => void } = {
    pthreadPoolSize: poolSize,
    mainScriptUrlOrBlob: a.script().href,
    locateFile: (path) => {
      if (path.endsWith('.wasm')) return a.wasm().href;
      if (path.endsWith('.worker.js') && worker) return worker.href;
      return path;
    },
    printErr: (text: string) => {
      if (/worker sent an error|worker sent an unknown command attnlab:|failed to asynchronously prepare wasm/i.test(text)) failed(new Error(text));
      // The pool's main thread waits for its workers by design (each call's last rows are its
      // own): Emscripten's once-per-page warning about that is not for the host page's console.
      else if (!text.startsWith('Blocking on the main thread is very dangerous')) console.warn(text);
    },
  };
  // A worker the page's Content-Security-Policy refuses (worker-src without blob: for a CDN's
  // bootstrap, or without 'self') never starts and, in Chromium, fires no error on the Worker:
  // load() waited for ever. The page's violation report is the one sign of it.
  const refused = (e: Event) => {
    const v = e as SecurityPolicyViolationEvent;
    if (!worker || v.effectiveDirective !== 'worker-src') return;
    if (worker.href.startsWith('blob:') && v.blockedURI.startsWith('blob')) {
      failed(new Error("the page's Content-Security-Policy (worker-src) refused the threads' workers, which start from blob: URLs when attnlab comes from another origin: add blob: to worker-src"));
    } else if (worker.href.startsWith(v.blockedURI)) {
      failed(new Error(`the page's Content-Security-Policy (worker-src) refused the threads' worker script ${v.blockedURI}`));
    }
  };
  globalThis.addEventListener?.('securitypolicyviolation', refused);
  try {
    return await Promise.race([factory(options), workerFailure]);
  } catch (e) {
    options.terminateWorkers?.();
    throw e;
  } finally {
    // Every pool worker was constructed inside the factory, before it settled.
    worker?.revoke();
    globalThis.removeEventListener?.('securitypolicyviolation', refused);
  }
}

/** The URL a pthread worker starts from, and how to release it once the pool has started. */
interface WorkerUrl {
  href: string;
  revoke(): void;
}

/**
 * Where the threaded build's pthread workers start. A Worker's script must be same-origin with
 * the page, so when attnlab is served from elsewhere (a CDN) the worker starts from a same-origin
 * blob: script that importScripts() the real one (allowed cross-origin for classic scripts; on a
 * cross-origin isolated page the host must send Cross-Origin-Resource-Policy: cross-origin).
 * Bundlers may also inline a small worker script as a data: URL, whose worker has an opaque origin
 * and cannot load the rest of the build: a blob: URL of the same text keeps the page's origin.
 */
function workerUrl(url: URL): WorkerUrl {
  url = classicWorkerScript(url);
  let text: string;
  if (url.protocol === 'data:') {
    const [head, body] = url.href.split(',', 2);
    text = head.endsWith(';base64') ? atob(body) : decodeURIComponent(body);
  } else if (sameOrigin(url)) {
    return { href: url.href, revoke: () => {} };
  } else {
    // A script that fails to load (a host without CORP on an isolated page) is reported as a
    // message once the pool's handlers listen, on its first message ('load'): an error event would
    // reach the page as an uncaught error, and one sent earlier would be lost.
    const href = JSON.stringify(url.href);
    text = `try { importScripts(${href}); } catch (e) {
  self.onmessage = () => postMessage({ cmd: 'attnlab: ' + ${href} + ' did not load (' + e + ')' });
}\n`;
  }
  const href = URL.createObjectURL(new Blob([text], { type: 'text/javascript' }));
  return { href, revoke: () => URL.revokeObjectURL(href) };
}

/**
 * The pthread bootstrap is a classic script that import()s the glue. Vite's dev server rewrites a
 * dynamic import() in any script it serves by adding a static `import` of its helper, which is a
 * SyntaxError in a classic worker, unless the URL marks the script as a classic worker's
 * (`?worker_file&type=classic`, Vite's own marker; then it appends the helper instead). Static
 * hosts and CDNs ignore the query; data: and blob: URLs take none.
 */
function classicWorkerScript(url: URL): URL {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return url;
  const marked = new URL(url);
  marked.search = `${marked.search ? `${marked.search}&` : '?'}worker_file&type=classic`;
  return marked;
}

/** Whether a Worker may start from `url` here: same origin as the page (or worker) running attnlab. */
function sameOrigin(url: URL): boolean {
  // self.origin, not location.origin: a frame sandboxed without allow-same-origin keeps its URL
  // but has an opaque origin ('null'), same-origin with no URL at all.
  const here = (globalThis as { origin?: string }).origin;
  return here !== undefined && here !== 'null' && url.origin === here;
}
