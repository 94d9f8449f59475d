// GPU memory of the WebGPU backend (Dawn on SwiftShader, as in webgpu.test.ts): buffers are kept for
// reuse, so that repeated calls allocate nothing, but not beyond options.gpuCache's cap, not for
// sizes no recent call used, not past an idle period, and not after trimGpuCache().
import { load, type Attnlab, type GpuProvider, type LoadOptions } from 'attnlab';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { gpu, requireDawn } from './dawn.js';
import { randn } from './reference.js';

beforeAll(requireDawn);

const libs: Attnlab[] = [];
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  for (const lib of libs.splice(0)) lib.dispose();
});

/**
 * A WebGPU instance whose devices count the buffers they create into `created.n`, noting the most
 * gpuStats().used seen at a creation in `created.maxUsed`.
 */
async function counted(gpuCache?: LoadOptions['gpuCache']): Promise<{ lib: Attnlab; created: { n: number; maxUsed: number } }> {
  const created = { n: 0, maxUsed: 0 };
  let lib: Attnlab | undefined;
  const provider: GpuProvider = {
    async requestAdapter() {
      const adapter = await gpu.requestAdapter();
      if (!adapter) return null;
      return {
        info: adapter.info,
        limits: adapter.limits,
        async requestDevice(descriptor?: GPUDeviceDescriptor) {
          const device = await adapter.requestDevice(descriptor);
          const createBuffer = device.createBuffer.bind(device);
          device.createBuffer = (d) => {
            created.n++;
            created.maxUsed = Math.max(created.maxUsed, lib?.gpuStats()?.used ?? 0);
            return createBuffer(d);
          };
          return device;
        },
      };
    },
  };
  lib = await load({ backend: 'webgpu', gpu: provider, variant: 'simd', threads: 1, ...(gpuCache && { gpuCache }) });
  libs.push(lib);
  return { lib, created };
}

const MiB = 2 ** 20;
// Softmax: one kernel to compile per device, and little work on SwiftShader for its size.
const small = randn([4, 40], 1);
const medium = randn([128, 256], 3);
const large = randn([1024, 1024], 2);
/** A call of a few KiB, and one of about 12 MiB (input, output and read-back, 4 MiB each). */
const smallCall = (lib: Attnlab) => lib.maskedSoftmaxAsync(small);
const largeCall = (lib: Attnlab) => lib.maskedSoftmaxAsync(large);

