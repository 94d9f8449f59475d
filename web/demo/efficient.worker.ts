// Times dense, sparse, linear, LSH and Synthesizer attention as S grows, off the main thread.
import { load, type Tensor } from 'attnlab';
import { costCall, efficientApi, type Method } from './efficient-api';

export interface CostRequest {
  sizes: number[];
  dim: number;
  methods: Method[];
  window: number;
  block: number;
  minMs: number;
}

export type CostMessage =
  | { type: 'missing' }
  | { type: 'result'; method: Method; S: number; ms: number; done: number; total: number }
  | { type: 'done' }
  | { type: 'error'; message: string };

const post = (m: CostMessage) => (self as unknown as Worker).postMessage(m);

function random(n: number, seed: number): Float32Array {
  let a = seed >>> 0;
  return Float32Array.from({ length: n }, () => {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    return a / 2 ** 32 - 0.5;
  });
}

self.onmessage = async (e: MessageEvent<CostRequest>) => {
  const { sizes, dim, methods, window, block, minMs } = e.data;
  try {
    const lib = await load({ threads: 1 }).catch(() => load({ variant: 'simd' }));
    const api = efficientApi(lib);
    if (!api) {
      post({ type: 'missing' });
      return;
    }
    const total = sizes.length * methods.length;
    let done = 0;
    for (const S of sizes) {
      const shape = [1, S, dim];
      const q: Tensor = { data: random(S * dim, 1), shape };
      const k: Tensor = { data: random(S * dim, 2), shape };
      const v: Tensor = { data: random(S * dim, 3), shape };
      for (const method of methods) {
        const run = costCall(api, method, q, k, v, window, block, random);
        run();
        let reps = 0;
        const t0 = performance.now();
        let t = t0;
        while (reps < 2 || t - t0 < minMs) {
          run();
          reps++;
          t = performance.now();
        }
        done++;
        post({ type: 'result', method, S, ms: (t - t0) / reps, done, total });
      }
    }
    lib.dispose();
    post({ type: 'done' });
  } catch (err) {
    post({ type: 'error', message: err instanceof Error ? err.message : String(err) });
  }
};
