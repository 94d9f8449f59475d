/**
 * The GPU could not run this call, though the same call can run elsewhere: no adapter, a lost
 * device, out of GPU memory, over a device limit. With backend 'auto' the call then runs on
 * WebAssembly; with 'webgpu' it rejects with this error.
 */
export class GpuUnavailableError extends Error {
  override name = 'GpuUnavailableError';
}

/**
 * A value the GPU computed passed float32's range where WebAssembly raises an Error for it (a
 * rotation of RoPE); the message is WebAssembly's. With backend 'auto' the call runs on
 * WebAssembly (as for other non-finite results); with 'webgpu' it rejects with this error.
 */
export class GpuOverflowError extends Error {}
