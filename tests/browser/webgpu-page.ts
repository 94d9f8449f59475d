// Runs inside the test page: the Node test's WebGPU-versus-WebAssembly cases, on navigator.gpu.
import { load } from 'attnlab';
import { compareCase, GPU_CASES, type Comparison } from '../js/webgpu-cases.js';

export interface PageReport {
  backend: string;
  autoBackend: string;
  adapter: unknown;
  wasmVariant: string;
  crossOriginIsolated: boolean;
  comparisons: (Comparison | { name: string; error: string })[];
}

async function run(): Promise<PageReport> {
  // No `gpu` option: the default, navigator.gpu.
  const gpu = await load({ backend: 'webgpu' });
  const auto = await load({ backend: 'auto' });
  const wasm = await load();
  const comparisons: PageReport['comparisons'] = [];
  for (const c of GPU_CASES) {
    try {
      comparisons.push(await compareCase(gpu, wasm, c));
    } catch (e) {
      comparisons.push({ name: c.name, error: e instanceof Error ? e.message : String(e) });
    }
  }
  const report = {
    backend: gpu.backend, autoBackend: auto.backend, adapter: gpu.gpuAdapter, wasmVariant: wasm.variant,
    crossOriginIsolated: globalThis.crossOriginIsolated, comparisons,
  };
  for (const lib of [gpu, auto, wasm]) lib.dispose();
  return report;
}

(globalThis as { attnlabWebGpuReport?: Promise<PageReport> }).attnlabWebGpuReport = run();
