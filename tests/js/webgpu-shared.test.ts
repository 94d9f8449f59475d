// Inputs in a SharedArrayBuffer (a cross-origin isolated app's worker pool, say) on WebGPU (Dawn on
// SwiftShader, as webgpu.test.ts): the WebAssembly ops take them, and Dawn's writeBuffer refused
// them with a TypeError naming no call ('no overload matched for writeBuffer').
import { load, type Attnlab, type Tensor } from 'attnlab';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gpu, requireDawn } from './dawn.js';
import { randn } from './reference.js';

/** The same tensor, its data in a SharedArrayBuffer. */
function shared(t: Tensor): Tensor {
  const data = new Float32Array(new SharedArrayBuffer(t.data.byteLength));
  data.set(t.data);
  return { data, shape: t.shape };
}

const maxDiff = (a: Float32Array, b: Float32Array) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);

describe('WebGPU inputs backed by a SharedArrayBuffer', () => {
  let lib: Attnlab;
  beforeAll(async () => {
    await requireDawn();
    lib = await load({ backend: 'webgpu', gpu });
  });
  afterAll(() => lib?.dispose());

  it('attentionAsync, maskedSoftmaxAsync and multiHeadAttentionAsync give WebAssembly\'s results', async () => {
    const q = randn([2, 5, 8], 1), k = randn([2, 6, 8], 2), v = randn([2, 6, 4], 3);
    const attn = await lib.attentionAsync(shared(q), shared(k), shared(v), { causal: true, returnWeights: true });
    const want = lib.attention(q, k, v, { causal: true, returnWeights: true });
    expect(maxDiff(attn.output.data, want.output.data)).toBeLessThan(1e-5);
    expect(maxDiff(attn.weights.data, want.weights.data)).toBeLessThan(1e-5);

    const x = randn([3, 7], 4);
    expect(maxDiff((await lib.maskedSoftmaxAsync(shared(x))).data, lib.maskedSoftmax(x).data)).toBeLessThan(1e-5);

    const E = 8, m = randn([1, 5, E], 5);
    const params = { numHeads: 2, inProjWeight: randn([3 * E, E], 6, 0.3), outProjWeight: randn([E, E], 7, 0.3) };
    const sharedParams = { ...params, inProjWeight: shared(params.inProjWeight) };
    const got = await lib.multiHeadAttentionAsync(shared(m), shared(m), shared(m), sharedParams);
    expect(maxDiff(got.output.data, lib.multiHeadAttention(m, m, m, params).output.data)).toBeLessThan(1e-5);
  });
});
