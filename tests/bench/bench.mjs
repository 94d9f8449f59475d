// The benchmark: attnlab against onnxruntime-web and TensorFlow.js (WASM) and the SIMD128 mul+add
// peak, side by side in one Node process. Each peer configuration runs in its own worker thread,
// one after another. Writes results/bench-<date>.json and .md. `npm run bench` builds what it
// needs first; `node tests/bench/bench.mjs --quick` is a fast smoke run (3 runs, no S=8192).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { checkedRows, inputs, maxError, reference } from './data.mjs';
import { markdown } from './report.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const nativeArg = args.find((a) => a.startsWith('--native='));
const D = 64;
const SHAPES = [[8, 128], [8, 512], [8, 1024], [1, 2048], ...(quick ? [] : [[1, 8192]])];
const RUNS = quick ? 3 : 10;
const TOLERANCE = 1e-4;

const JOBS = SHAPES.flatMap(([H, S]) => [false, true].map((causal) => ({ H, S, causal })));
const PEERS = [
  { name: 'attnlab scalar', kind: 'attnlab', variant: 'scalar', threads: 1 },
  { name: 'attnlab simd', kind: 'attnlab', variant: 'simd', threads: 1, memory: true },
  { name: 'attnlab simd-threads', kind: 'attnlab', variant: 'simd-threads', threads: 2 },
  ...[1, 2].flatMap((threads) => [
    { name: 'ORT-web MatMul-Softmax-MatMul', kind: 'ort', graph: 'msm', threads },
    { name: 'ORT-web com.microsoft MultiHeadAttention', kind: 'ort', graph: 'mha', threads },
    { name: 'ORT-web ONNX opset-23 Attention', kind: 'ort', graph: 'attention', threads },
  ]),
  { name: 'TF.js WASM', kind: 'tfjs', threads: 1 },
  { name: 'TF.js WASM', kind: 'tfjs', threads: 2 },
];

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

function runWorker(peer, jobs) {
  return new Promise((resolve) => {
    const result = { info: null, error: null, rows: [], peak: null, extras: [] };
    const w = new Worker(path.join(here, 'peers.mjs'), { workerData: { peer, jobs, runs: RUNS, warmupMs: 300 } });
    w.on('message', (m) => {
      if (m.type === 'info') result.info = m.info;
      else if (m.type === 'error') result.error = m.error;
      else if (m.type === 'peak') result.peak = m;
      else if (m.type === 'extra') result.extras.push(m.extra);
      else if (m.type === 'result') {
        result.rows.push(m);
        const tag = m.error ? `error: ${m.error}` : `${median(m.times).toFixed(2)} ms`;
        console.log(`  H${m.job.H} S${m.job.S}${m.job.causal ? ' causal' : ''}: ${tag}`);
      } else if (m.type === 'done') w.terminate();
    });
    w.on('error', (e) => { result.error = String(e.message ?? e).split('\n')[0]; });
    w.on('exit', () => resolve(result));
  });
}

const refs = new Map();
function referenceFor({ H, S, causal }) {
  const key = `${H}/${S}/${causal}`;
  if (!refs.has(key)) {
    const rows = checkedRows(H, S);
    refs.set(key, { rows, want: reference(inputs(H, S, D), H, S, D, causal, rows) });
  }
  return refs.get(key);
}

function versionOf(pkg) {
  // Read from node_modules: not every package exports its package.json.
  const file = pkg === 'attnlab' ? path.join(here, '../../package.json') : path.join(here, '../../node_modules', pkg, 'package.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).version : null;
}

const started = new Date();
const machine = {
  cpu: os.cpus()[0]?.model ?? 'unknown',
  cores: os.availableParallelism?.() ?? os.cpus().length,
  node: process.versions.node,
  v8: process.versions.v8,
  emscripten: (() => { try { return execFileSync('emcc', ['--version'], { encoding: 'utf8' }).split('\n')[0]; } catch { return null; } })(),
};
const packages = Object.fromEntries(['attnlab', 'onnxruntime-web', '@tensorflow/tfjs-core', '@tensorflow/tfjs-backend-wasm'].map((p) => [p, versionOf(p)]));
console.log(`attnlab benchmark, ${started.toISOString()}: ${machine.cpu} x${machine.cores}, Node ${machine.node}, load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);

console.log('SIMD128 mul+add peak');
const peakRun = await runWorker({ kind: 'peak' }, []);
const peak = { gflops: peakRun.peak.flops / median(peakRun.peak.times) / 1e6, times: peakRun.peak.times };
console.log(`  ${peak.gflops.toFixed(1)} GFLOP/s`);

const peers = [];
const mha = { rows: [] };
let memory = null;
for (const peer of PEERS) {
  console.log(`${peer.name}, ${peer.threads} thread(s)`);
  const load = os.loadavg()[0];
  const r = await runWorker(peer, JOBS);
  if (r.error) console.log(`  failed: ${r.error}`);
  const rows = r.rows.map(({ job, times, out, error }) => {
    if (error) return { ...job, error };
    const ms = median(times);
    const { rows: checked, want } = referenceFor(job);
    const gflops = (4 * job.H * job.S * job.S * D) / ms / 1e6;
    return { ...job, ms, gflops, peakFraction: gflops / peak.gflops, maxError: maxError(out, want, job.H, job.S, D, checked), checkedRows: checked ? checked.length : job.S, times };
  });
  peers.push({ ...peer, info: r.info, error: r.error, loadBefore: load, loadAfter: os.loadavg()[0], rows });
  for (const x of r.extras) {
    if (x.kind === 'mha') {
      mha.rows.push({ variant: peer.variant, threads: peer.threads, mha: median(x.mha), linear: median(x.linear), core: median(x.core) });
      Object.assign(mha, { E: x.E, H: x.H, S: x.S });
    } else if (x.kind === 'memory') {
      memory = { ...x, variant: peer.variant };
    }
  }
}

const native = nativeArg && existsSync(nativeArg.slice(9)) ? JSON.parse(readFileSync(nativeArg.slice(9), 'utf8')) : null;
const results = {
  date: started.toISOString(), finished: new Date().toISOString(), quick, runs: RUNS, d: D,
  flops: '4*H*S*S*d per call, causal not halved', tolerance: TOLERANCE, machine, packages, peak, peers, mha, memory, native,
};
const dir = path.join(here, 'results');
mkdirSync(dir, { recursive: true });
const stem = path.join(dir, `bench-${started.toISOString().slice(0, 10)}${quick ? '-quick' : ''}`);
writeFileSync(`${stem}.json`, JSON.stringify(results, null, 1));
writeFileSync(`${stem}.md`, markdown(results));
console.log(`wrote ${path.relative(process.cwd(), stem)}.json and .md`);
