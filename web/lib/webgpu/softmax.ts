// maskedSoftmax() on the GPU: one dispatch of the masked softmax kernel.
import type { MaskedSoftmaxArgs } from '../softmax.js';
import { numel } from '../tensor.js';
import type { Tensor } from '../types.js';
import { GpuCall } from './call.js';
import type { GpuDevice } from './device.js';
import { softmax, softmaxKernel, uploadMasks } from './kernels.js';

export async function gpuMaskedSoftmax(dev: GpuDevice, a: MaskedSoftmaxArgs): Promise<Tensor> {
  const len = a.X.data.length;
  if (len === 0) return { data: a.out ?? new Float32Array(0), shape: a.X.shape };
  const pipeline = await dev.pipeline(softmaxKernel);
  const [y] = await GpuCall.run(dev, a.fn, (call) => {
    const out = call.scratch(len);
    softmax(call, pipeline, { Sq: a.Sq, Sk: a.Sk, rows: numel(a.lead) * a.Sq }, uploadMasks(call, a.layout), call.upload(a.X.data), out);
    return [[out, len]];
  });
  // options.out: the readback's copy, as the WebAssembly path gives it.
  return { data: a.out ? (a.out.set(y), a.out) : y, shape: a.X.shape };
}
