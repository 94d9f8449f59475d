// Trains the Nadaraya-Watson bandwidth off the main thread: gradient descent (Adam) on log h,
// the gradient of the leave-one-out loss by central finite differences over attnlab's
// nadarayaWatson. Posts every step; the page cancels by terminating the worker.
import { load, type Attnlab, type KernelName } from 'attnlab';
import { looLoss, type XY } from './nw-loss';

export interface TrainRequest {
  points: XY[];
  kernel: KernelName;
  bandwidth: number;
  steps: number;
  lr: number;
  /** The bandwidths training may reach: the page's slider and URL range, so a trained h can be shown and reloaded. */
  range: [number, number];
  /** Pause between steps, so a person can watch the loss fall. */
  delayMs: number;
}

export type TrainMessage =
  | { type: 'step'; step: number; steps: number; bandwidth: number; loss: number }
  | { type: 'done'; bandwidth: number; loss: number }
  | { type: 'error'; message: string };

async function loadQuiet(): Promise<Attnlab> {
  // One thread is plenty for a few dozen points; no pthread pool inside the worker.
  try {
    return await load({ variant: 'simd' });
  } catch {
    return load({ variant: 'scalar' });
  }
}

const post = (m: TrainMessage) => (self as unknown as Worker).postMessage(m);

self.onmessage = async (e: MessageEvent<TrainRequest>) => {
  try {
    const { points, kernel, steps, lr, range, delayMs } = e.data;
    const lib = await loadQuiet();
    let theta = Math.log(e.data.bandwidth);
    let m = 0;
    let v = 0;
    const eps = 0.02;
    const lossAt = (t: number) => looLoss(lib, points, kernel, Math.exp(t));
    for (let step = 1; step <= steps; step++) {
      const g = (lossAt(theta + eps) - lossAt(theta - eps)) / (2 * eps);
      m = 0.9 * m + 0.1 * g;
      v = 0.999 * v + 0.001 * g * g;
      const mh = m / (1 - 0.9 ** step);
      const vh = v / (1 - 0.999 ** step);
      theta -= (lr * mh) / (Math.sqrt(vh) + 1e-8);
      theta = Math.min(Math.log(range[1]), Math.max(Math.log(range[0]), theta));
      post({ type: 'step', step, steps, bandwidth: Math.exp(theta), loss: lossAt(theta) });
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    }
    post({ type: 'done', bandwidth: Math.exp(theta), loss: lossAt(theta) });
    lib.dispose();
  } catch (err) {
    post({ type: 'error', message: err instanceof Error ? err.message : String(err) });
  }
};
