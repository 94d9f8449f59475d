/// <reference types="@webgpu/types" />
// GPU buffers recycled across calls: a call takes buffers of a size class and gives them back once
// its results are read, so steady-state calls allocate nothing. attnlab is a guest in its user's
// app (on integrated GPUs and phones GPU memory is system memory), so free buffers are kept only
// while they are likely to be used again: within a cap, for a few calls, and not past an idle period.
import { argError } from '../errors.js';
import { checkOptionsObject } from '../tensor.js';
import type { GpuCacheOptions, GpuStats } from '../types.js';

/** GPUBufferUsage values, spelled out: Node has no GPUBufferUsage global unless a caller adds one. */
export const Usage = { MAP_READ: 0x1, COPY_SRC: 0x4, COPY_DST: 0x8, UNIFORM: 0x40, STORAGE: 0x80 } as const;

export const DEFAULT_CACHE: Required<GpuCacheOptions> = { maxBytes: 128 * 2 ** 20, idleMs: 1000 };

/**
 * A free buffer no call took during this many later calls is destroyed: a size seen once (one
 * large call among small ones, a slider sweeping lengths) goes, while an app cycling through up
 * to this many shapes per frame still allocates nothing.
 */
const STALE_CALLS = 16;

/** setTimeout's longest delay; a longer one fires at once (Node) or overflows (browsers). */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** `options.gpuCache` of load(), checked, with defaults. */
export function gpuCacheSettings(fn: string, options: unknown): Required<GpuCacheOptions> {
  if (options === undefined) return DEFAULT_CACHE;
  for (const key of Object.keys(checkOptionsObject(fn, 'options.gpuCache', options, 'an object { maxBytes, idleMs }'))) {
    if (key !== 'maxBytes' && key !== 'idleMs') throw new Error(`${fn}: options.gpuCache: unknown option '${key}'; expected maxBytes, idleMs`);
  }
  const { maxBytes = DEFAULT_CACHE.maxBytes, idleMs = DEFAULT_CACHE.idleMs } = options as GpuCacheOptions;
  if (typeof maxBytes !== 'number' || !(maxBytes >= 0)) throw argError(fn, 'options.gpuCache.maxBytes', 'a number of bytes >= 0 (0: keep none, Infinity: no cap)', maxBytes);
  if (typeof idleMs !== 'number' || !(idleMs >= 0)) throw argError(fn, 'options.gpuCache.idleMs', 'a number of milliseconds >= 0 (Infinity: never)', idleMs);
  return { maxBytes, idleMs };
}

/** Sizes round up to 256 B, then to quarter steps between powers of two (at most 25% slack). */
export function sizeClass(bytes: number): number {
  if (bytes <= 256) return 256;
  const step = 2 ** Math.floor(Math.log2(bytes)) / 4;
  return Math.ceil(bytes / step) * step;
}

/** A free buffer, and the count of calls ended when it was given back. */
interface Free {
  buffer: GPUBuffer;
  call: number;
}

export class BufferPool {
  readonly #device: GPUDevice;
  readonly #settings: Required<GpuCacheOptions>;
  /** By `${usage}:${size}`, oldest first (buffers are given back in call order and taken from the end). */
  readonly #free = new Map<string, Free[]>();
  #freeBytes = 0;
  #usedBytes = 0;
  #calls = 0;
  #idleTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(device: GPUDevice, settings: Required<GpuCacheOptions> = DEFAULT_CACHE) {
    this.#device = device;
    this.#settings = settings;
  }

  /** Bytes in buffers calls hold now, and in free buffers kept for reuse. */
  get stats(): GpuStats {
    return { used: this.#usedBytes, cached: this.#freeBytes };
  }

  /** A buffer of at least `bytes`; of exactly `bytes` (4-aligned) when its class would pass `maxBytes`. */
  acquire(bytes: number, usage: number, maxBytes = Infinity): GPUBuffer {
    const cls = sizeClass(bytes);
    const size = cls <= maxBytes ? cls : Math.ceil(bytes / 4) * 4;
    const reused = this.#free.get(`${usage}:${size}`)?.pop()?.buffer;
    if (reused) this.#freeBytes -= reused.size;
    this.#usedBytes += size;
    return reused ?? this.#device.createBuffer({ size, usage });
  }

  /** The buffers of a call that ended well: kept for later calls, within the cache's limits. */
  release(buffers: GPUBuffer[]): void {
    const call = ++this.#calls;
    for (const buffer of buffers) {
      this.#usedBytes -= buffer.size;
      const key = `${buffer.usage}:${buffer.size}`;
      const list = this.#free.get(key);
      if (list) list.push({ buffer, call });
      else this.#free.set(key, [{ buffer, call }]);
      this.#freeBytes += buffer.size;
    }
    this.#evict(call - STALE_CALLS);
    this.#armIdleTimer();
  }

  /** The buffers of a failed call: they may be invalid or still mapped, so never reused. */
  discard(buffers: GPUBuffer[]): void {
    for (const b of buffers) {
      this.#usedBytes -= b.size;
      b.destroy();
    }
  }

  /** Destroys every free buffer: on trimGpuCache(), when idle, after out-of-memory, on loss and dispose. */
  trim(): void {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    for (const list of this.#free.values()) for (const f of list) f.buffer.destroy();
    this.#free.clear();
    this.#freeBytes = 0;
  }

  /** Destroys the free buffers given back before call `stale`, then the oldest while over the cap. */
  #evict(stale: number): void {
    for (const [key, list] of this.#free) {
      let n = 0;
      while (n < list.length && list[n].call <= stale) this.#freeBytes -= list[n++].buffer.size;
      for (const f of list.splice(0, n)) f.buffer.destroy();
      if (list.length === 0) this.#free.delete(key);
    }
    while (this.#freeBytes > this.#settings.maxBytes) {
      let oldest: Free[] | undefined;
      for (const list of this.#free.values()) if (!oldest || list[0].call < oldest[0].call) oldest = list;
      const { buffer } = oldest!.shift()!;
      this.#freeBytes -= buffer.size;
      buffer.destroy();
      if (oldest!.length === 0) this.#free.delete(`${buffer.usage}:${buffer.size}`);
    }
  }

  /** Frees the cache once no call has ended for idleMs. */
  #armIdleTimer(): void {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    if (this.#freeBytes === 0 || this.#settings.idleMs > MAX_TIMEOUT_MS) return;
    this.#idleTimer = setTimeout(() => this.trim(), this.#settings.idleMs);
    // An idle cache must not keep Node running (browsers' timers are numbers, without unref).
    (this.#idleTimer as { unref?: () => void }).unref?.();
  }
}
