// The WebGPU backend in Node: Dawn (npm `webgpu`) on SwiftShader's Vulkan, which Debian's chromium
// ships. Every GPU op against the WebAssembly backend; 'auto' and 'webgpu' without an adapter;
// device loss, out-of-memory and over-limit calls; argument checking identical to WebAssembly's.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { GpuUnavailableError, load, type Attnlab, type GpuProvider } from 'attnlab';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gpu, requireDawn } from './dawn.js';
import { randBool, randn } from './reference.js';
import { compareCase, GPU_CASES, GPU_TOL } from './webgpu-cases.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
let gpuLib: Attnlab;
let wasmLib: Attnlab;

beforeAll(async () => {
  await requireDawn();
  gpuLib = await load({ backend: 'webgpu', gpu, variant: 'simd', threads: 1 });
  wasmLib = await load({ variant: 'simd', threads: 1 });
});

afterAll(() => {
  gpuLib?.dispose();
  wasmLib?.dispose();
});

/** A gpu whose adapter reports `limits` and hands every device it makes to `devices`. */
function wrappedGpu(devices: GPUDevice[], limits: Partial<Record<keyof GPUSupportedLimits, number>> = {}): GpuProvider {
  return {
    async requestAdapter() {
      const adapter = await gpu.requestAdapter();
      if (!adapter) return null;
      const reported: Record<string, unknown> = {};
      for (const key of ['maxStorageBufferBindingSize', 'maxBufferSize', 'maxComputeWorkgroupStorageSize'] as const) {
        reported[key] = limits[key] ?? adapter.limits[key];
      }
      return {
        info: adapter.info,
        limits: reported,
        async requestDevice(descriptor?: GPUDeviceDescriptor) {
          const device = await adapter.requestDevice(descriptor);
          devices.push(device);
          return device;
        },
      };
    },
  };
}

