// attnlab's own 2-thread speed-up, alone in a Node process: the SIMD build at 1 thread against
// the SIMD+threads build at 1 and 2 threads, calls interleaved round-robin (JS arrays in and out),
// median of 20 after warm-up. The main benchmark (bench.mjs) measures the same builds among the
// other peers' worker threads, where the 2-thread runs come out bimodal (the second thread often
// joins late); this isolates the library's own scaling. Writes results/threads-<date>.md.
//   node tests/bench/threads.bench.mjs
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { load } from 'attnlab';

const D = 64, REPS = 20;
const SHAPES = [[8, 128], [8, 512], [8, 1024], [1, 2048], [1, 8192]];
const simd = await load({ variant: 'simd', threads: 1 });
const t1 = await load({ variant: 'simd-threads', threads: 1 });
const t2 = await load({ variant: 'simd-threads', threads: 2 });
const median = (v) => v.slice().sort((a, b) => a - b)[v.length >> 1];
const rand = (n, seed) => {
  const d = new Float32Array(n);
  let x = seed;
  for (let i = 0; i < n; i++) d[i] = ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648) - 0.5;
  return d;
};

const rows = [];
for (const [H, S] of SHAPES) {
  for (const causal of [false, true]) {
    const q = { data: rand(H * S * D, 1), shape: [1, H, S, D] };
    const libs = { simd, t1, t2 };
    const t = { simd: [], t1: [], t2: [] };
    for (const l of Object.values(libs)) for (let i = 0; i < 2; i++) l.attention(q, q, q, { causal });
    const reps = S >= 8192 ? 7 : REPS;
    for (let r = 0; r < reps; r++) {
      for (const [k, l] of Object.entries(libs)) {
        const t0 = performance.now();
        l.attention(q, q, q, { causal });
        t[k].push(performance.now() - t0);
      }
    }
    const m = { simd: median(t.simd), t1: median(t.t1), t2: median(t.t2) };
    rows.push({ H, S, causal, ...m, speedup: m.simd / m.t2 });
    console.log(`H${H} S${S}${causal ? ' causal' : ''}: simd ${m.simd.toFixed(2)} ms, threads build 1 thread ${m.t1.toFixed(2)}, 2 threads ${m.t2.toFixed(2)}: ${(m.simd / m.t2).toFixed(2)}x`);
  }
}
const date = new Date().toISOString();
const md = [
  `# attnlab 2-thread speed-up, alone in one Node process (${date})`, '',
  `- machine: ${os.cpus()[0]?.model}, ${os.cpus().length} cores; Node ${process.version}; load average ${os.loadavg()[0].toFixed(2)} at the end`,
  `- d = ${D}, median of ${REPS} interleaved calls (7 at S = 8192) after 2 warm-up calls each; JS arrays in and out`, '',
  '| shape | simd, 1 thread ms | simd-threads, 1 thread ms | simd-threads, 2 threads ms | speed-up (simd / 2 threads) |',
  '|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.causal ? 'causal ' : ''}H${r.H} S${r.S} | ${r.simd.toFixed(2)} | ${r.t1.toFixed(2)} | ${r.t2.toFixed(2)} | ${r.speedup.toFixed(2)}x |`),
  '',
].join('\n');
writeFileSync(new URL(`./results/threads-${date.slice(0, 10)}.md`, import.meta.url), md);
for (const l of [simd, t1, t2]) l.dispose();
