import { heapFiniteScan, RELOAD } from './heap.js';
import { attention, attentionArgs, attentionScores, patternAsMask, runAttention } from './attention.js';
import { disposeSymbol } from './dispose.js';
import { argError } from './errors.js';
import { linearAttention } from './linear-attention.js';
import { linear } from './linear.js';
import { hardwareThreads, instantiate, instantiateNn, isRelaxed, isThreaded, relaxedSimdSupported, simdBuildsMissing, startThreads, threadsSupported, variantChain, GlueMovedError } from './loader.js';
import { multiHeadArgs, multiHeadAttention, runMultiHead } from './multihead.js';
import { nadarayaWatson } from './nadaraya-watson.js';
import { attentionPattern } from './patterns.js';
import { positionalEncoding } from './positional.js';
import { lshAttention } from './lsh-attention.js';
import { t5Bias, withT5Table } from './relative-position.js';
import { rope } from './rope.js';
import { synthesizer } from './synthesizer.js';
import { maskedSoftmax, maskedSoftmaxArgs, runMaskedSoftmax } from './softmax.js';
import { checkOptionsObject } from './tensor.js';
import { createTrainer, type CreateTrainerOptions, type TrainerSession } from './trainer.js';
import { checkTrapped, hasTrapped } from './trap.js';
import type { WorkerTranslator } from './translator-remote.js';
import { loadTranslator, type LoadTranslatorOptions, type LoadWorkerTranslatorOptions, type Translator, type TranslatorSource } from './translator.js';
import type {
  AttentionOptions, AttentionPattern, AttentionPatternOptions, AttentionResult, AttentionResultWithWeights, AttentionScoresOptions, Backend, BoolTensor,
  GpuAdapterInfo, GpuStats, HeapStats, Int32Tensor, LinearAttentionOptions, LinearOptions, LshAttentionOptions, LshAttentionResult, SynthesizerOptions, T5BiasOptions, LoadOptions, MaskedSoftmaxOptions, MultiHeadOptions,
  MultiHeadParams, NadarayaWatsonOptions, NadarayaWatsonResult, RopeOptions, Tensor, TensorInput, Variant,
} from './types.js';
import type { NnModule, WasmModule } from './wasm-module.js';
import { openWebGpu, type WebGpuBackend } from './webgpu/backend.js';
import { gpuCacheSettings } from './webgpu/buffers.js';

const VARIANTS: readonly Variant[] = variantChain().reverse();  // 'scalar', 'simd', ..., 'relaxed-simd-threads'
const BACKENDS: readonly NonNullable<LoadOptions['backend']>[] = ['wasm', 'webgpu', 'auto'];
const MAX_DEFAULT_THREADS = 4;
/**
 * An instance's modules: the core, and the nn module (translators, trainer) once first asked for.
 * Held apart from the instance so the FinalizationRegistry can end both without keeping it alive.
 */
interface Modules {
  core: WasmModule;
  nn: Promise<NnModule> | null;
  /** The nn module once instantiated, for heapStats(). */
  nnReady: NnModule | null;
}

function endModules(mods: Modules): void {
  // A trapped module (trap.ts) is not called again: its workers are ended from JavaScript alone.
  if (!hasTrapped(mods.core)) mods.core.setThreads(1);
  mods.core.terminateWorkers();
  // One still loading is ended once it has loaded.
  mods.nn?.then((nn) => nn.terminateWorkers(), () => {});
}

// Last resort for an instance dropped without dispose(): stop its worker threads when collected.
const finalizer = new FinalizationRegistry<Modules>(endModules);

/**
 * One instance of attnlab. Results are plain JS-owned tensors.
 *
 * Every op has a synchronous method that runs on WebAssembly, whatever the backend. The GPU ops
 * also have `…Async` methods returning Promises: `attentionAsync`, `maskedSoftmaxAsync` and
 * `multiHeadAttentionAsync` run on the GPU when `backend` is `'webgpu'` and resolve with the
 * WebAssembly result otherwise, so one code path serves both backends. Their arguments are checked
 * by the same code, with the same error messages (as rejections), on both.
 */
