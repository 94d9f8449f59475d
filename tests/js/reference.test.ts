// Self-tests of the comparison helpers the other tests trust: a NaN or an infinity in a result
// must fail every tolerance, wherever it sits in the array.
import type { Attnlab, Tensor } from 'attnlab';
import { describe, expect, it } from 'vitest';
import { maxError } from './reference.js';
import { compareCase, GPU_TOL, type GpuCase } from './webgpu-cases.js';

const TOL = 1e-5;

describe('maxError', () => {
  it('flags a NaN in the middle of an array, even when later elements differ', () => {
    const want = [0.1, 0.2, 0.3, 0.4, 0.5];
    // NaN at index 2, then a small finite error at index 3: the NaN must stay the verdict.
    const got = [0.1, 0.2, NaN, 0.4 + 1e-7, 0.5];
    expect(maxError(got, want)).toBe(Infinity);
    expect(() => expect(maxError(got, want)).toBeLessThanOrEqual(TOL)).toThrow();
    expect(() => expect(maxError(got, want)).toBeLessThan(TOL)).toThrow();
  });

  it('flags a NaN first, last, and in the reference', () => {
    expect(maxError([NaN, 1, 2], [0, 1, 2 + 1e-3])).toBe(Infinity);
    expect(maxError([0, 1, NaN], [0, 1, 2])).toBe(Infinity);
    expect(maxError([0, 1, 2], [0, NaN, 2])).toBe(Infinity);
    expect(maxError(Float32Array.from([0, NaN, 0]), Float64Array.from([0, 0, 0]))).toBe(Infinity);
  });

  it('flags infinities that do not match, and accepts ones that do', () => {
    expect(maxError([0, Infinity, 0], [0, 1, 0])).toBe(Infinity);
    expect(maxError([0, 1, 0], [0, -Infinity, 0])).toBe(Infinity);
    expect(maxError([Infinity], [-Infinity])).toBe(Infinity);
    expect(maxError([-Infinity, 0.5], [-Infinity, 0.5])).toBe(0);
  });

  it('is |got - want| / max(1, |want|): absolute up to magnitude 1, relative above', () => {
    expect(maxError([0.5 + 2e-6], [0.5])).toBeCloseTo(2e-6, 12);
    expect(maxError([1e-3 + 2e-6], [1e-3])).toBeCloseTo(2e-6, 12);  // absolute, not 2e-3
    expect(maxError([100 + 2e-4], [100])).toBeCloseTo(2e-6, 12);    // relative, not 2e-4
    expect(maxError([3, -1e6 * (1 + 4e-6)], [3, -1e6])).toBeCloseTo(4e-6, 12);
    expect(maxError([], [])).toBe(0);
  });

  it('a length mismatch is Infinity', () => {
    expect(maxError([1, 2], [1, 2, 3])).toBe(Infinity);
  });
});

describe('compareCase (WebGPU against WebAssembly)', () => {
  const t = (xs: number[]): Tensor => ({ data: Float32Array.from(xs), shape: [xs.length] });
  const gpu = { name: 'gpu' } as unknown as Attnlab;
  const wasm = { name: 'wasm' } as unknown as Attnlab;
  const fake = (onGpu: number[], onWasm: number[]): GpuCase =>
    ({ name: 'fake', run: async (lib: Attnlab) => t(lib === gpu ? onGpu : onWasm) }) as unknown as GpuCase;

  it('a NaN in the middle of the GPU result stays the worst error', async () => {
    const r = await compareCase(gpu, wasm, fake([0.1, NaN, 0.3 + 1e-6, 0.4], [0.1, 0.2, 0.3, 0.4]));
    expect(r.maxAbsError).toBe(Infinity);
    expect(r.maxAbsError <= GPU_TOL).toBe(false);
  });

  it('measures finite differences as before', async () => {
    const r = await compareCase(gpu, wasm, fake([0.1, 0.2 + 0.5e-4, 0.3], [0.1, 0.2, 0.3]));
    expect(r.maxAbsError).toBeGreaterThan(0.4e-4);
    expect(r.maxAbsError).toBeLessThanOrEqual(GPU_TOL);
  });
});