describe('WebGPU against WebAssembly', () => {
  it('loads on the SwiftShader adapter', () => {
    expect(gpuLib.backend).toBe('webgpu');
    expect(gpuLib.gpuAdapter?.architecture).toBe('swiftshader');
    expect(wasmLib.backend).toBe('wasm');
    expect(wasmLib.gpuAdapter).toBeNull();
  });

  it.each(GPU_CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const r = await compareCase(gpuLib, wasmLib, c);
    expect(r.shapesMatch).toBe(true);
    expect(r.maxAbsError).toBeLessThanOrEqual(GPU_TOL);
    expect(r.zeroMismatches).toBe(0);
  });

  it('fully masked rows give exactly zero weights and output on the GPU', async () => {
    const q = randn([1, 3, 16], 1);
    const attnMask = { data: Uint8Array.from([1, 1, 1, 0, 0, 0, 1, 0, 1]), shape: [3, 3] };
    for (const returnWeights of [false, true]) {
      const { output, weights } = await gpuLib.attentionAsync(q, q, q, { attnMask, returnWeights });
      expect(Array.from(output.data.slice(16, 32))).toEqual(new Array(16).fill(0));
      if (returnWeights) expect(Array.from(weights!.data.slice(3, 6))).toEqual([0, 0, 0]);
    }
  });

  it('repeated calls reuse pipelines and buffers and give identical results', async () => {
    const q = randn([2, 100, 16], 3);
    const first = await gpuLib.attentionAsync(q, q, q, { causal: true });
    const again = await Promise.all([1, 2, 3].map(() => gpuLib.attentionAsync(q, q, q, { causal: true })));
    for (const r of again) expect(r.output.data).toEqual(first.output.data);
  });

  it('every case at once: overlapping calls of all shapes, masks and ops each get their own answer', { timeout: 180_000 }, async () => {
    // All GPU calls are in flight together (compareCase awaits the GPU before WebAssembly), so a
    // pooled buffer handed to two calls, or a readback of the wrong call, shows up as an error.
    const all = await Promise.all([...GPU_CASES, ...GPU_CASES].map((c) => compareCase(gpuLib, wasmLib, c)));
    const bad = all.filter((r) => !r.shapesMatch || !(r.maxAbsError <= GPU_TOL) || r.zeroMismatches > 0);
    expect(bad).toEqual([]);
  });

  it('compiles once per shape class and reuses buffers across calls', { timeout: 180_000 }, async () => {
    const devices: GPUDevice[] = [];
    const lib = await load({ backend: 'webgpu', gpu: wrappedGpu(devices), variant: 'simd' });
    const run = (S: number, B: number, options = {}) => {
      const x = randn([B, S, 16], S);
      return lib.attentionAsync(x, x, x, options);
    };
    await run(10, 1);
    const device = devices[0];
    const counts = { shaders: 0, buffers: 0 };
    const createShaderModule = device.createShaderModule.bind(device);
    const createBuffer = device.createBuffer.bind(device);
    device.createShaderModule = (d) => (counts.shaders++, createShaderModule(d));
    device.createBuffer = (d) => (counts.buffers++, createBuffer(d));
    // Other lengths, batches and masks: the same fused kernel.
    await run(70, 3, { causal: true });
    await run(200, 2, { validLens: new Int32Array([5, 100]) });
    await run(33, 1, { attnMask: randBool([33, 33], 1, 0.5) });
    expect(counts.shaders).toBe(0);
    // Weights: the matmul path's kernels (scores, softmax, mix), once.
    await run(20, 1, { returnWeights: true });
    await run(90, 2, { returnWeights: true, causal: true });
    expect(counts.shaders).toBe(3);
    // A repeated call takes every buffer from the pool.
    const before = counts.buffers;
    await run(90, 2, { returnWeights: true, causal: true });
    expect(counts.buffers).toBe(before);
    lib.dispose();
  });

  it('the fused path never allocates an [Sq, Sk] buffer; only returnWeights does', { timeout: 180_000 }, async () => {
    const devices: GPUDevice[] = [];
    const lib = await load({ backend: 'webgpu', gpu: wrappedGpu(devices), variant: 'simd' });
    const S = 512, D = 16;
    const x = randn([1, S, D], 9);
    await lib.attentionAsync(randn([1, 4, D], 1), randn([1, 4, D], 2), randn([1, 4, D], 3));
    const sizes: number[] = [];
    const createBuffer = devices[0].createBuffer.bind(devices[0]);
    devices[0].createBuffer = (d) => (sizes.push(d.size), createBuffer(d));
    const big = () => sizes.filter((b) => b >= S * S * 4).length;
    for (const options of [{}, { causal: true }, { validLens: new Int32Array([300]) }, { attnMask: randBool([1, S], 4, 0.7) }]) {
      sizes.length = 0;
      await lib.attentionAsync(x, x, x, options);
      expect(big()).toBe(0);
    }
    // A full [S, S] mask travels as one 32-bit word per element (WGSL storage has no bytes): that
    // buffer, and no score matrix beside it.
    sizes.length = 0;
    await lib.attentionAsync(x, x, x, { attnMask: randBool([S, S], 4, 0.7) });
    expect(big()).toBe(1);
    sizes.length = 0;
    await lib.attentionAsync(x, x, x, { returnWeights: true });
    expect(Math.max(...sizes)).toBeGreaterThanOrEqual(S * S * 4);
    lib.dispose();
  });

  it('sync methods of a WebGPU instance run on WebAssembly', () => {
    const q = randn([2, 5, 8], 4);
    expect(gpuLib.attention(q, q, q).output.data).toEqual(wasmLib.attention(q, q, q).output.data);
  });
});

