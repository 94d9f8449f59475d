/// <reference types="@webgpu/types" />
// One op on the GPU: its buffers, its dispatches in one compute pass, one submit, and the read-back
// of its results. Errors are caught in scopes around the encoding and sorted into the ones a
// caller can act on (out of memory, a lost device: GpuUnavailableError) and bugs.
import { isArrayBuffer } from '../tensor.js';
import { Usage } from './buffers.js';
import type { GpuDevice } from './device.js';
import { GpuUnavailableError } from './errors.js';

const MAP_READ = 0x1;  // GPUMapMode.READ
const STORAGE = Usage.STORAGE | Usage.COPY_DST | Usage.COPY_SRC;

/** A result to read back: `length` floats from the start of `buffer`. */
export type Readback = [buffer: GPUBuffer, length: number];

export class GpuCall {
  /** Encodes one op with `encode` (which returns what to read back), submits it and reads the results. */
  static async run(dev: GpuDevice, fn: string, encode: (call: GpuCall) => Readback[]): Promise<Float32Array[]> {
    const call = new GpuCall(dev, fn);
    let reads: Readback[];
    try {
      reads = encode(call);
    } catch (e) {
      call.abort();
      throw e;
    }
    return call.finish(reads);
  }

  readonly #dev: GpuDevice;
  readonly #fn: string;
  readonly #encoder: GPUCommandEncoder;
  readonly #pass: GPUComputePassEncoder;
  readonly #taken: GPUBuffer[] = [];

  /** Encoding runs synchronously from here to finish() or abort(), so the error scopes stay this call's. */
  constructor(dev: GpuDevice, fn: string) {
    this.#dev = dev;
    this.#fn = fn;
    dev.device.pushErrorScope('out-of-memory');
    dev.device.pushErrorScope('validation');
    this.#encoder = dev.device.createCommandEncoder({ label: fn });
    this.#pass = this.#encoder.beginComputePass({ label: fn });
  }

  #take(bytes: number, usage: number): GPUBuffer {
    const limit = this.#dev.maxBindingBytes;
    if (bytes > limit) {
      throw new GpuUnavailableError(`${this.#fn}: needs a GPU buffer of ${bytes} bytes, over this device's maxStorageBufferBindingSize of ${limit} bytes`);
    }
    const b = this.#dev.pool.acquire(bytes, usage, limit);
    this.#taken.push(b);
    return b;
  }

  /** A storage buffer holding a copy of `data`. */
  upload(data: Float32Array | Uint32Array): GPUBuffer {
    const b = this.#take(data.byteLength, STORAGE);
    // Dawn (Node's npm webgpu) refuses a SharedArrayBuffer with a TypeError that names no call, where
    // the WebAssembly ops take such inputs: those go through a copy of their own.
    const src = isArrayBuffer(data.buffer) ? data : data.slice();
    if (src.byteLength > 0) this.#dev.device.queue.writeBuffer(b, 0, src.buffer, src.byteOffset, src.byteLength);
    return b;
  }

  /** A storage buffer for `floats` results; its old contents are undefined. */
  scratch(floats: number): GPUBuffer {
    return this.#take(floats * 4, STORAGE);
  }

  uniform(words: Uint32Array): GPUBuffer {
    const b = this.#take(words.byteLength, Usage.UNIFORM | Usage.COPY_DST);
    this.#dev.device.queue.writeBuffer(b, 0, words.buffer, words.byteOffset, words.byteLength);
    return b;
  }

  /** Binds `resources` to bindings 0, 1, ... of group 0 and dispatches; an empty grid does nothing. */
  dispatch(pipeline: GPUComputePipeline, resources: GPUBuffer[], groups: [number, number, number]): void {
    if (groups.some((g) => g === 0)) return;
    // Past the device's grid limit WebGPU rejects the pass as a validation error (an internal
    // error to the caller, with no fallback): say so before encoding, as for a buffer too large.
    const most = this.#dev.device.limits.maxComputeWorkgroupsPerDimension;
    if (groups.some((g) => g > most)) {
      throw new GpuUnavailableError(`${this.#fn}: needs a grid of [${groups.join(', ')}] workgroups, over this device's maxComputeWorkgroupsPerDimension of ${most}`);
    }
    const bindGroup = this.#dev.device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: resources.map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    this.#pass.setPipeline(pipeline);
    this.#pass.setBindGroup(0, bindGroup);
    this.#pass.dispatchWorkgroups(...groups);
  }

  /** Gives up before submitting (an error while encoding). */
  abort(): void {
    this.#pass.end();
    this.#popScopes().catch(() => undefined);
    this.#releaseAll();
  }

  /** Submits, waits for the GPU and returns JS-owned copies of the results. */
  async finish(reads: Readback[]): Promise<Float32Array[]> {
    this.#pass.end();
    const device = this.#dev.device;
    const staging = reads.map(([src, length]) => {
      if (length === 0) return null;
      const dst = this.#take(length * 4, Usage.MAP_READ | Usage.COPY_DST);
      this.#encoder.copyBufferToBuffer(src, 0, dst, 0, length * 4);
      return dst;
    });
    device.queue.submit([this.#encoder.finish()]);
    const scopes = this.#popScopes();
    const maps = Promise.allSettled(staging.map((b, i) => b?.mapAsync(MAP_READ, 0, reads[i][1] * 4)));
    const [validation, oom] = await scopes;
    const mapped = await maps;
    let failure: Error | null = null;
    if (oom) {
      this.#dev.pool.trim();
      failure = new GpuUnavailableError(`${this.#fn}: out of GPU memory (${oom.message}); cached buffers were freed, so a smaller call may succeed`);
    } else if (validation) {
      failure = new Error(`${this.#fn}: internal error: WebGPU rejected a command of attnlab's: ${validation.message}`);
    } else if (mapped.some((m) => m.status === 'rejected')) {
      const why = this.#dev.lost ?? String((mapped.find((m) => m.status === 'rejected') as PromiseRejectedResult).reason);
      this.#dev.lost ??= why;
      failure = new GpuUnavailableError(`${this.#fn}: the GPU device was lost (${why}); the next call opens a new one`);
    }
    if (failure) {
      this.#dev.pool.discard(this.#taken);
      this.#taken.length = 0;
      throw failure;
    }
    const results = staging.map((b, i) => {
      if (!b) return new Float32Array(0);
      const copy = new Float32Array(b.getMappedRange(0, reads[i][1] * 4).slice(0));
      b.unmap();
      return copy;
    });
    this.#releaseAll();
    return results;
  }

  async #popScopes(): Promise<[GPUError | null, GPUError | null]> {
    const device = this.#dev.device;
    const settled = await Promise.allSettled([device.popErrorScope(), device.popErrorScope()]);
    return settled.map((s) => (s.status === 'fulfilled' ? s.value : null)) as [GPUError | null, GPUError | null];
  }

  #releaseAll(): void {
    this.#dev.pool.release(this.#taken);
    this.#taken.length = 0;
  }
}
