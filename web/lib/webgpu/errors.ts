/**
 * The GPU could not run this call, though the same call can run elsewhere: no adapter, a lost
 * device, out of GPU memory, over a device limit. With backend 'auto' the call then runs on
 * WebAssembly; with 'webgpu' it rejects with this error.
 */
export class GpuUnavailableError extends Error {
  override name = 'GpuUnavailableError';
}
