// The benchmark: attnlab against onnxruntime-web and TensorFlow.js (WASM) and the SIMD128 mul+add
// peak, side by side in one Node process; where the engine runs relaxed SIMD (run.sh passes Node 20
// --experimental-wasm-relaxed-simd), also attnlab's relaxed builds and the relaxed-madd (FMA) peak. Each peer configuration runs in its own worker thread;
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
// --shapes=8x512,1x2048: only these H x S (results go to a -partial file, as with --peers).
const shapesArg = args.find((a) => a.startsWith('--shapes='));
const SHAPES = shapesArg ? shapesArg.slice(9).split(',').map((x) => x.split('x').map(Number))
  : [[8, 128], [8, 512], [8, 1024], [1, 2048], ...(quick ? [] : [[1, 8192]])];
const RUNS = quick ? 3 : 10;
const TOLERANCE = 1e-4;
// Pause between peers' turns: onnxruntime-web's pool threads spin for a few ms after a run and
// would slow whichever peer is timed next (measured: attnlab 2 threads, H8 S512, 12.8 ms right
// after an ORT 2-thread run, 9.0 ms 30 ms later, 9.2 ms alone). No peer pays for another.
const SETTLE_MS = 30;
// After the pause each peer makes untimed lead-in calls for at least this long, then the timed
// call: what the targets compare is sustained speed, and threads that have just been idle run
// slower and erratically here. This 2-core VM's kernel (booted with a non-mainline
// sched_vcpu_pack option) queues such threads on one vCPU while the other idles: after a 30 ms
// pause each of attnlab's two threads (H8 S512) waited up to 17 ms in the run queue over a
// one-call lead-in and the timed call, the other vCPU idle (schedstat, /proc/stat); a longer
// lead-in fixes most turns (tests/bench/README.md). Every peer gets the same lead-in; the first
// lead-in call's time and the timed calls' run-queue waits are reported.
const LEAD_IN_MS = 30;
const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