export class Attnlab {
  /** Where the `…Async` ops run. The synchronous methods always run on WebAssembly. */
  readonly backend: Backend;
  /** The build in use: the one asked for (`options.variant`), else the fastest, or the next one down that runs. */
  readonly variant: Variant;
  /**
   * Why this build: it was asked for, or is the fastest; or which faster builds could not run here
   * and why (e.g. a page that is not cross-origin isolated has no SharedArrayBuffer for threads).
   */
  readonly variantReason: string;
  /** Threads the ops use, counting the calling thread. */
  readonly threads: number;
  /** Kernel instruction set of the build: 'simd128' or 'scalar'. */
  readonly isa: string;
  #m: WasmModule | null;
  #mods: Modules;
  #gpu: WebGpuBackend | null;
  /** Trainer sessions still running: dispose() cancels them. */
  #trainers = new Set<TrainerSession>();
  /** Translators this instance loaded: dispose() disposes them. */
  #translators = new Set<WeakRef<Translator | WorkerTranslator>>();

  /** @internal Use `load()`. */
  constructor(m: WasmModule, variant: Variant, threads: number, gpu: WebGpuBackend | null = null, variantReason = '') {
    this.#m = m;
    this.#mods = { core: m, nn: null, nnReady: null };
    this.#gpu = gpu;
    this.backend = gpu ? 'webgpu' : 'wasm';
    this.variant = variant;
    this.variantReason = variantReason;
    this.threads = threads;
    this.isa = m.isa();
    finalizer.register(this, this.#mods, this);
  }

  /** The GPU adapter the `…Async` ops use; null on the WebAssembly backend. */
  get gpuAdapter(): GpuAdapterInfo | null {
    return this.#gpu?.adapterInfo ?? null;
  }

  #mod(fn: string): WasmModule {
    if (!this.#m) throw new Error(`${fn}: this attnlab instance has been disposed; call load() for a new one`);
    // After a trap in an op (trap.ts's guardModule) every call but dispose() is refused.
    checkTrapped(this.#m, fn, RELOAD);
    return this.#m;
  }

  /**
   * The nn module of this instance's build, instantiated on the first call. A failed start is not
   * kept: the next call tries again.
   */
  #nn(fn: string): () => Promise<NnModule> {
    this.#mod(fn);
    return async () => {
      const mods = this.#mods;
      // A module that trapped (trap.ts) is never run again: a fresh one for the next translator or trainer.
      if (mods.nnReady && hasTrapped(mods.nnReady)) {
        mods.nnReady.terminateWorkers();
        mods.nn = mods.nnReady = null;
      }
      if (!mods.nn) {
        mods.nn = instantiateNn(this.variant, this.threads).then((nn) => (mods.nnReady = nn), (e: unknown) => {
          mods.nn = null;
          throw new Error(`${fn}: the translators' and trainer's WebAssembly module (attnlab-nn-${this.variant}) did not load: ${e instanceof Error ? e.message : String(e)}`);
        });
      }
      const nn = await mods.nn;
      this.#mod(fn);  // disposed while it loaded
      return nn;
    };
  }

  /** #mod for ops that run on the thread pool: sleeping workers start waking while JS checks and copies the inputs. */
  #pooled(fn: string): WasmModule {
    const m = this.#mod(fn);
    if (this.threads > 1) m.wakeThreads();
    return m;
  }

