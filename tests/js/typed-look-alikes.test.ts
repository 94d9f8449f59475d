// Issue 17, item 6: promised error types. load({ backend: 'webgpu' }) without WebGPU rejects
// with the GpuUnavailableError the types promise; a Proxy over a typed array (instanceof passes,
// the internal slots are missing) is a named Error, never a raw TypeError from the heap copy; so
// is a typed array whose buffer was transferred away (length 0, said to be detached).
import { GpuUnavailableError, load, type Attnlab } from 'attnlab';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe('GpuUnavailableError', () => {
  it("load({ backend: 'webgpu' }) rejects with it when there is no WebGPU or no adapter", async () => {
    await expect(load({ backend: 'webgpu' })).rejects.toBeInstanceOf(GpuUnavailableError);
    await expect(load({ backend: 'webgpu', gpu: { requestAdapter: async () => null } })).rejects.toBeInstanceOf(GpuUnavailableError);
    await expect(load({ backend: 'webgpu', gpu: { requestAdapter: async () => { throw new Error('boom'); } } })).rejects.toBeInstanceOf(GpuUnavailableError);
  });
});

describe('a Proxy over a typed array', () => {
  let lib: Attnlab;
  beforeAll(async () => {
    lib = await load({ variant: 'simd' });
  });
  afterAll(() => lib?.dispose());

  const lookAlike = (a: ArrayBufferView) => new Proxy(a, {});
  it('is a named Error in tensors, masks, validLens and alibi slopes; the instance keeps working', () => {
    const q = { data: new Float32Array(8).fill(0.5), shape: [1, 2, 4] };
    const fake = { data: lookAlike(new Float32Array(8)) as Float32Array, shape: [1, 2, 4] };
    const said = /expected a Float32Array, got an object that only inherits from one \(a Proxy\?\); pass the typed array itself$/;
    expect(() => lib.attention(fake, q, q)).toThrowError(new RegExp(`^attention: q\\.data: ${said.source}`));
    expect(() => lib.attention(q, q, q, { attnMask: { data: lookAlike(new Uint8Array(4)) as Uint8Array, shape: [2, 2] } }))
      .toThrowError(/^attention: options\.attnMask\.data: expected a Uint8Array, got an object that only inherits from one/);
    expect(() => lib.attention(q, q, q, { validLens: lookAlike(new Int32Array([1])) as Int32Array }))
      .toThrowError(/^attention: options\.validLens: expected an Int32Array, got an object that only inherits from one/);
    expect(() => lib.maskedSoftmax(fake)).toThrowError(/^maskedSoftmax: x\.data: expected a Float32Array, got an object that only inherits/);
    expect(lib.attention(q, q, q).output.shape).toEqual([1, 2, 4]);
  });

  it('a detached buffer (transferred to a Worker) is named as such, not only as length 0', () => {
    const q = { data: new Float32Array(8).fill(0.5), shape: [1, 2, 4] };
    const gone = new Float32Array(8);
    structuredClone(gone.buffer, { transfer: [gone.buffer] });
    expect(() => lib.attention({ data: gone, shape: [1, 2, 4] }, q, q)).toThrowError(
      /^attention: q: expected data of length 8 for shape \[1, 2, 4\], got length 0 \(its ArrayBuffer is detached: transferred away, e\.g\. to a Worker\)$/);
    expect(() => lib.attention(q, q, q, { out: gone })).toThrowError(/^attention: options\.out: expected a Float32Array of length 8 .*got length 0 \(its ArrayBuffer is detached/);
    // An empty array of a live buffer is only a wrong length.
    expect(() => lib.attention({ data: new Float32Array(0), shape: [1, 2, 4] }, q, q)).toThrowError(/got length 0$/);
    expect(lib.attention(q, q, q).output.data).toHaveLength(8);
  });
});
