import { attention, attentionScores } from './attention.js';
import { argError } from './errors.js';
import { hardwareThreads, instantiate, isNode, simdSupported, threadsSupported } from './loader.js';
import { linear } from './linear.js';
import { multiHeadAttention } from './multihead.js';
import { nadarayaWatson } from './nadaraya-watson.js';
import { positionalEncoding } from './positional.js';
import { maskedSoftmax } from './softmax.js';
import type {
  AttentionOptions, AttentionResult, HeapStats, LoadOptions, MaskedSoftmaxOptions, MultiHeadOptions,
  MultiHeadParams, NadarayaWatsonOptions, NadarayaWatsonResult, Tensor, Variant,
} from './types.js';
import type { WasmModule } from './wasm-module.js';

const VARIANTS: readonly Variant[] = ['scalar', 'simd', 'simd-threads'];
const MAX_DEFAULT_THREADS = 4;
const disposeSymbol: symbol = (Symbol as { dispose?: symbol }).dispose ?? Symbol.for('Symbol.dispose');

/** One instance of the attnlab WebAssembly module. Results are plain JS-owned tensors. */
export class Attnlab {
  /** Where the math runs. */
  readonly backend = 'wasm' as const;
  /** The build in use. */
  readonly variant: Variant;
  /** Threads the ops use, counting the calling thread. */
  readonly threads: number;
  /** Kernel instruction set of the build: 'simd128' or 'scalar'. */
  readonly isa: string;
  #m: WasmModule | null;

  /** @internal Use `load()`. */
  constructor(m: WasmModule, variant: Variant, threads: number) {
    this.#m = m;
    this.variant = variant;
    this.threads = threads;
    this.isa = m.isa();
  }

  #mod(fn: string): WasmModule {
    if (!this.#m) throw new Error(`${fn}: this attnlab instance has been disposed; call load() for a new one`);
    return this.#m;
  }

  /** Attention over q [..., Sq, Dq], k [..., Sk, Dk], v [..., Sk, Dv] -> output [..., Sq, Dv]. */
  attention(q: Tensor, k: Tensor, v: Tensor, options?: AttentionOptions): AttentionResult {
    return attention(this.#mod('attention'), q, k, v, options);
  }

  /** Raw scores a(q, k), before masks and softmax: [..., Sq, Sk]. */
  attentionScores(q: Tensor, k: Tensor, options?: Pick<AttentionOptions, 'score' | 'params' | 'scale'>): Tensor {
    return attentionScores(this.#mod('attentionScores'), q, k, options);
  }

  /** Softmax over the last axis with valid lengths, causal and boolean/additive masks. */
  maskedSoftmax(x: Tensor, options?: MaskedSoftmaxOptions): Tensor {
    return maskedSoftmax(this.#mod('maskedSoftmax'), x, options);
  }

  /** PyTorch `nn.MultiheadAttention` (batch_first=True) forward. Self- and cross-attention alike. */
  multiHeadAttention(query: Tensor, key: Tensor, value: Tensor, params: MultiHeadParams, options?: MultiHeadOptions): AttentionResult {
    return multiHeadAttention(this.#mod('multiHeadAttention'), query, key, value, params, options);
  }

  /** PyTorch `nn.Linear` forward: x [..., in] -> [..., out] with weight [out, in] and optional bias [out]. */
  linear(x: Tensor, weight: Tensor, bias?: Tensor): Tensor {
    return linear(this.#mod('linear'), x, weight, bias);
  }

  /** Nadaraya-Watson kernel regression: attention pooling with a fixed kernel. */
  nadarayaWatson(queries: Tensor, keys: Tensor, values: Tensor, options?: NadarayaWatsonOptions): NadarayaWatsonResult {
    return nadarayaWatson(this.#mod('nadarayaWatson'), queries, keys, values, options);
  }

  /** Sinusoidal positional encoding [length, dim]. */
  positionalEncoding(length: number, dim: number): Tensor {
    return positionalEncoding(this.#mod('positionalEncoding'), length, dim);
  }

  /** WebAssembly heap use; `used` returns to its level after every call (no leaks). */
  heapStats(): HeapStats {
    const m = this.#mod('heapStats');
    return { used: m.heapUsed(), total: m.memoryBuffer().byteLength };
  }

  /** True once dispose() ran. */
  get disposed(): boolean {
    return this.#m === null;
  }

  /** Stops the worker threads and releases the module. Safe to call twice. */
  dispose(): void {
    const m = this.#m;
    if (!m) return;
    this.#m = null;
    m.setThreads(1);
    m.terminateWorkers();
  }

  [disposeSymbol](): void {
    this.dispose();
  }
}

function defaultVariant(): Variant {
  if (!simdSupported()) return 'scalar';
  return threadsSupported() ? 'simd-threads' : 'simd';
}

/**
 * Loads attnlab. `variant` defaults to the fastest build this environment can run; `threads` to
 * the logical core count (at most 4) for the threaded build.
 */
export async function load(options: LoadOptions = {}): Promise<Attnlab> {
  const fn = 'load';
  if (typeof options !== 'object' || options === null) throw argError(fn, 'options', 'an object', options);
  for (const key of Object.keys(options)) {
    if (key !== 'variant' && key !== 'threads') throw new Error(`${fn}: options: unknown option '${key}'; expected variant, threads`);
  }
  const variant = options.variant ?? defaultVariant();
  if (!VARIANTS.includes(variant)) throw argError(fn, 'options.variant', `one of ${VARIANTS.map((v) => `'${v}'`).join(', ')}`, variant);
  if (variant !== 'scalar' && !simdSupported()) throw new Error(`${fn}: options.variant: '${variant}' needs WebAssembly SIMD, which this engine lacks; use 'scalar'`);
  if (variant === 'simd-threads' && !threadsSupported()) {
    throw new Error(`${fn}: options.variant: 'simd-threads' needs SharedArrayBuffer, which a browser grants only to cross-origin isolated pages (COOP/COEP headers); use 'simd'`);
  }
  let threads = 1;
  if (options.threads !== undefined) {
    const t = options.threads;
    if (typeof t !== 'number' || !Number.isSafeInteger(t) || t < 1 || t > 64) throw argError(fn, 'options.threads', 'an integer in [1, 64]', t);
    threads = variant === 'simd-threads' ? t : 1;
  } else if (variant === 'simd-threads') {
    threads = Math.max(1, Math.min(MAX_DEFAULT_THREADS, hardwareThreads()));
  }
  // The threaded build's factory never resolves with an empty worker pool (Emscripten 3.1.6 waits
  // for 'all' workers to load, and zero never reports): keep at least one, idle if threads is 1.
  const m = await instantiate(variant, variant === 'simd-threads' ? Math.max(1, threads - 1) : 0);
  const err = m.setThreads(threads);
  if (err) throw new Error(`${fn}: ${err}`);
  // Idle workers must not keep a Node process alive.
  if (isNode) m.unrefWorkers();
  return new Attnlab(m, variant, threads);
}
