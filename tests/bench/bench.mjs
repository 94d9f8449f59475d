// The benchmark: attnlab against onnxruntime-web and TensorFlow.js (WASM) and the SIMD128 mul+add
// peak, side by side in one Node process. Each peer configuration runs in its own worker thread;
// per shape the timed calls go round-robin over the peers. Writes results/bench-<date>.json and .md. `npm run bench` builds what it
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
// --peers=<regexp>: only the peers whose "name, N thread(s)" matches (for looking into one).
const peersArg = args.find((a) => a.startsWith('--peers='));
const D = 64;
const SHAPES = [[8, 128], [8, 512], [8, 1024], [1, 2048], ...(quick ? [] : [[1, 8192]])];
const RUNS = quick ? 3 : 10;
const TOLERANCE = 1e-4;
// Pause between peers' turns: onnxruntime-web's pool threads spin for a few ms after a run and
// would slow whichever peer is timed next (measured: attnlab 2 threads, H8 S512, 12.8 ms right
// after an ORT 2-thread run, 9.0 ms 30 ms later, 9.2 ms alone). No peer pays for another.
// After the pause each peer makes an untimed lead-in call and then the timed one: the first call
// after an idle pause is slower and erratic for threaded code (attnlab 2 threads, H1 S2048
// causal, 30 ms pauses: 6.6-14 ms, bimodal; the call right after it 6.4-8.8 ms), and what the
// targets compare is sustained speed. The lead-in times are reported too.
const SETTLE_MS = 30;
const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

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
].filter((p) => !peersArg || new RegExp(peersArg.slice(8)).test(`${p.name}, ${p.threads} thread(s)`));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** A peer's worker and a request/response channel to it (one request at a time). */
function startWorker(peer) {
  const w = new Worker(path.join(here, 'peers.mjs'), { workerData: { peer, runs: RUNS, warmupMs: 300 } });
  let waiting = null;
  const inbox = [];
  const deliver = (m) => (waiting ? (waiting(m), (waiting = null)) : inbox.push(m));
  w.on('message', deliver);
  w.on('error', (e) => deliver({ type: 'error', error: String(e.message ?? e).split('\n')[0] }));
  const next = () => new Promise((resolve) => (inbox.length ? resolve(inbox.shift()) : (waiting = resolve)));
  return {
    next,
    request: (msg) => { w.postMessage(msg); return next(); },
    stop: () => w.terminate(),
  };
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

async function measurePeak() {
  const w = startWorker({ kind: 'peak' });
  const m = await w.next();
  await w.stop();
  return m.flops / median(m.times) / 1e6;
}

console.log('SIMD128 mul+add peak');
const peakBefore = await measurePeak();
console.log(`  ${peakBefore.toFixed(1)} GFLOP/s`);

// Every peer in its own worker, all started up front; per shape: each prepares and warms up in
// turn, then the timed calls go round-robin, one call per peer per round.
const peers = [];
for (const peer of PEERS) {
  const w = startWorker(peer);
  const ready = await w.next();
  const p = { ...peer, worker: w, info: ready.info ?? null, error: ready.type === 'error' ? ready.error : null, rows: [] };
  console.log(`${peer.name}, ${peer.threads} thread(s): ${p.error ? `failed: ${p.error}` : 'ready'}`);
  if (p.error) await w.stop();
  peers.push(p);
}
const live = () => peers.filter((p) => !p.error);
const loads = [];
for (const job of JOBS) {
  const tag = `H${job.H} S${job.S}${job.causal ? ' causal' : ''}`;
  const load = os.loadavg()[0];
  const active = [];
  for (const p of live()) {
    const r = await p.worker.request({ cmd: 'job', job });
    if (r.type === 'error') p.rows.push({ ...job, error: r.error });
    else active.push({ p, times: [], first: [] });
  }
  for (let run = 0; run < RUNS; run++) {
    for (const a of active.filter((x) => !x.error)) {
      await settle();
      const r = await a.p.worker.request({ cmd: 'once' });
      if (r.type === 'error') a.error = r.error;
      else a.times.push(r.ms), a.first.push(r.firstMs);
    }
  }
  const { rows: checked, want } = referenceFor(job);
  for (const a of active) {
    if (a.error) { a.p.rows.push({ ...job, error: a.error }); continue; }
    const { out } = await a.p.worker.request({ cmd: 'output' });
    const ms = median(a.times);
    const gflops = (4 * job.H * job.S * job.S * D) / ms / 1e6;
    a.p.rows.push({ ...job, ms, gflops, maxError: maxError(out, want, job.H, job.S, D, checked), checkedRows: checked ? checked.length : job.S, times: a.times, firstMs: median(a.first), firstTimes: a.first });
  }
  loads.push({ job: tag, before: load, after: os.loadavg()[0] });
  console.log(`${tag} (load ${load.toFixed(1)}): ${active.map((a) => `${a.p.name.replace('ORT-web ', 'ORT ')} t${a.p.threads} ${a.error ? 'failed' : median(a.times).toFixed(2)}`).join(', ')}`);
}

// Extras, peer by peer: multi-head attention against its parts, and the long causal call's heap.
const mha = { rows: [] };
let memory = null;
for (const p of live().filter((x) => x.kind === 'attnlab')) {
  const r = await p.worker.request({ cmd: 'extras' });
  if (r.type === 'error') throw new Error(`${p.name}: the extra measurements failed: ${r.error}`);
  for (const x of r.extras ?? []) {
    if (x.kind === 'mha') {
      mha.rows.push({ variant: p.variant, threads: p.threads, mha: median(x.mha), linear: median(x.linear), core: median(x.core) });
      Object.assign(mha, { E: x.E, H: x.H, S: x.S });
    } else if (x.kind === 'memory') {
      memory = { ...x, variant: p.variant };
    }
  }
}
for (const p of live()) await p.worker.stop();
const peakAfter = await measurePeak();
const peak = { gflops: Math.max(peakBefore, peakAfter), before: peakBefore, after: peakAfter };
console.log(`SIMD128 mul+add peak again: ${peakAfter.toFixed(1)} GFLOP/s`);

const native = nativeArg && existsSync(nativeArg.slice(9)) ? JSON.parse(readFileSync(nativeArg.slice(9), 'utf8')) : null;
const results = {
  date: started.toISOString(), finished: new Date().toISOString(), quick, runs: RUNS, settleMs: SETTLE_MS, d: D,
  flops: '4*H*S*S*d per call, causal not halved', tolerance: TOLERANCE, machine, packages, peak, loads, mha, memory, native,
  peers: peers.map(({ worker, ...p }) => p),
};
const dir = path.join(here, 'results');
mkdirSync(dir, { recursive: true });
const stem = path.join(dir, `bench-${started.toISOString().slice(0, 10)}${quick ? '-quick' : ''}${peersArg ? '-partial' : ''}`);
writeFileSync(`${stem}.json`, JSON.stringify(results, null, 1));
writeFileSync(`${stem}.md`, markdown(results));
console.log(`wrote ${path.relative(process.cwd(), stem)}.json and .md`);
