/// <reference types="@webgpu/types" />
// One GPUDevice and what lives on it: the buffer pool and the compiled pipelines. Losing the device
// loses all of it; the backend then opens a new GpuDevice.
import type { GpuAdapterInfo, GpuCacheOptions } from '../types.js';
import { BufferPool } from './buffers.js';
import type { KernelSpec } from './kernels.js';


export class GpuDevice {
  readonly device: GPUDevice;
  readonly adapterInfo: GpuAdapterInfo;
  readonly pool: BufferPool;
  /** Set once the device is lost (or destroyed): why. */
  lost: string | null = null;
  readonly #pipelines = new Map<string, Promise<GPUComputePipeline>>();

  private constructor(device: GPUDevice, info: GpuAdapterInfo, cache: Required<GpuCacheOptions>) {
    this.device = device;
    this.adapterInfo = info;
    this.pool = new BufferPool(device, cache);
    device.lost.then((e) => {
      this.lost = `${e.reason}: ${e.message}`;
      this.pool.trim();
    });
  }

  /**
   * A device on the first adapter `gpu` offers, with that adapter's largest buffers and a buffer
   * pool with `cache`'s limits; null when none.
   */
  static async open(gpu: GPU, cache: Required<GpuCacheOptions>): Promise<GpuDevice | null> {
    const adapter = await gpu.requestAdapter();
    if (!adapter) return null;
    const l = adapter.limits;
    const device = await adapter.requestDevice({
      requiredLimits: {
        maxStorageBufferBindingSize: l.maxStorageBufferBindingSize,
        maxBufferSize: l.maxBufferSize,
        maxComputeWorkgroupStorageSize: l.maxComputeWorkgroupStorageSize,
      },
    });
    const info = adapter.info ?? {};
    return new GpuDevice(device, {
      vendor: info.vendor ?? '', architecture: info.architecture ?? '', device: info.device ?? '', description: info.description ?? '',
    }, cache);
  }

  get maxBindingBytes(): number {
    return this.device.limits.maxStorageBufferBindingSize;
  }

  get workgroupBytes(): number {
    return this.device.limits.maxComputeWorkgroupStorageSize;
  }

  /** The pipeline of a kernel, compiled once per device and shape class. */
  pipeline(spec: KernelSpec): Promise<GPUComputePipeline> {
    let p = this.#pipelines.get(spec.key);
    if (!p) {
      const module = this.device.createShaderModule({ label: spec.key, code: spec.source() });
      p = this.device.createComputePipelineAsync({ label: spec.key, layout: 'auto', compute: { module, entryPoint: 'main' } });
      // A failed compile is not cached: the error surfaces once, and a later call retries.
      p.catch(() => this.#pipelines.delete(spec.key));
      this.#pipelines.set(spec.key, p);
    }
    return p;
  }

  destroy(): void {
    this.pool.trim();
    this.device.destroy();
  }
}
