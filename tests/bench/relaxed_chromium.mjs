// The relaxed-SIMD builds in headless Chromium (relaxed SIMD on by default, no flag), side by side
// in one page with the SIMD128 builds (output into a reused array; one thread also with a new
// array per call), onnxruntime-web's MatMul-Softmax-MatMul and
// com.microsoft MultiHeadAttention graphs (1 thread, and 2 from a second ORT in an iframe) and both
// peak kernels (f32x4 mul+add, and its f32x4.relaxed_madd twin, also on 2 Workers). Per shape each peer warms up,
// then the timed calls go round-robin (as bench.mjs: a 30 ms pause, 30 ms of untimed lead-in calls,
// the timed call); medians; every output checked against the float64 reference. The page is
// cross-origin isolated (COOP/COEP), so the threaded builds run with 2 threads.
//   node tests/bench/relaxed_chromium.mjs [--quick]    # writes results/relaxed-chromium-<date>.{json,md}
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import os from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('../..', import.meta.url));
const quick = process.argv.includes('--quick');
const config = {
  shapes: quick ? [[8, 512]] : [[8, 512], [8, 1024], [1, 2048]],
  runs: quick ? 3 : 10, d: 64, settleMs: 30, leadInMs: 30, warmupMs: 300, tolerance: 1e-4,
};
const types = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html', '.onnx': 'application/octet-stream', '.json': 'application/json' };