describe('argument checking is the same on both backends', () => {
  const q = randn([2, 3, 4], 1), k = randn([2, 5, 4], 2), v = randn([2, 5, 6], 3);
  const x = randn([2, 3, 5], 4);
  const E = 4;
  const p = { numHeads: 2, inProjWeight: randn([3 * E, E], 4), outProjWeight: randn([E, E], 5) };
  const m = randn([3, E], 6);
  type Call = (lib: Attnlab) => Promise<unknown>;
  const cases: [string, Call][] = [
    ['q not a tensor', (l) => l.attentionAsync(null as never, k, v)],
    ['NaN in q', (l) => l.attentionAsync({ data: Float32Array.from(q.data, (y, i) => (i === 7 ? NaN : y)), shape: q.shape }, k, v)],
    ['k feature size differs', (l) => l.attentionAsync(q, randn([2, 5, 3], 1), v)],
    ['mask that does not broadcast', (l) => l.attentionAsync(q, k, v, { attnMask: { data: new Uint8Array(4), shape: [4] } })],
    ['validLens out of range', (l) => l.attentionAsync(q, k, v, { validLens: new Int32Array([2, 6]) })],
    ['validLens of a wrong length', (l) => l.attentionAsync(q, k, v, { validLens: new Int32Array([1, 2, 3]) })],
    ['unknown option', (l) => l.attentionAsync(q, k, v, { retrunWeights: true } as never)],
    ['softmax mask that does not broadcast', (l) => l.maskedSoftmaxAsync(x, { attnMask: { data: new Uint8Array(4), shape: [4] } })],
    ['softmax validLens out of range', (l) => l.maskedSoftmaxAsync(x, { validLens: new Int32Array([9]) })],
    ['numHeads not dividing E', (l) => l.multiHeadAttentionAsync(m, m, m, { ...p, numHeads: 3 })],
    ['keyPaddingMask of the wrong shape', (l) => l.multiHeadAttentionAsync(m, m, m, p, { keyPaddingMask: { data: new Uint8Array(4), shape: [4] } })],
  ];
  it.each(cases)('%s', async (_name, call) => {
    let wasmError: unknown;
    await call(wasmLib).catch((e) => (wasmError = e));
    expect(wasmError).toBeInstanceOf(Error);
    await expect(call(gpuLib)).rejects.toThrowError((wasmError as Error).message);
  });
});

describe('sparse patterns', () => {
  // Patterns run on the GPU as a boolean [Sq, Sk] mask (GPU_CASES run them on a 'webgpu'
  // instance, which never falls back, against WebAssembly's sparse kernel); one whose mask would
  // exceed PATTERN_MASK_MAX entries stays on WebAssembly.
  const big = randn([5793, 1], 6);  // 5793^2 > 2^25
  const local = { pattern: { type: 'local', window: 2 } } as const;

  it("over 2^25 scores: 'webgpu' rejects with a clear error", async () => {
    await expect(gpuLib.attentionAsync(big, big, big, local)).rejects.toThrowError(
      /^attention: options\.pattern over 33554432 scores \(Sq x Sk = 5793 x 5793\), which runs as a dense mask there, is not supported on the WebGPU backend; load with backend: 'auto' to run such calls on WebAssembly$/);
  });

  it("over 2^25 scores: 'auto' runs it on WebAssembly", async () => {
    const auto = await load({ backend: 'auto', gpu, variant: 'simd' });
    expect(auto.backend).toBe('webgpu');
    expect((await auto.attentionAsync(big, big, big, local)).output.data).toEqual(wasmLib.attention(big, big, big, local).output.data);
    auto.dispose();
  });
});