describe('GPU buffer cache', () => {
  it('gpuStats() tells the cached bytes; trimGpuCache() frees them and later calls still work', async () => {
    const { lib } = await counted();
    const want = (await smallCall(lib)).data;
    await largeCall(lib);
    const after = lib.gpuStats()!;
    expect(after.used).toBe(0);
    expect(after.cached).toBeGreaterThan(12 * MiB);
    lib.trimGpuCache();
    expect(lib.gpuStats()).toEqual({ used: 0, cached: 0 });
    expect((await smallCall(lib)).data).toEqual(want);
  });

  it('gpuStats().used counts the buffers of calls in flight, and returns to 0', async () => {
    const { lib, created } = await counted();
    await Promise.all([largeCall(lib), largeCall(lib)]);
    // Both calls' inputs and outputs were held when the last read-back buffer was made.
    expect(created.maxUsed).toBeGreaterThanOrEqual(4 * 4 * MiB);
    expect(lib.gpuStats()!.used).toBe(0);
  });

  it('options.gpuCache.maxBytes caps the cache; calls within it still allocate nothing', async () => {
    const { lib, created } = await counted({ maxBytes: MiB });
    await largeCall(lib);
    expect(lib.gpuStats()!.cached).toBeLessThanOrEqual(MiB);
    await smallCall(lib);
    const before = created.n;
    for (let i = 0; i < 5; i++) await smallCall(lib);
    expect(created.n).toBe(before);
  });

  it('maxBytes 0 keeps no buffer', async () => {
    const { lib } = await counted({ maxBytes: 0 });
    await smallCall(lib);
    expect(lib.gpuStats()!.cached).toBe(0);
  });

  it('buffers no call took during 16 later calls are freed, while calls go on', async () => {
    const { lib } = await counted({ maxBytes: Infinity, idleMs: Infinity });
    await smallCall(lib);
    const smallSet = lib.gpuStats()!.cached;
    await largeCall(lib);
    expect(lib.gpuStats()!.cached).toBeGreaterThan(12 * MiB);
    for (let i = 0; i < 15; i++) await smallCall(lib);
    expect(lib.gpuStats()!.cached).toBeGreaterThan(12 * MiB);
    await smallCall(lib);
    expect(lib.gpuStats()!.cached).toBe(smallSet);
  });

  it('the cache is freed after idleMs without a call (default 1000 ms), not before', async () => {
    // Only the pool's timer is faked: Dawn's callbacks keep running.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    for (const [gpuCache, idleMs] of [[undefined, 1000], [{ idleMs: 5000 }, 5000]] as const) {
      const { lib } = await counted(gpuCache);
      await largeCall(lib);
      vi.advanceTimersByTime(idleMs - 1);
      expect(lib.gpuStats()!.cached).toBeGreaterThan(12 * MiB);
      await smallCall(lib);  // a call restarts the idle period
      vi.advanceTimersByTime(idleMs - 1);
      expect(lib.gpuStats()!.cached).toBeGreaterThan(12 * MiB);
      vi.advanceTimersByTime(1);
      expect(lib.gpuStats()!.cached).toBe(0);
    }
  });

  it('the idle timer does not keep Node running', async () => {
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    const { lib } = await counted({ idleMs: 4321 });
    await smallCall(lib);
    const timers = setTimeoutSpy.mock.calls.flatMap((c, i) => (c[1] === 4321 ? [setTimeoutSpy.mock.results[i].value as NodeJS.Timeout] : []));
    expect(timers.length).toBeGreaterThan(0);
    expect(timers.every((t) => !t.hasRef())).toBe(true);
  });

  it('a loop of same-sized calls creates no buffer after the first, past the 16-call age limit', async () => {
    const { lib, created } = await counted();
    await smallCall(lib);
    let before = created.n;
    for (let i = 0; i < 40; i++) await smallCall(lib);
    expect(created.n).toBe(before);
    // Two shapes taking turns, as ops of one frame would.
    await lib.maskedSoftmaxAsync(medium);
    before = created.n;
    for (let i = 0; i < 40; i++) await (i % 2 ? smallCall(lib) : lib.maskedSoftmaxAsync(medium));
    expect(created.n).toBe(before);
  });

  it('gpuStats() is null and trimGpuCache() does nothing on WebAssembly; gpuStats() after dispose() throws', async () => {
    const wasm = await load({ variant: 'simd', threads: 1 });
    libs.push(wasm);
    expect(wasm.gpuStats()).toBeNull();
    wasm.trimGpuCache();
    const { lib } = await counted();
    await smallCall(lib);
    lib.dispose();
    lib.trimGpuCache();
    expect(() => lib.gpuStats()).toThrowError(/^gpuStats: this attnlab instance has been disposed; call load\(\) for a new one$/);
  });

  it.each([
    [5, /^load: options\.gpuCache: expected an object \{ maxBytes, idleMs \}, got 5$/],
    [{ maxBytes: -1 }, /^load: options\.gpuCache\.maxBytes: expected a number of bytes >= 0 \(0: keep none, Infinity: no cap\), got -1$/],
    [{ maxBytes: '64MB' }, /^load: options\.gpuCache\.maxBytes: expected a number of bytes >= 0 .*, got "64MB"$/],
    [{ idleMs: NaN }, /^load: options\.gpuCache\.idleMs: expected a number of milliseconds >= 0 \(Infinity: never\), got NaN$/],
    [{ idleMs: -5 }, /^load: options\.gpuCache\.idleMs: expected .*, got -5$/],
    [{ maxbytes: 1 }, /^load: options\.gpuCache: unknown option 'maxbytes'; expected maxBytes, idleMs$/],
  ])('rejects options.gpuCache %o', async (gpuCache, message) => {
    await expect(load({ backend: 'webgpu', gpu, gpuCache: gpuCache as never })).rejects.toThrowError(message);
  });
});
