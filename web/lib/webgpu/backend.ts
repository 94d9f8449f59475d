/// <reference types="@webgpu/types" />
// The WebGPU backend behind an Attnlab: which calls run on the GPU, what happens when they cannot
// (backend 'auto': WebAssembly runs them; 'webgpu': a clear error), and the device's lifetime: a
// lost device is replaced by a new one on the next call.
import type { AttentionArgs } from '../attention.js';
import type { MultiHeadArgs } from '../multihead.js';
import type { MaskedSoftmaxArgs } from '../softmax.js';
import type { AttentionResult, GpuAdapterInfo, GpuCacheOptions, GpuProvider, GpuStats, Tensor } from '../types.js';
import { attentionUnsupported, gpuAttention } from './attention.js';
import { GpuDevice } from './device.js';
import { GpuOverflowError, GpuUnavailableError } from './errors.js';
import { gpuMultiHead, multiHeadUnsupported } from './multihead.js';
import { gpuMaskedSoftmax } from './softmax.js';

export type GpuPolicy = 'webgpu' | 'auto';

export class WebGpuBackend {
  readonly #gpu: GPU;
  readonly #policy: GpuPolicy;
  readonly #cache: Required<GpuCacheOptions>;
  #dev: GpuDevice | null;
  #opening: Promise<GpuDevice> | null = null;
  #disposed = false;

  private constructor(gpu: GPU, policy: GpuPolicy, cache: Required<GpuCacheOptions>, dev: GpuDevice) {
    this.#gpu = gpu;
    this.#policy = policy;
    this.#cache = cache;
    this.#dev = dev;
  }

  /** A backend on `gpu`'s adapter, or null when `gpu` offers none. */
  static async open(gpu: GpuProvider, policy: GpuPolicy, cache: Required<GpuCacheOptions>): Promise<WebGpuBackend | null> {
    const dev = await GpuDevice.open(gpu as GPU, cache);
    return dev && new WebGpuBackend(gpu as GPU, policy, cache, dev);
  }

  /** The adapter of the current device. */
  get adapterInfo(): GpuAdapterInfo {
    return this.#dev?.adapterInfo ?? { vendor: '', architecture: '', device: '', description: '' };
  }

  /** GPU memory of the current device's buffer pool (none while a lost device awaits its replacement). */
  get stats(): GpuStats {
    return this.#dev?.pool.stats ?? { used: 0, cached: 0 };
  }

  /** Frees the buffers cached for reuse; calls in flight keep theirs. */
  trim(): void {
    this.#dev?.pool.trim();
  }

  attention(a: AttentionArgs, wasm: () => AttentionResult): Promise<AttentionResult> {
    return this.#run(a.fn, attentionUnsupported(a), (dev) => gpuAttention(dev, a), wasm);
  }

  maskedSoftmax(a: MaskedSoftmaxArgs, wasm: () => Tensor): Promise<Tensor> {
    return this.#run(a.fn, null, (dev) => gpuMaskedSoftmax(dev, a), wasm);
  }

  multiHeadAttention(a: MultiHeadArgs, wasm: () => AttentionResult): Promise<AttentionResult> {
    return this.#run(a.fn, multiHeadUnsupported(a), (dev) => gpuMultiHead(dev, a), wasm);
  }

  async #run<T>(fn: string, unsupported: string | null, gpu: (dev: GpuDevice) => Promise<T>, wasm: () => T): Promise<T> {
    if (unsupported) {
      if (this.#policy === 'auto') return wasm();
      throw new Error(`${fn}: ${unsupported} on the WebGPU backend; load with backend: 'auto' to run such calls on WebAssembly`);
    }
    let result: T;
    try {
      result = await gpu(await this.#device(fn));
    } catch (e) {
      // dispose() destroys the device under a pending call, which then reads as a lost device.
      if (this.#disposed) throw new Error(`${fn}: this attnlab instance was disposed while the call ran on the GPU`);
      if (this.#policy === 'auto' && (e instanceof GpuUnavailableError || e instanceof GpuOverflowError)) return wasm();
      throw e;
    }
    // The inputs were finite, so a NaN or an infinity here is a score or a projection past
    // float32, which the kernels compute in f32 (WebAssembly recomputes such rows exactly, or
    // names the argument that overflows).
    if (!finite(result)) {
      if (this.#policy === 'auto') return wasm();
      throw new Error(`${fn}: scores or projections pass float32's range (beyond ±3.4e38), which the WebGPU kernels do not handle; load with backend: 'auto' to run such calls on WebAssembly`);
    }
    return result;
  }

  /** The live device, opening a new one (once, for all waiting calls) when the last was lost. */
  async #device(fn: string): Promise<GpuDevice> {
    const disposed = () => new Error(`${fn}: this attnlab instance has been disposed; call load() for a new one`);
    if (this.#disposed) throw disposed();
    if (this.#dev && !this.#dev.lost) return this.#dev;
    this.#dev = null;
    this.#opening ??= GpuDevice.open(this.#gpu, this.#cache).catch((e: unknown) => {
      throw new GpuUnavailableError(`${fn}: the GPU device was lost and a new one could not be opened: ${e instanceof Error ? e.message : String(e)}`);
    }).then((dev) => {
      if (!dev) throw new GpuUnavailableError(`${fn}: the GPU device was lost and no WebGPU adapter is available to replace it`);
      if (this.#disposed) {
        dev.destroy();
        throw disposed();
      }
      this.#dev = dev;
      return dev;
    }).finally(() => {
      this.#opening = null;
    });
    return this.#opening;
  }

  dispose(): void {
    this.#disposed = true;
    this.#dev?.destroy();
    this.#dev = null;
  }
}

function finite(r: unknown): boolean {
  const all = (t: Tensor | undefined) => !t || t.data.every(Number.isFinite);
  const x = r as Partial<AttentionResult> & Partial<Tensor>;
  return x.output ? all(x.output) && all(x.weights) : all(x as Tensor);
}

/**
 * The backend load() asked for: null with 'auto' when WebGPU is missing; with 'webgpu', a clear
 * error instead.
 */
export async function openWebGpu(
  fn: string, policy: GpuPolicy, provided: GpuProvider | undefined, cache: Required<GpuCacheOptions>,
): Promise<WebGpuBackend | null> {
  const gpu = provided ?? (globalThis as { navigator?: { gpu?: GpuProvider } }).navigator?.gpu;
  if (!gpu) {
    if (policy === 'auto') return null;
    throw new GpuUnavailableError(`${fn}: options.backend: 'webgpu' needs WebGPU, and this environment has no navigator.gpu; in Node, pass options.gpu (create([]) from the npm 'webgpu' package)`);
  }
  let backend: WebGpuBackend | null;
  try {
    backend = await WebGpuBackend.open(gpu, policy, cache);
  } catch (e) {
    if (policy === 'auto') return null;
    throw new GpuUnavailableError(`${fn}: options.backend: 'webgpu': could not open a WebGPU device: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!backend && policy === 'webgpu') {
    throw new GpuUnavailableError(`${fn}: options.backend: 'webgpu' needs a WebGPU adapter, and requestAdapter() found none; use backend: 'auto' to fall back to WebAssembly`);
  }
  return backend;
}