describe("Shaw's relative embeddings", () => {
  // A WebAssembly kernel: 'webgpu' refuses the option by name, 'auto' runs it there.
  const q = randn([2, 9, 8], 7);
  const shaw = { maxDistance: 2, keys: randn([5, 8], 8), values: randn([5, 8], 9) };
  const params = { numHeads: 2, inProjWeight: randn([24, 8], 10, 0.3), outProjWeight: randn([8, 8], 11, 0.3) };
  const shawHead = { ...shaw, keys: randn([5, 4], 8), values: randn([5, 4], 9) };

  it("'webgpu' rejects it with a clear error", async () => {
    await expect(gpuLib.attentionAsync(q, q, q, { shaw })).rejects.toThrowError(
      /^attention: options\.shaw \(Shaw's relative embeddings, a WebAssembly kernel\) is not supported on the WebGPU backend; load with backend: 'auto' to run such calls on WebAssembly$/);
    await expect(gpuLib.multiHeadAttentionAsync(q, q, q, params, { shaw: shawHead })).rejects.toThrowError(
      /^multiHeadAttention: options\.shaw \(Shaw's relative embeddings, a WebAssembly kernel\) is not supported on the WebGPU backend/);
  });

  it("'auto' runs it on WebAssembly", async () => {
    const auto = await load({ backend: 'auto', gpu, variant: 'simd' });
    expect((await auto.attentionAsync(q, q, q, { shaw })).output.data).toEqual(wasmLib.attention(q, q, q, { shaw }).output.data);
    expect((await auto.multiHeadAttentionAsync(q, q, q, params, { shaw: shawHead })).output.data).toEqual(wasmLib.multiHeadAttention(q, q, q, params, { shaw: shawHead }).output.data);
    auto.dispose();
  });
});

describe('without an adapter', () => {
  const none: GpuProvider = { requestAdapter: async () => null };

  it("'webgpu' rejects", async () => {
    await expect(load({ backend: 'webgpu', gpu: none })).rejects.toThrowError(
      /^load: options\.backend: 'webgpu' needs a WebGPU adapter, and requestAdapter\(\) found none; use backend: 'auto' to fall back to WebAssembly$/);
  });

  it("'webgpu' without navigator.gpu or options.gpu rejects", async () => {
    await expect(load({ backend: 'webgpu' })).rejects.toThrowError(/^load: options\.backend: 'webgpu' needs WebGPU, and this environment has no navigator\.gpu/);
  });

  it("'auto' falls back to WebAssembly, and the async methods work", async () => {
    const lib = await load({ backend: 'auto', gpu: none, variant: 'simd' });
    expect(lib.backend).toBe('wasm');
    const q = randn([1, 4, 8], 1);
    expect((await lib.attentionAsync(q, q, q)).output.data).toEqual(wasmLib.attention(q, q, q).output.data);
    lib.dispose();
  });

  it("'auto' falls back to WebAssembly when Vulkan has no driver (a process without the ICD)", () => {
    const script = `
      import { create } from 'webgpu';
      import { load } from 'attnlab';
      const gpu = create([]);
      const auto = await load({ backend: 'auto', gpu, variant: 'simd' });
      const q = { data: new Float32Array([1, 2, 3, 4]), shape: [2, 2] };
      const out = await auto.attentionAsync(q, q, q);
      const strict = await load({ backend: 'webgpu', gpu }).then(() => 'loaded', (e) => e.message);
      console.log(JSON.stringify({ backend: auto.backend, finite: out.output.data.every(Number.isFinite), strict }));
      auto.dispose();
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: repo, env: { ...process.env, VK_ICD_FILENAMES: '/nonexistent/no_icd.json' }, encoding: 'utf8', timeout: 60_000,
      stdio: ['ignore', 'pipe', 'pipe'],  // Vulkan's "found no drivers" warnings are expected here
    });
    const r = JSON.parse(out.trim().split('\n').at(-1)!);
    expect(r).toEqual({ backend: 'wasm', finite: true, strict: expect.stringMatching(/^load: options\.backend: 'webgpu' needs a WebGPU adapter/) });
  });

  it('rejects bad backend and gpu options', async () => {
    await expect(load({ backend: 'cuda' as never })).rejects.toThrowError(/^load: options\.backend: expected one of 'wasm', 'webgpu', 'auto', got "cuda"$/);
    await expect(load({ backend: 'auto', gpu: {} as never })).rejects.toThrowError(/^load: options\.gpu: expected a WebGPU entry point with requestAdapter\(\)/);
  });
});

describe('device loss and out of memory', () => {
  const q = randn([2, 70, 16], 7);
  const want = () => wasmLib.attention(q, q, q, { causal: true }).output.data;
  const near = (got: Float32Array) => {
    const w = want();
    return got.every((x, i) => Math.abs(x - w[i]) <= GPU_TOL);
  };

  it("'webgpu': after device.destroy() the next call opens a new device and works", async () => {
    const devices: GPUDevice[] = [];
    const lib = await load({ backend: 'webgpu', gpu: wrappedGpu(devices), variant: 'simd' });
    expect(near((await lib.attentionAsync(q, q, q, { causal: true })).output.data)).toBe(true);
    devices[0].destroy();
    await devices[0].lost;
    expect(near((await lib.attentionAsync(q, q, q, { causal: true })).output.data)).toBe(true);
    expect(devices).toHaveLength(2);
    lib.dispose();
  });

  it("'webgpu': a call in flight when the device is destroyed rejects clearly; the next call works", async () => {
    const devices: GPUDevice[] = [];
    const lib = await load({ backend: 'webgpu', gpu: wrappedGpu(devices), variant: 'simd' });
    await lib.attentionAsync(q, q, q, { causal: true });  // pipelines compiled
    const inFlight = lib.attentionAsync(q, q, q, { causal: true });
    devices[0].destroy();
    await expect(inFlight).rejects.toThrowError(/^attention: the GPU device was lost \(.*\); the next call opens a new one$/);
    await expect(inFlight).rejects.toBeInstanceOf(GpuUnavailableError);
    expect(near((await lib.attentionAsync(q, q, q, { causal: true })).output.data)).toBe(true);
    lib.dispose();
  });

  it("'auto': a call in flight when the device is destroyed runs on WebAssembly; later calls use a new device", async () => {
    const devices: GPUDevice[] = [];
    const lib = await load({ backend: 'auto', gpu: wrappedGpu(devices), variant: 'simd' });
    await lib.attentionAsync(q, q, q, { causal: true });
    const inFlight = lib.attentionAsync(q, q, q, { causal: true });
    devices[0].destroy();
    expect((await inFlight).output.data).toEqual(want());  // bit-identical: WebAssembly ran it
    expect(near((await lib.attentionAsync(q, q, q, { causal: true })).output.data)).toBe(true);
    expect(devices).toHaveLength(2);
    lib.dispose();
  });

  it('a call over the device buffer limit: a clear error on webgpu, WebAssembly on auto', { timeout: 180_000 }, async () => {
    // WebGPU's default limits (an adapter offering no more): 128 MiB per binding, 256 MiB per buffer.
    const limits = { maxStorageBufferBindingSize: 2 ** 27, maxBufferSize: 2 ** 28 };
    const big = randn([1, 6000, 4], 8);  // weights: 6000 * 6000 * 4 bytes > 128 MiB
    const strict = await load({ backend: 'webgpu', gpu: wrappedGpu([], limits), variant: 'simd' });
    await expect(strict.attentionAsync(big, big, big, { returnWeights: true })).rejects.toThrowError(
      /^attention: needs a GPU buffer of 144000000 bytes, over this device's maxStorageBufferBindingSize of 134217728 bytes$/);
    // Within the limit, the same instance still works.
    expect(near((await strict.attentionAsync(q, q, q, { causal: true })).output.data)).toBe(true);
    strict.dispose();
    const auto = await load({ backend: 'auto', gpu: wrappedGpu([], limits), variant: 'simd' });
    const r = await auto.attentionAsync(big, big, big, { returnWeights: true });
    // Bit-identical to WebAssembly's (a loop: toEqual on 36M elements exhausts the JS heap).
    const w = wasmLib.attention(big, big, big, { returnWeights: true }).weights!.data;
    expect(r.weights!.data.length).toBe(w.length);
    expect(r.weights!.data.every((x, i) => x === w[i])).toBe(true);
    auto.dispose();
  });

  it('out of GPU memory (as the device reports it): a clear error, and the next call works', async () => {
    const devices: GPUDevice[] = [];
    const lib = await load({ backend: 'webgpu', gpu: wrappedGpu(devices), variant: 'simd' });
    await lib.attentionAsync(q, q, q, { causal: true });
    // Make the device report out-of-memory for the next call's scope, as a real GPU would.
    const device = devices[0];
    const pop = device.popErrorScope.bind(device);
    let pops = 0;
    device.popErrorScope = async () => {
      const real = await pop();
      return ++pops === 2 ? ({ message: 'Out of memory (simulated)' } as GPUError) : real;
    };
    await expect(lib.attentionAsync(q, q, q, { causal: true })).rejects.toThrowError(/^attention: out of GPU memory \(Out of memory \(simulated\)\); cached buffers were freed/);
    expect(near((await lib.attentionAsync(q, q, q, { causal: true })).output.data)).toBe(true);
    lib.dispose();
  });

  it('a disposed instance rejects clearly', async () => {
    const lib = await load({ backend: 'webgpu', gpu, variant: 'simd' });
    lib.dispose();
    await expect(lib.attentionAsync(q, q, q)).rejects.toThrowError(/^attention: this attnlab instance has been disposed; call load\(\) for a new one$/);
  });
});

// Found by an audit of the backend: each case ran on the GPU and gave another answer than
// WebAssembly, or an internal error that 'auto' did not fall back from.
describe('limits of the GPU kernels', () => {
  const MIN = -3.4028234663852886e38;  // torch.finfo(float32).min, Hugging Face's mask value

  it('a row masked with -FLT_MAX everywhere gets equal weights, as on WebAssembly (the running max started above it)', async () => {
    const q = { data: Float32Array.from({ length: 12 }, (_, i) => Math.sin(i + 1)), shape: [3, 4] };
    const attnMask = { data: Float32Array.from([MIN, MIN, MIN, 0, 0, MIN, 0, 0, 0]), shape: [3, 3] };
    const g = await gpuLib.attentionAsync(q, q, q, { attnMask, returnWeights: true });
    const w = wasmLib.attention(q, q, q, { attnMask, returnWeights: true });
    expect(Array.from(g.weights.data.subarray(0, 3))).toEqual([1, 1, 1].map((x) => Math.fround(x / 3)));
    expect(Math.max(...g.output.data.map((x, i) => Math.abs(x - w.output.data[i])))).toBeLessThan(GPU_TOL);
    const x = { data: Float32Array.from([-3.3e38, -3.35e38, MIN]), shape: [3] };
    expect(Array.from((await gpuLib.maskedSoftmaxAsync(x)).data)).toEqual(Array.from(wasmLib.maskedSoftmax(x).data));
  });

  it("scores past float32: 'webgpu' names the limit, 'auto' gives WebAssembly's exact answer", async () => {
    // Every score of row 0 past float32 (0.5e40, 1e40): f32 kernels made NaN of it.
    const q = { data: Float32Array.from([1e20, 0, 0, 0, 2e20, 0, 0, 0]), shape: [2, 4] }, v = randn([2, 4], 3);
    await expect(gpuLib.attentionAsync(q, q, v)).rejects.toThrowError(/^attention: scores or projections pass float32's range \(beyond ±3\.4e38\), which the WebGPU kernels do not handle; load with backend: 'auto'/);
    const auto = await load({ backend: 'auto', gpu, variant: 'simd' });
    expect((await auto.attentionAsync(q, q, v)).output.data).toEqual(wasmLib.attention(q, q, v).output.data);
    auto.dispose();
  });

  it("a RoPE rotation past float32: 'webgpu' rejects with WebAssembly's Error naming q, k or the projection; 'auto' runs WebAssembly", async () => {
    // Pairs (-3.4e38, 3.4e38) turned by any angle but 0 leave float32 (position 0 does not turn).
    const big = { data: Float32Array.from({ length: 16 }, (_, i) => (i % 2 ? 3.4e38 : -3.4e38)), shape: [1, 4, 4] };
    const small = randn([1, 4, 4], 36), v = randn([1, 4, 2], 37);
    const wasmError = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return (e as Error).message;
      }
      throw new Error('WebAssembly did not throw');
    };
    for (const [q, k, returnWeights] of [[big, small, false], [small, big, false], [big, small, true]] as const) {
      const want = wasmError(() => wasmLib.attention(q, k, v, { rope: true, returnWeights }));
      expect(want).toMatch(/^attention: [qk], options\.rope: the rotation overflows float32 \(beyond ±3\.4e38\) at index \d+; scale the inputs down$/);
      await expect(gpuLib.attentionAsync(q, k, v, { rope: true, returnWeights })).rejects.toThrowError(want);
    }
    // multiHeadAttention: identity projections carry the big pairs into the rotated queries.
    const E = 4, eye = Float32Array.from({ length: E * E }, (_, i) => (i % (E + 1) === 0 ? 1 : 0));
    const params = { numHeads: 1, inProjWeight: { data: Float32Array.from([...eye, ...eye, ...eye]), shape: [3 * E, E] }, outProjWeight: { data: eye, shape: [E, E] } };
    const mhaWant = wasmError(() => wasmLib.multiHeadAttention(big, small, small, params, { rope: true }));
    expect(mhaWant).toMatch(/^multiHeadAttention: query, params\.inProjWeight, options\.rope: the rotation overflows float32/);
    await expect(gpuLib.multiHeadAttentionAsync(big, small, small, params, { rope: true })).rejects.toThrowError(mhaWant);
    // The instance keeps working; 'auto' gives WebAssembly's Error too (it runs the call there).
    expect((await gpuLib.attentionAsync(small, small, v, { rope: true })).output.data.every(Number.isFinite)).toBe(true);
    const auto = await load({ backend: 'auto', gpu, variant: 'simd' });
    await expect(auto.attentionAsync(big, small, v, { rope: true })).rejects.toThrowError(wasmError(() => wasmLib.attention(big, small, v, { rope: true })));
    auto.dispose();
  });

  it("four element-wise masks at once: 'webgpu' names the limit, 'auto' runs them on WebAssembly", async () => {
    const x = randn([1, 2, 8, 4], 4);
    const opts = { attnMask: { data: new Uint8Array(64).fill(1), shape: [8, 8] }, pattern: { type: 'local', window: 2 }, alibi: true, t5: { weights: randn([2, 32], 5) } } as const;
    await expect(gpuLib.attentionAsync(x, x, x, opts)).rejects.toThrowError(/^attention: more than 3 element-wise masks at once \(here 4: masks, ALiBi and T5's bias count one each\) are not supported on the WebGPU backend/);
    const auto = await load({ backend: 'auto', gpu, variant: 'simd' });
    expect((await auto.attentionAsync(x, x, x, opts)).output.data).toEqual(wasmLib.attention(x, x, x, opts).output.data);
    auto.dispose();
  });

  it('dispose() while a call runs on the GPU: that call says so (it said the device was lost)', async () => {
    for (const backend of ['webgpu', 'auto'] as const) {
      const lib = await load({ backend, gpu, variant: 'simd' });
      const q = randn([2, 128, 32], 6);
      const pending = lib.attentionAsync(q, q, q);
      lib.dispose();
      await expect(pending, backend).rejects.toThrowError(/^attention: this attnlab instance was disposed while the call ran on the GPU$/);
    }
  });

  it("a grid past maxComputeWorkgroupsPerDimension: 'webgpu' names the limit before any GPU work", async () => {
    const N = 4_200_000, q = { data: new Float32Array(N).fill(0.5), shape: [N, 1] }, k = { data: Float32Array.of(1), shape: [1, 1] };
    await expect(gpuLib.attentionAsync(q, k, k)).rejects.toThrowError(/^attention: needs a grid of \[\d+, \d+, \d+\] workgroups, over this device's maxComputeWorkgroupsPerDimension of 65535$/);
    expect((await gpuLib.attentionAsync(k, k, k)).output.data).toEqual(Float32Array.of(1));  // the instance keeps working
  });
});