const page = `<!doctype html><meta charset="utf-8"><script type="module">
import { load } from '/dist/index.js';
import { inputs, reference, maxError, checkedRows } from '/tests/bench/data.mjs';
import * as ort from '/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs';
const C = ${JSON.stringify(config)};
const D = C.d;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => { const s = [...xs].sort((a, b) => a - b), m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
async function kernel(file) {
  const { instance } = await WebAssembly.instantiate(await (await fetch(file)).arrayBuffer(), { wasi_snapshot_preview1: { proc_exit() {} } });
  return instance.exports.peak;
}
const PEAK_ITERATIONS = 2_500_000;
const peers = [];
// Each attnlab build writes into one reused output array (options.out), as a loop over
// same-sized calls would; the two single-thread builds run again with a new array per call, the
// default, whose fresh pages cost 5-9% at H8 S512 on a KVM guest. ORT-web allocates its output
// every run: given a pre-allocated CPU output, 1.30 returns that tensor with its data unwritten
// (tried in Node: an output tensor filled with 7 came back all 7), so it has no such option.
for (const [variant, threads, reuse] of [['simd', 1, true], ['relaxed-simd', 1, true], ['simd-threads', 2, true], ['relaxed-simd-threads', 2, true], ['simd', 1, false], ['relaxed-simd', 1, false]]) {
  const lib = await load({ variant, threads });
  if (lib.variant !== variant) throw new Error(variant + ': got ' + lib.variant + ' (' + lib.variantReason + ')');
  peers.push({ name: 'attnlab ' + variant + (reuse ? '' : ', new array'), threads, isa: lib.isa, prepare: ({ H, S, causal }, x) => {
    const shape = [H, S, D], q = { data: x.q, shape }, k = { data: x.k, shape }, v = { data: x.v, shape };
    const out = reuse ? new Float32Array(H * S * D) : undefined;
    return () => lib.attention(q, k, v, { causal, out }).output.data;
  } });
}
// ORT-web's thread count is one per page (ort.env, read at its first session), so its 2-thread
// peers run in a same-origin iframe with a second ORT: still called from this page's round-robin.
// Their inputs are the iframe's own Float32Arrays (ORT's instanceof checks are per realm).
ort.env.wasm.numThreads = 1;
ort.env.wasm.wasmPaths = '/node_modules/onnxruntime-web/dist/';
const frame = document.createElement('iframe');
frame.src = '/ort-threads';
document.body.append(frame);
for (let t = 0; !frame.contentWindow?.ort; t++) {
  if (t === 600) throw new Error('the 2-thread ORT iframe did not load in 30 s');
  await sleep(50);
}
const ortThreaded = frame.contentWindow.ort;
function causalMask(S) { const m = new Float32Array(S * S); for (let i = 0; i < S; i++) m.fill(-Infinity, i * S + i + 1, (i + 1) * S); return m; }
function bsnh(x, H, S) { const y = new Float32Array(x.length); for (let h = 0; h < H; h++) for (let s = 0; s < S; s++) y.set(x.subarray((h * S + s) * D, (h * S + s + 1) * D), (s * H + h) * D); return y; }
function unbsnh(y, H, S) { const x = new Float32Array(y.length); for (let h = 0; h < H; h++) for (let s = 0; s < S; s++) x.set(y.subarray((s * H + h) * D, (s * H + h + 1) * D), (h * S + s) * D); return x; }
for (const [lib, threads, F32] of [[ort, 1, Float32Array], [ortThreaded, 2, frame.contentWindow.Float32Array]]) {
  const sessions = {};
  const session = async (name) => (sessions[name] ??= await lib.InferenceSession.create('/tests/bench/graphs/' + name + '.onnx', { executionProviders: ['wasm'], graphOptimizationLevel: 'all' }));
  const own = (a) => new F32(a);
  peers.push({ name: 'ORT-web MatMul-Softmax-MatMul', threads, prepare: async ({ H, S, causal }, x) => {
    const s = await session('msm' + (causal ? '_causal' : '')), shape = [H, S, D], mask = causal ? own(causalMask(S)) : null;
    const [q, k, v] = [x.q, x.k, x.v].map(own);
    return async () => {
      const f = { q: new lib.Tensor('float32', q, shape), k: new lib.Tensor('float32', k, shape), v: new lib.Tensor('float32', v, shape) };
      if (mask) f.mask = new lib.Tensor('float32', mask, [S, S]);
      return (await s.run(f)).out.data;
    };
  } });
  peers.push({ name: 'ORT-web com.microsoft MultiHeadAttention', threads, prepare: async ({ H, S, causal }, x) => {
    const s = await session('mha_h' + H + (causal ? '_causal' : '')), shape = [1, S, H * D];
    const [q, k, v] = [x.q, x.k, x.v].map((t) => own(bsnh(t, H, S)));
    const call = async () => (await s.run({ q: new lib.Tensor('float32', q, shape), k: new lib.Tensor('float32', k, shape), v: new lib.Tensor('float32', v, shape) })).out.data;
    call.unpack = (y) => unbsnh(y, H, S);
    return call;
  } });
}
const peakMulAdd = await kernel('/tests/bench/peak/peak.wasm'), peakFma = await kernel('/tests/bench/peak/peak_fma.wasm');
const peaks = [['mul+add', peakMulAdd], ['fma', peakFma]].map(([name, f]) => ({ name, threads: 1, flops: PEAK_ITERATIONS * 96, prepare: () => () => f(PEAK_ITERATIONS, 1) }));
// The FMA peak kernel on two Workers at once: what two threads can reach on this machine (two
// vCPUs may share a physical core's pipes). Each runs 4x the iterations, so the messages' ~0.1 ms
// round trip stays near 1% of the time taken.
const PAIR_ITERATIONS = 4 * PEAK_ITERATIONS;
const pair = [0, 1].map(() => new Worker('/peak-worker.js'));
const ask = (w, msg) => new Promise((resolve) => { w.onmessage = (e) => resolve(e.data); w.postMessage(msg); });
await Promise.all(pair.map((w) => ask(w, { file: '/tests/bench/peak/peak_fma.wasm' })));
peaks.push({ name: 'fma, 2 threads', threads: 2, flops: 2 * PAIR_ITERATIONS * 96, prepare: () => () => Promise.all(pair.map((w) => ask(w, { n: PAIR_ITERATIONS }))) });
const result = { userAgent: navigator.userAgent, crossOriginIsolated, peers: peers.map((p) => ({ name: p.name, threads: p.threads, isa: p.isa ?? null, rows: [] })), roundPeaks: [] };
for (const [H, S] of C.shapes) for (const causal of [false, true]) {
  const job = { H, S, causal }, x = inputs(H, S, D);
  const all = [...peers, ...peaks].map((p) => ({ p, times: [] }));
  for (const a of all) {
    a.call = await a.p.prepare(job, x);
    const t0 = performance.now();
    for (let w = 0; w < 2 || performance.now() - t0 < C.warmupMs; w++) a.last = await a.call();
  }
  for (let r = 0; r < C.runs; r++) for (const a of all) {
    await sleep(C.settleMs);
    let t = performance.now();
    while (performance.now() - t < C.leadInMs) a.last = await a.call();
    t = performance.now();
    a.last = await a.call();
    a.times.push(performance.now() - t);
  }
  const rows = checkedRows(H, S), want = reference(x, H, S, D, causal, rows);
  for (const [i, a] of all.entries()) {
    const ms = median(a.times);
    if (i >= peers.length) { result.roundPeaks.push({ ...job, kernel: a.p.name, gflops: a.p.flops / ms / 1e6, times: a.times }); continue; }
    const out = Float32Array.from((a.call.unpack ?? ((y) => y))(a.last));
    // The work done: causal rows see S (S + 1) / 2 keys in all, not S^2 (so its fraction of a peak is comparable).
    const flops = 4 * H * D * (causal ? S * (S + 1) / 2 : S * S);
    result.peers[i].rows.push({ ...job, ms, gflops: flops / ms / 1e6, maxError: maxError(out, want, H, S, D, rows), times: a.times });
  }
  console.log('H' + H + ' S' + S + (causal ? ' causal' : '') + ': ' + all.map((a) => a.p.name + ' ' + median(a.times).toFixed(2)).join(', '));
}
window.result = result;
</script>`;

