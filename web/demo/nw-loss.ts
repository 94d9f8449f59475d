// Leave-one-out loss of Nadaraya-Watson regression, the objective the pooling page trains the
// bandwidth on: each training point is predicted from all the others (one batched attnlab call).
import type { Attnlab, KernelName } from 'attnlab';

export interface XY {
  x: number;
  y: number;
}

export function looLoss(lib: Attnlab, pts: XY[], kernel: KernelName, bandwidth: number): number {
  const N = pts.length;
  if (N < 2) return NaN;
  const q = new Float32Array(N);
  const k = new Float32Array(N * (N - 1));
  const v = new Float32Array(N * (N - 1));
  for (let i = 0; i < N; i++) {
    q[i] = pts[i].x;
    let o = i * (N - 1);
    for (let j = 0; j < N; j++) {
      if (j === i) continue;
      k[o] = pts[j].x;
      v[o++] = pts[j].y;
    }
  }
  const r = lib.nadarayaWatson({ data: q, shape: [N, 1, 1] }, { data: k, shape: [N, N - 1, 1] }, { data: v, shape: [N, N - 1, 1] }, { kernel, bandwidth });
  let loss = 0;
  for (let i = 0; i < N; i++) loss += (r.output.data[i] - pts[i].y) ** 2;
  return loss / N;
}