  /**
   * Attention over q [..., Sq, Dq], k [..., Sk, Dk], v [..., Sk, Dv] -> output [..., Sq, Dv].
   * Dense by default; sparse (local, Longformer, BigBird) with `pattern`; ALiBi and RoPE with
   * `alibi` and `rope`.
   */
  attention(q: TensorInput, k: TensorInput, v: TensorInput, options: AttentionOptions & { returnWeights: true }): AttentionResultWithWeights;
  attention(q: TensorInput, k: TensorInput, v: TensorInput, options?: AttentionOptions): AttentionResult;
  attention(q: TensorInput, k: TensorInput, v: TensorInput, options?: AttentionOptions): AttentionResult {
    return attention(this.#pooled('attention'), q, k, v, options);
  }

  /**
   * attention() on this instance's backend; resolves with the same result. On WebGPU the scores
   * matrix exists in GPU memory only when `returnWeights` (or score `'additive'`) needs it. A sparse
   * `pattern` runs there as a boolean [Sq, Sk] mask: the same result at the cost of dense attention.
   */
  attentionAsync(q: TensorInput, k: TensorInput, v: TensorInput, options: AttentionOptions & { returnWeights: true }): Promise<AttentionResultWithWeights>;
  attentionAsync(q: TensorInput, k: TensorInput, v: TensorInput, options?: AttentionOptions): Promise<AttentionResult>;
  async attentionAsync(q: TensorInput, k: TensorInput, v: TensorInput, options?: AttentionOptions): Promise<AttentionResult> {
    const m = this.#pooled('attention');  // a disposed instance says so before any argument is checked
    const a = attentionArgs(q, k, v, options, heapFiniteScan(m, 'attention'));
    const wasm = () => runAttention(this.#mod('attention'), a);
    return this.#gpu ? this.#gpu.attention(withT5Table(m, patternAsMask(m, a), a.d.Sq, a.d.Sk), wasm) : wasm();
  }

  /** Which keys each query may see under a sparse pattern: [Sq, Sk], 1 = visible. For drawing and masks. */
  attentionPattern(pattern: AttentionPattern, Sq: number, Sk: number, options?: AttentionPatternOptions): BoolTensor {
    return attentionPattern(this.#mod('attentionPattern'), pattern, Sq, Sk, options);
  }

  /**
   * PyTorch `nn.Linear` forward: `x [..., in] @ weight^T + bias`, `weight` `[out, in]`, `bias` `[out]`;
   * the register-blocked matmul kernels (and threads) that multi-head attention's projections use.
   * `options.out`: as attention's (pass `undefined` for no bias).
   */
  linear(x: TensorInput, weight: TensorInput, bias?: TensorInput, options?: LinearOptions): Tensor {
    return linear(this.#pooled('linear'), x, weight, bias, options);
  }

  /**
   * Attention in time linear in the sequence length: kernelised with elu(x) + 1 features
   * (default), Performer's FAVOR+, or Linformer. q [..., Sq, D], k [..., Sk, D], v [..., Sk, Dv].
   */
  linearAttention(q: TensorInput, k: TensorInput, v: TensorInput, options?: LinearAttentionOptions): AttentionResult {
    return linearAttention(this.#mod('linearAttention'), q, k, v, options);
  }

  /**
   * T5's relative bias [heads, Sq, Sk] from learned weights [heads, numBuckets], as the `t5` option
   * adds it: for drawing, or to pass as an `attnMask` to another library.
   */
  t5Bias(weights: TensorInput, Sq: number, Sk: number, options?: Omit<T5BiasOptions, 'weights'>): Tensor {
    return t5Bias(this.#mod('t5Bias'), weights, Sq, Sk, options);
  }

  /**
   * Reformer's LSH attention of shared query-keys qk [..., S, D] and values v [..., S, Dv]: each
   * query attends only within its bucket's chunk and the one before, per hash round.
   */
  lshAttention(qk: TensorInput, v: TensorInput, options: LshAttentionOptions & { returnBuckets: true; returnAttended: true }): LshAttentionResult & { buckets: Int32Tensor; attended: Int32Tensor };
  lshAttention(qk: TensorInput, v: TensorInput, options: LshAttentionOptions & { returnBuckets: true }): LshAttentionResult & { buckets: Int32Tensor };
  lshAttention(qk: TensorInput, v: TensorInput, options: LshAttentionOptions & { returnAttended: true }): LshAttentionResult & { attended: Int32Tensor };
  lshAttention(qk: TensorInput, v: TensorInput, options?: LshAttentionOptions): LshAttentionResult;
  lshAttention(qk: TensorInput, v: TensorInput, options?: LshAttentionOptions): LshAttentionResult {
    return lshAttention(this.#pooled('lshAttention'), qk, v, options);
  }

  /**
   * Synthesizer attention of tokens x [..., S, D] and values v [..., S, Dv]: dense (an MLP per
   * token), random, or their factorized forms, optionally mixed with dot-product scores.
   */
  synthesizer(x: TensorInput | null, v: TensorInput, options: SynthesizerOptions & { returnWeights: true }): AttentionResultWithWeights;
  synthesizer(x: TensorInput | null, v: TensorInput, options: SynthesizerOptions): AttentionResult;
  synthesizer(x: TensorInput | null, v: TensorInput, options: SynthesizerOptions): AttentionResult {
    return synthesizer(this.#pooled('synthesizer'), x, v, options);
  }

  /** Rotary position embedding of x [..., S, D] (D even): row s turns for position offset + s. */
  rope(x: TensorInput, options?: RopeOptions): Tensor {
    return rope(this.#mod('rope'), x, options);
  }

  /** Raw scores a(q, k), before masks and softmax: [..., Sq, Sk]. */
  attentionScores(q: TensorInput, k: TensorInput, options?: AttentionScoresOptions): Tensor {
    return attentionScores(this.#pooled('attentionScores'), q, k, options);
  }

  /** Softmax over the last axis with valid lengths, causal and boolean/additive masks. */
  maskedSoftmax(x: TensorInput, options?: MaskedSoftmaxOptions): Tensor {
    return maskedSoftmax(this.#pooled('maskedSoftmax'), x, options);
  }

  /** maskedSoftmax() on this instance's backend; resolves with the same result. */
  async maskedSoftmaxAsync(x: TensorInput, options?: MaskedSoftmaxOptions): Promise<Tensor> {
    this.#pooled('maskedSoftmax');
    const a = maskedSoftmaxArgs(x, options);
    const wasm = () => runMaskedSoftmax(this.#mod('maskedSoftmax'), a);
    return this.#gpu ? this.#gpu.maskedSoftmax(a, wasm) : wasm();
  }

  /** PyTorch `nn.MultiheadAttention` (batch_first=True) forward. Self- and cross-attention alike. */
  multiHeadAttention(query: TensorInput, key: TensorInput, value: TensorInput, params: MultiHeadParams, options: MultiHeadOptions & { needWeights: true }): AttentionResultWithWeights;
  multiHeadAttention(query: TensorInput, key: TensorInput, value: TensorInput, params: MultiHeadParams, options?: MultiHeadOptions): AttentionResult;
  multiHeadAttention(query: TensorInput, key: TensorInput, value: TensorInput, params: MultiHeadParams, options?: MultiHeadOptions): AttentionResult {
    return multiHeadAttention(this.#pooled('multiHeadAttention'), query, key, value, params, options);
  }

  /** multiHeadAttention() on this instance's backend; resolves with the same result. */
  multiHeadAttentionAsync(query: TensorInput, key: TensorInput, value: TensorInput, params: MultiHeadParams, options: MultiHeadOptions & { needWeights: true }): Promise<AttentionResultWithWeights>;
  multiHeadAttentionAsync(query: TensorInput, key: TensorInput, value: TensorInput, params: MultiHeadParams, options?: MultiHeadOptions): Promise<AttentionResult>;
  async multiHeadAttentionAsync(query: TensorInput, key: TensorInput, value: TensorInput, params: MultiHeadParams, options?: MultiHeadOptions): Promise<AttentionResult> {
    const m = this.#pooled('multiHeadAttention');
    const a = multiHeadArgs(query, key, value, params, options, heapFiniteScan(m, 'multiHeadAttention'));
    const wasm = () => runMultiHead(this.#mod('multiHeadAttention'), a);
    return this.#gpu ? this.#gpu.multiHeadAttention(withT5Table(m, a, a.L, a.S), wasm) : wasm();
  }

  /** Nadaraya-Watson kernel regression: attention pooling with a fixed kernel. */
  nadarayaWatson(queries: TensorInput, keys: TensorInput, values: TensorInput, options?: NadarayaWatsonOptions): NadarayaWatsonResult {
    return nadarayaWatson(this.#mod('nadarayaWatson'), queries, keys, values, options);
  }

  /** Sinusoidal positional encoding [length, dim]. */
  positionalEncoding(length: number, dim: number): Tensor {
    return positionalEncoding(this.#mod('positionalEncoding'), length, dim);
  }

  /**
   * Loads a translator: a model name ('fra-eng', 'eng-fra': the files of the attnlab-models
   * package, found by name in Node), a path (Node: against the working directory; browsers:
   * against the page), a URL, a model file's bytes, or a Blob / File (`<input type=file>`, a drop).
   * With `{ worker: true }` the model runs in a Worker of its own and translate() returns a Promise.
   */
  loadTranslator(source: TranslatorSource, options: LoadWorkerTranslatorOptions): Promise<WorkerTranslator>;
  loadTranslator(source: TranslatorSource, options?: LoadTranslatorOptions & { worker?: false }): Promise<Translator>;
  loadTranslator(source: TranslatorSource, options?: LoadTranslatorOptions): Promise<Translator | WorkerTranslator>;
  // async: on a disposed instance too the promise rejects, as for every other bad call, rather
  // than throwing before a .catch() is attached.
  async loadTranslator(source: TranslatorSource, options?: LoadTranslatorOptions): Promise<Translator | WorkerTranslator> {
    const tr = await loadTranslator(this.#nn('loadTranslator'), source, options, { variant: this.variant, threads: this.threads });
    // A Worker translator loads without this instance's module: disposed meanwhile, it goes too.
    if (!this.#m) tr.dispose();
    this.#mod('loadTranslator');
    // Weakly held: a translator dropped without dispose() is still collected (and freed).
    for (const r of this.#translators) {
      const held = r.deref();
      if (!held || held.disposed) this.#translators.delete(r);  // collected, or disposed by its owner
    }
    this.#translators.add(new WeakRef(tr));
    return tr;
  }

  /** Trains a small model on a toy task (in a Worker in browsers) with progress and cancel; dispose() cancels it. */
  createTrainer(options?: CreateTrainerOptions): TrainerSession {
    const forget = () => this.#trainers.delete(session);
    const session = createTrainer(this.#nn('createTrainer'), options, isRelaxed(this.variant), forget);
    this.#trainers.add(session);
    return session;
  }

  /**
   * WebAssembly heap use, summed over this instance's modules (the core's, and the translators'
   * and trainer's once loaded); `used` returns to its level after every call (no leaks). An nn
   * module that trapped is left out (the next loadTranslator() or createTrainer() drops it); a
   * core that trapped refuses, as every op then does.
   */
  heapStats(): HeapStats {
    const m = this.#mod('heapStats');
    const nn = this.#mods.nnReady && !hasTrapped(this.#mods.nnReady) ? this.#mods.nnReady : null;
    return { used: m.heapUsed() + (nn?.heapUsed() ?? 0), total: m.memoryBuffer().byteLength + (nn?.memoryBuffer().byteLength ?? 0) };
  }

  /**
   * GPU memory of the `…Async` ops: `used` by calls running now, `cached` in free buffers kept for
   * the next calls (`options.gpuCache` of load() bounds it); null on the WebAssembly backend.
   */
  gpuStats(): GpuStats | null {
    this.#mod('gpuStats');
    return this.#gpu?.stats ?? null;
  }

  /**
   * Frees the GPU buffers kept for reuse now, e.g. before the app needs the memory; the next
   * call allocates afresh, calls running keep theirs. Does nothing on WebAssembly or once disposed.
   */
  trimGpuCache(): void {
    this.#gpu?.trim();
  }

  /** True once dispose() ran. */
  get disposed(): boolean {
    return this.#m === null;
  }

  /**
   * Stops the worker threads, releases the module and the GPU device, disposes the translators
   * and cancels the trainer sessions it started. Safe to call twice.
   */
  dispose(): void {
    const m = this.#m;
    if (!m) return;
    this.#m = null;
    finalizer.unregister(this);
    this.#gpu?.dispose();
    this.#gpu = null;
    for (const t of this.#trainers) t.cancel();
    for (const r of this.#translators) r.deref()?.dispose();
    this.#translators.clear();
    endModules(this.#mods);
  }

  /** `using`: dispose() at the end of the block. */
  [disposeSymbol](): void {
    this.dispose();
  }
}

/**
 * Loads attnlab. `backend` defaults to `'wasm'`; `variant` to the fastest build this environment
 * can run; `threads` to the logical core count (at most 4) for the threaded build. A build that
 * cannot start here (no SIMD, no SharedArrayBuffer, worker threads refused) gives way to the next
 * one down (`'relaxed-simd-threads'` -> `'relaxed-simd'` -> `'simd-threads'` -> `'simd'` -> `'scalar'`): see `variant` and `variantReason`. A WebGPU-backed
 * instance also loads a WebAssembly build, for its synchronous methods and for 'auto' fallbacks.
 */
export async function load(options: LoadOptions = {}): Promise<Attnlab> {
  const fn = 'load';
  checkOptionsObject(fn, 'options', options);
  for (const key of Object.keys(options)) {
    if (!['variant', 'threads', 'backend', 'gpu', 'gpuCache'].includes(key)) throw new Error(`${fn}: options: unknown option '${key}'; expected variant, threads, backend, gpu, gpuCache`);
  }
  // undefined, not null, takes the default, as for variant and threads.
  const backend = options.backend === undefined ? 'wasm' : options.backend;
  if (!BACKENDS.includes(backend)) throw argError(fn, 'options.backend', `one of ${BACKENDS.map((b) => `'${b}'`).join(', ')}`, backend);
  const g = options.gpu as unknown;
  if (g !== undefined && (typeof g !== 'object' || g === null || typeof (g as { requestAdapter?: unknown }).requestAdapter !== 'function')) {
    throw argError(fn, 'options.gpu', "a WebGPU entry point with requestAdapter() (navigator.gpu, or create([]) from the npm 'webgpu' package)", g);
  }
  const gpuCache = gpuCacheSettings(fn, options.gpuCache);
  const requested = options.variant;
  if (requested !== undefined && !VARIANTS.includes(requested)) throw argError(fn, 'options.variant', `one of ${VARIANTS.map((v) => `'${v}'`).join(', ')}`, requested);
  if (options.threads !== undefined) {
    const t = options.threads;
    if (typeof t !== 'number' || !Number.isSafeInteger(t) || t < 1 || t > 64) throw argError(fn, 'options.threads', 'an integer in [1, 64]', t);
    // Both asked for and they contradict: running on one thread would drop the request silently.
    if (t > 1 && requested !== undefined && !isThreaded(requested)) {
      const twin = requested === 'scalar' ? 'simd' : requested;  // the scalar build has no threaded twin
      throw new Error(`${fn}: options.threads: ${t} needs a threaded build, and options.variant '${requested}' has no threads; use '${twin}-threads', or leave out threads`);
    }
  }
  // The GPU first: when 'webgpu' finds no adapter, no WebAssembly threads were started in vain.
  const gpu = backend === 'wasm' ? null : await openWebGpu(fn, backend, options.gpu, gpuCache);
  // From the requested build (else the fastest) down to scalar, the first that starts here.
  const fellBack: string[] = [];
  // Under Vite's dev server, or bundled without its files, every build's glue fails to import for
  // the one reason: said once.
  const moved: string[] = [];
  let movedHint = '', movedDir = '';
  const whyNot = () => [...fellBack, ...moved.length ? [`${movedHint} (${moved.join(', ')}: their glue could not be imported from ${movedDir})`] : []].join('; ');
  for (const variant of variantChain(requested)) {
    const missing = missingFeature(variant);
    if (missing) {
      fellBack.push(`'${variant}' ${missing}`);
      continue;
    }
    const threads = !isThreaded(variant) ? 1 : options.threads ?? Math.max(1, Math.min(MAX_DEFAULT_THREADS, hardwareThreads()));
    // The threaded build's factory never resolves with an empty worker pool (Emscripten 3.1.6
    // waits for 'all' workers to load, and zero never reports): keep at least one, idle if threads is 1.
    let m: WasmModule;
    try {
      m = await instantiate(variant, isThreaded(variant) ? Math.max(1, threads - 1) : 0);
    } catch (e) {
      if (e instanceof GlueMovedError) {
        moved.push(`'${variant}'`);
        movedHint = e.hint;
        movedDir = new URL('.', e.url).href;
      } else {
        fellBack.push(`'${variant}' failed to start (${e instanceof Error ? e.message : String(e)})`);
      }
      continue;
    }
    const err = await startThreads(m, threads);
    if (err) throw new Error(`${fn}: ${err}`);
    const unmet = options.threads !== undefined && options.threads > threads ? `, on 1 thread, not the ${options.threads} of options.threads` : '';
    const reason = fellBack.length || moved.length
      ? `${whyNot()}: '${variant}' is the fastest build that runs here${unmet}`
      : requested ? `'${variant}' was asked for (options.variant)` : `'${variant}' is the fastest build, and it runs here`;
    return new Attnlab(m, variant, threads, gpu, reason);
  }
  gpu?.dispose();
  throw new Error(`${fn}: no WebAssembly build could start: ${whyNot()}`);
}

/** Why `variant` cannot run in this environment, or '' when it can. */
function missingFeature(variant: Variant): string {
  const missing = variant === 'scalar' ? '' : simdBuildsMissing();
  if (missing) return `needs ${missing}, which this engine lacks`;
  if (isRelaxed(variant) && !relaxedSimdSupported()) return 'needs WebAssembly relaxed SIMD, which this engine lacks';
  if (isThreaded(variant) && !threadsSupported()) {
    return 'needs SharedArrayBuffer, which a browser grants only to cross-origin isolated pages (COOP/COEP headers)';
  }
  return '';
}