const peakWorker = `let peak;
onmessage = async (e) => {
  if (e.data.file) {
    const { instance } = await WebAssembly.instantiate(await (await fetch(e.data.file)).arrayBuffer(), { wasi_snapshot_preview1: { proc_exit() {} } });
    peak = instance.exports.peak;
    postMessage('ready');
  } else {
    postMessage(peak(e.data.n, 1));
  }
};`;
const ortThreadsPage = `<!doctype html><meta charset="utf-8"><script type="module">
import * as ort from '/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs';
ort.env.wasm.numThreads = 2;
ort.env.wasm.wasmPaths = '/node_modules/onnxruntime-web/dist/';
window.ort = ort;
</script>`;

const server = createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  // Cross-origin isolation: SharedArrayBuffer for the threaded builds.
  const headers = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };
  if (url.pathname === '/') { res.writeHead(200, { ...headers, 'content-type': 'text/html' }); res.end(page); return; }
  if (url.pathname === '/peak-worker.js') { res.writeHead(200, { ...headers, 'content-type': 'text/javascript' }); res.end(peakWorker); return; }
  if (url.pathname === '/ort-threads') { res.writeHead(200, { ...headers, 'content-type': 'text/html' }); res.end(ortThreadsPage); return; }
  try {
    const p = normalize(join(root, decodeURIComponent(url.pathname)));
    if (!p.startsWith(root)) throw new Error('outside');
    const body = await readFile(p);
    res.writeHead(200, { ...headers, 'content-type': types[extname(p)] ?? 'application/octet-stream', 'content-length': body.length });
    res.end(body);
  } catch { res.writeHead(404); res.end(); }
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const started = new Date();
const load0 = os.loadavg()[0];
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-background-networking', '--no-first-run'] });
let result;
try {
  const pg = await browser.newPage();
  pg.on('console', (m) => console.log('[page]', m.text()));
  pg.on('pageerror', (e) => console.log('[page error]', e.message));
  await pg.goto(`http://127.0.0.1:${server.address().port}/`);
  await pg.waitForFunction(() => window.result, null, { timeout: 1_800_000, polling: 1000 });
  result = await pg.evaluate(() => window.result);
} finally {
  await browser.close();
  server.close();
}

const git = (...a) => { try { return execFileSync('git', a, { cwd: root, encoding: 'utf8' }).trim(); } catch { return null; } };
const dirty = git('status', '--porcelain', '--untracked-files=no');
const version = (p) => JSON.parse(readFileSync(join(root, p === 'attnlab' ? 'package.json' : `node_modules/${p}/package.json`), 'utf8')).version;
Object.assign(result, {
  date: started.toISOString(), finished: new Date().toISOString(), quick, ...config,
  machine: { cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.availableParallelism?.() ?? os.cpus().length, loadBefore: load0, loadAfter: os.loadavg()[0] },
  source: `${git('rev-parse', '--short', 'HEAD')}${dirty ? '+changes' : ''}`,
  packages: { attnlab: version('attnlab'), 'onnxruntime-web': version('onnxruntime-web'), 'playwright-core': version('playwright-core') },
});