// Relaxed SIMD: the FMA peak kernel (peak/peak_fma.wasm) validates exactly where it runs.
const RELAXED = existsSync(path.join(here, 'peak', 'peak_fma.wasm')) && WebAssembly.validate(readFileSync(path.join(here, 'peak', 'peak_fma.wasm')));
const JOBS = SHAPES.flatMap(([H, S]) => [false, true].map((causal) => ({ H, S, causal })));
const PEERS = [
  { name: 'attnlab scalar', kind: 'attnlab', variant: 'scalar', threads: 1 },
  { name: 'attnlab simd', kind: 'attnlab', variant: 'simd', threads: 1, memory: true },
  { name: 'attnlab simd-threads', kind: 'attnlab', variant: 'simd-threads', threads: 2 },
  ...(RELAXED ? [
    { name: 'attnlab relaxed-simd', kind: 'attnlab', variant: 'relaxed-simd', threads: 1 },
    { name: 'attnlab relaxed-simd-threads', kind: 'attnlab', variant: 'relaxed-simd-threads', threads: 2 },
  ] : []),
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
  const w = new Worker(path.join(here, 'peers.mjs'), { workerData: { peer, runs: RUNS, warmupMs: 300, leadInMs: LEAD_IN_MS } });
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
// The code measured: its commit, "+changes" when the work tree differed from it.
const source = (() => {
  try {
    const git = (...a) => execFileSync('git', a, { cwd: path.join(here, '../..'), encoding: 'utf8' }).trim();
    return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') ? '+changes' : ''}`;
  } catch {
    return null;
  }
})();
const packages = Object.fromEntries(['attnlab', 'onnxruntime-web', '@tensorflow/tfjs-core', '@tensorflow/tfjs-backend-wasm'].map((p) => [p, versionOf(p)]));
console.log(`attnlab benchmark, ${started.toISOString()}: ${machine.cpu} x${machine.cores}, Node ${machine.node}, load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);

async function measurePeak(fma = false) {
  const w = startWorker({ kind: 'peak', fma });
  const m = await w.next();
  await w.stop();
  return m.flops / median(m.times) / 1e6;
}

console.log('SIMD128 mul+add peak');
const peakBefore = await measurePeak();
console.log(`  ${peakBefore.toFixed(1)} GFLOP/s`);
const fmaBefore = RELAXED ? await measurePeak(true) : null;
if (RELAXED) console.log(`relaxed-madd (FMA) peak: ${fmaBefore.toFixed(1)} GFLOP/s`);

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
// The peak kernel also takes a turn in every round, so each shape has a peak measured in the same
// rounds as its peers (the host's speed moves during a run; see README.md).
const roundPeak = { worker: startWorker({ kind: 'peak-round' }) };
roundPeak.flops = (await roundPeak.worker.next()).info.flops;
const roundFma = RELAXED ? { worker: startWorker({ kind: 'peak-round', fma: true }) } : null;
if (roundFma) roundFma.flops = (await roundFma.worker.next()).info.flops;
const loads = [];
const roundPeaks = [];
/**
 * The timed calls' CPU time (all threads of the process) per wall time, and mean run-queue wait.
 * Sums over the calls, not medians: schedstat advances in scheduler ticks for running threads
 * (4 ms here), an error that averages out over calls but not within one.
 */
function schedSummary(samples, times) {
  const i = samples.map((x, k) => (x ? k : -1)).filter((k) => k >= 0);
  if (i.length < samples.length / 2) return {};
  const sum = (f) => i.reduce((acc, k) => acc + f(k), 0);
  return { cpuPerWall: sum((k) => samples[k].cpuMs) / sum((k) => times[k]), waitMs: sum((k) => samples[k].waitMs) / i.length, sched: samples };
}
for (const job of JOBS) {
  const tag = `H${job.H} S${job.S}${job.causal ? ' causal' : ''}`;
  const load = os.loadavg()[0];
  const active = [];
  for (const p of live()) {
    const r = await p.worker.request({ cmd: 'job', job });
    if (r.type === 'error') p.rows.push({ ...job, error: r.error });
    else active.push({ p, times: [], first: [], sched: [] });
  }
  const peakTurn = { p: { worker: roundPeak.worker }, times: [], first: [], sched: [] };
  await roundPeak.worker.request({ cmd: 'job', job });
  const fmaTurn = roundFma ? { p: { worker: roundFma.worker }, times: [], first: [], sched: [] } : null;
  if (roundFma) await roundFma.worker.request({ cmd: 'job', job });
  for (let run = 0; run < RUNS; run++) {
    for (const a of [...active.filter((x) => !x.error), peakTurn, ...(fmaTurn ? [fmaTurn] : [])]) {
      await settle();
      const r = await a.p.worker.request({ cmd: 'once' });
      if (r.type === 'error') a.error = r.error;
      else a.times.push(r.ms), a.first.push(r.firstMs), a.sched.push(r.sched);
    }
  }
  const { rows: checked, want } = referenceFor(job);
  for (const a of active) {
    if (a.error) { a.p.rows.push({ ...job, error: a.error }); continue; }
    const { out } = await a.p.worker.request({ cmd: 'output' });
    const ms = median(a.times);
    const gflops = (4 * job.H * job.S * job.S * D) / ms / 1e6;
    a.p.rows.push({
      ...job, ms, gflops, maxError: maxError(out, want, job.H, job.S, D, checked), checkedRows: checked ? checked.length : job.S,
      times: a.times, firstMs: median(a.first), firstTimes: a.first, ...schedSummary(a.sched, a.times),
    });
  }
  if (peakTurn.error) throw new Error(`the peak kernel failed: ${peakTurn.error}`);
  if (fmaTurn?.error) throw new Error(`the FMA peak kernel failed: ${fmaTurn.error}`);
  roundPeaks.push({
    ...job, gflops: roundPeak.flops / median(peakTurn.times) / 1e6, times: peakTurn.times,
    ...(fmaTurn ? { fmaGflops: roundFma.flops / median(fmaTurn.times) / 1e6, fmaTimes: fmaTurn.times } : {}),
  });
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
await roundPeak.worker.stop();
await roundFma?.worker.stop();
const peakAfter = await measurePeak();
const peak = { gflops: Math.max(peakBefore, peakAfter), before: peakBefore, after: peakAfter };
console.log(`SIMD128 mul+add peak again: ${peakAfter.toFixed(1)} GFLOP/s`);
const fmaAfter = RELAXED ? await measurePeak(true) : null;
if (RELAXED) {
  peak.fma = { gflops: Math.max(fmaBefore, fmaAfter), before: fmaBefore, after: fmaAfter };
  console.log(`relaxed-madd (FMA) peak again: ${fmaAfter.toFixed(1)} GFLOP/s`);
}

const native = nativeArg && existsSync(nativeArg.slice(9)) ? JSON.parse(readFileSync(nativeArg.slice(9), 'utf8')) : null;
const results = {
  date: started.toISOString(), finished: new Date().toISOString(), quick, runs: RUNS, settleMs: SETTLE_MS, d: D,
  flops: '4*H*S*S*d per call, causal not halved', tolerance: TOLERANCE, machine, source, packages, peak, roundPeaks, leadInMs: LEAD_IN_MS, loads, mha, memory, native,
  peers: peers.map(({ worker, ...p }) => p),
};
const dir = path.join(here, 'results');
mkdirSync(dir, { recursive: true });
// A second run on the same day gets -2, -3, ...: committed results are never overwritten.
const base = path.join(dir, `bench-${started.toISOString().slice(0, 10)}${quick ? '-quick' : ''}${peersArg || shapesArg ? '-partial' : ''}`);
let stem = base;
for (let n = 2; existsSync(`${stem}.json`); n++) stem = `${base}-${n}`;
writeFileSync(`${stem}.json`, JSON.stringify(results, null, 1));
writeFileSync(`${stem}.md`, markdown(results));
console.log(`wrote ${path.relative(process.cwd(), stem)}.json and .md`);
