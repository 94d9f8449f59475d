/// <reference types="@webgpu/types" />
// GPU buffers recycled across calls: a call takes buffers of a size class and gives them back once
// its results are read, so steady-state calls allocate nothing.

/** GPUBufferUsage values, spelled out: Node has no GPUBufferUsage global unless a caller adds one. */
export const Usage = { MAP_READ: 0x1, COPY_SRC: 0x4, COPY_DST: 0x8, UNIFORM: 0x40, STORAGE: 0x80 } as const;

/** Free buffers kept for reuse, at most; more are destroyed on release. */
const MAX_FREE_BYTES = 512 * 2 ** 20;

/** Sizes round up to 256 B, then to quarter steps between powers of two (at most 25% slack). */
export function sizeClass(bytes: number): number {
  if (bytes <= 256) return 256;
  const step = 2 ** Math.floor(Math.log2(bytes)) / 4;
  return Math.ceil(bytes / step) * step;
}

export class BufferPool {
  readonly #device: GPUDevice;
  readonly #free = new Map<string, GPUBuffer[]>();
  #freeBytes = 0;

  constructor(device: GPUDevice) {
    this.#device = device;
  }

  /** A buffer of at least `bytes`; of exactly `bytes` (4-aligned) when its class would pass `maxBytes`. */
  acquire(bytes: number, usage: number, maxBytes = Infinity): GPUBuffer {
    const cls = sizeClass(bytes);
    const size = cls <= maxBytes ? cls : Math.ceil(bytes / 4) * 4;
    const list = this.#free.get(`${usage}:${size}`);
    const reused = list?.pop();
    if (reused) {
      this.#freeBytes -= reused.size;
      return reused;
    }
    return this.#device.createBuffer({ size, usage });
  }

  release(buffer: GPUBuffer): void {
    if (this.#freeBytes + buffer.size > MAX_FREE_BYTES) {
      buffer.destroy();
      return;
    }
    const key = `${buffer.usage}:${buffer.size}`;
    const list = this.#free.get(key) ?? [];
    list.push(buffer);
    this.#free.set(key, list);
    this.#freeBytes += buffer.size;
  }

  /** Destroys every free buffer: after out-of-memory, and on dispose. */
  clear(): void {
    for (const list of this.#free.values()) for (const b of list) b.destroy();
    this.#free.clear();
    this.#freeBytes = 0;
  }
}