const fmt = (x, n = 1) => (Number.isFinite(x) ? x.toFixed(n) : '-');
const key = (j) => `${j.H}/${j.S}/${j.causal}`;
const jobName = (j) => `${j.causal ? 'causal ' : ''}H${j.H} S${j.S}`;
const jobs = result.peers[0].rows;
const row = (name, j, threads) => result.peers.find((p) => p.name === name && (threads === undefined || p.threads === threads))?.rows.find((r) => key(r) === key(j) && r.maxError <= config.tolerance);
const peakOf = (kernel, j) => result.roundPeaks.find((p) => p.kernel === kernel && key(p) === key(j))?.gflops;
const md = [`# attnlab relaxed SIMD in headless Chromium, ${result.date.slice(0, 10)}`, '',
  `- machine: ${result.machine.cpu}, ${result.machine.cores} cores, 1-minute load ${fmt(result.machine.loadBefore)} before, ${fmt(result.machine.loadAfter)} after (other jobs shared the machine)`,
  `- browser: ${result.userAgent}; cross-origin isolated: ${result.crossOriginIsolated}`,
  `- packages: ${Object.entries(result.packages).map(([k, v]) => `${k} ${v}`).join(', ')}; attnlab at commit ${result.source}`,
  `- float32, d = ${config.d}; median of ${config.runs} round-robin runs (${config.settleMs} ms pause, ${config.leadInMs} ms lead-in); GFLOP/s = 4*H*S*S*d per call (causal: 4*H*d*S(S+1)/2, the keys its rows see); outputs within ${config.tolerance} of float64 (✗ otherwise)`,
  '', '## Median ms / GFLOP/s', '', `| peer | threads | ${jobs.map(jobName).join(' | ')} |`, `|---|---|${jobs.map(() => '---|').join('')}`];
for (const p of result.peers) {
  md.push(`| ${p.name} | ${p.threads} | ${jobs.map((j) => {
    const r = p.rows.find((x) => key(x) === key(j));
    return r ? `${fmt(r.ms, 2)} / ${fmt(r.gflops)}${r.maxError <= config.tolerance ? '' : ` ✗ ${r.maxError.toExponential(1)}`}` : '-';
  }).join(' | ')} |`);
}
for (const [k, n] of [['mul+add', 1], ['fma', 1], ['fma, 2 threads', 2]]) md.push(`| peak kernel, ${k.replace(', 2 threads', '')} | ${n} | ${jobs.map((j) => `${fmt(peakOf(k, j))} GFLOP/s`).join(' | ')} |`);
md.push('', '## Relaxed against SIMD128 and ORT-web', '',
  'attnlab rows write into a reused output array (options.out); "new array": a new output array per call, the default.', '',
  '| shape | speed-up 1 thread (simd / relaxed-simd) | relaxed of FMA peak | relaxed of mul+add peak | simd of mul+add peak | vs fastest ORT-web, 1 thread | speed-up 2 threads (simd-threads / relaxed-simd-threads) | relaxed 2 threads of 2-thread FMA peak | vs fastest ORT-web, 2 threads | new array: speed-up 1 thread | new array: vs fastest ORT-web | new array: relaxed of FMA peak |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const j of jobs) {
  const r1 = row('attnlab relaxed-simd', j), s1 = row('attnlab simd', j), r2 = row('attnlab relaxed-simd-threads', j), s2 = row('attnlab simd-threads', j);
  const r1n = row('attnlab relaxed-simd, new array', j), s1n = row('attnlab simd, new array', j);
  const ortFastest = (threads) => ['ORT-web MatMul-Softmax-MatMul', 'ORT-web com.microsoft MultiHeadAttention'].map((n) => row(n, j, threads))
    .filter(Boolean).reduce((b, r) => (!b || r.ms < b.ms ? r : b), null);
  const ortBest = ortFastest(1), ortBest2 = ortFastest(2);
  const pct = (r, g) => (r && g ? `${fmt((100 * r.gflops) / g, 0)}%` : '-');
  md.push(`| ${jobName(j)} | ${r1 && s1 ? fmt(s1.ms / r1.ms, 2) + 'x' : '-'} | ${pct(r1, peakOf('fma', j))} | ${pct(r1, peakOf('mul+add', j))} | ${pct(s1, peakOf('mul+add', j))} | ${r1 && ortBest ? fmt(ortBest.ms / r1.ms, 2) + 'x' : '-'} | ${r2 && s2 ? fmt(s2.ms / r2.ms, 2) + 'x' : '-'} | ${pct(r2, peakOf('fma, 2 threads', j))} | ${r2 && ortBest2 ? fmt(ortBest2.ms / r2.ms, 2) + 'x' : '-'} | ${r1n && s1n ? fmt(s1n.ms / r1n.ms, 2) + 'x' : '-'} | ${r1n && ortBest ? fmt(ortBest.ms / r1n.ms, 2) + 'x' : '-'} | ${pct(r1n, peakOf('fma', j))} |`);
}
const base = join(root, 'tests/bench/results', `relaxed-chromium-${result.date.slice(0, 10)}${quick ? '-quick' : ''}`);
let stem = base;
for (let n = 2; existsSync(`${stem}.json`); n++) stem = `${base}-${n}`;
writeFileSync(`${stem}.json`, JSON.stringify(result, null, 1));
writeFileSync(`${stem}.md`, md.join('\n') + '\n');
console.log(md.join('\n'));
console.log(`wrote ${stem}.json and .md`);
