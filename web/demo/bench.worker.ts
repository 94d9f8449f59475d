// The in-browser benchmark: scaled dot-product attention [1, H, S, D] timed on each attnlab
// build (and WebGPU when the library offers it), off the main thread. The page cancels by
// terminating the worker.
import { load, type Attnlab, type LoadOptions, type Tensor, type Variant } from 'attnlab';

export interface BenchRequest {
  sizes: number[];
  heads: number;
  dim: number;
  variants: (Variant | 'webgpu')[];
  /** Keep calling for at least this long per point. */
  minMs: number;
}

export type BenchMessage =
  | { type: 'start'; variant: string; detail: string }
  | { type: 'result'; variant: string; S: number; ms: number; gflops: number; done: number; total: number }
  | { type: 'skip'; variant: string; reason: string; done: number; total: number }
  | { type: 'done' }
  | { type: 'error'; message: string };

const post = (m: BenchMessage) => (self as unknown as Worker).postMessage(m);

function random(n: number, seed: number): Float32Array {
  let a = seed >>> 0;
  return Float32Array.from({ length: n }, () => {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    return a / 2 ** 32 - 0.5;
  });
}

interface AsyncAttention {
  attentionAsync(q: Tensor, k: Tensor, v: Tensor): Promise<unknown>;
}

async function open(variant: Variant | 'webgpu'): Promise<{ lib: Attnlab; run: (q: Tensor, k: Tensor, v: Tensor) => unknown; detail: string }> {
  if (variant === 'webgpu') {
    // Only when the library has a WebGPU backend; older builds reject the option by name.
    const lib = await load({ backend: 'webgpu' } as LoadOptions);
    const a = lib as unknown as Partial<AsyncAttention>;
    if (typeof a.attentionAsync !== 'function') throw new Error('this attnlab build has no attentionAsync');
    return { lib, run: (q, k, v) => a.attentionAsync!(q, k, v), detail: 'WebGPU' };
  }
  const lib = await load({ variant });
  if (lib.variant !== variant) {  // fell back (no relaxed SIMD, no threads): not the build asked for
    const reason = lib.variantReason;
    lib.dispose();
    throw new Error(reason);
  }
  return { lib, run: (q, k, v) => lib.attention(q, k, v), detail: `${variant}, ${lib.threads} thread${lib.threads > 1 ? 's' : ''}` };
}

self.onmessage = async (e: MessageEvent<BenchRequest>) => {
  const { sizes, heads: H, dim: D, variants, minMs } = e.data;
  const total = sizes.length * variants.length;
  let done = 0;
  try {
    for (const variant of variants) {
      let opened: Awaited<ReturnType<typeof open>>;
      try {
        opened = await open(variant);
      } catch (err) {
        done += sizes.length;
        post({ type: 'skip', variant, reason: err instanceof Error ? err.message : String(err), done, total });
        continue;
      }
      post({ type: 'start', variant, detail: opened.detail });
      for (const S of sizes) {
        const shape = [1, H, S, D];
        const n = H * S * D;
        const q = { data: random(n, 1), shape };
        const k = { data: random(n, 2), shape };
        const v = { data: random(n, 3), shape };
        await opened.run(q, k, v); // warm-up
        let reps = 0;
        const t0 = performance.now();
        let t = t0;
        while (reps < 2 || t - t0 < minMs) {
          await opened.run(q, k, v);
          reps++;
          t = performance.now();
          if (reps >= 2000) break;
        }
        const ms = (t - t0) / reps;
        const flops = 4 * H * S * S * D;
        done++;
        post({ type: 'result', variant, S, ms, gflops: flops / (ms * 1e6), done, total });
      }
      opened.lib.dispose();
    }
    post({ type: 'done' });
  } catch (err) {
    post({ type: 'error', message: err instanceof Error ? err.message : String(err) });
  }
};
