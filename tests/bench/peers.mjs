// One benchmark peer in a worker thread (global state such as onnxruntime-web's thread count is
// per instance, so each configuration gets its own), timing JS arrays in to JS arrays out. The
// driver (bench.mjs) sends a job, then asks every peer in turn for lead-in calls and one timed
// call, round after round, so load from elsewhere on the machine falls on all peers alike.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import { fromBSNH, inputs, random, toBSNH } from './data.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const { peer, runs, warmupMs, leadInMs } = workerData;
const D = 64;
// Peak kernel iterations per timed call in the rounds: about 4 ms at 57 GFLOP/s.
const PEAK_ROUND_ITERATIONS = 2_500_000;

/**
 * CPU time and run-queue wait of every thread in this process so far, in ms (Linux schedstat;
 * null elsewhere). Around a timed call they show whether the OS ran a peer's threads side by side.
 */
function schedTotals() {
  try {
    let run = 0, wait = 0;
    for (const t of readdirSync('/proc/self/task')) {
      const f = readFileSync(`/proc/self/task/${t}/schedstat`, 'utf8').split(' ');
      run += Number(f[0]), wait += Number(f[1]);
    }
    return { run: run / 1e6, wait: wait / 1e6 };
  } catch {
    return null;  // not Linux, or a thread ended while being read: no figure for this call
  }
}

/** Warm-up: >= 2 calls and >= warmupMs, so V8 has tiered the code up before the timed calls. */
async function warmUp(call) {
  const t0 = performance.now();
  for (let w = 0; w < 2 || performance.now() - t0 < warmupMs; w++) await call();
}

/** Timings for the extra measurements, which run peer by peer at the end. */
async function measure(call) {
  await warmUp(call);
  const times = [];
  for (let r = 0; r < runs; r++) {
    const t = performance.now();
    await call();
    times.push(performance.now() - t);
  }
  return { times };
}

function causalMask(S) {  // additive [S, S]: built once per shape, like a graph initializer
  const m = new Float32Array(S * S);
  for (let i = 0; i < S; i++) m.fill(-Infinity, i * S + i + 1, (i + 1) * S);
  return m;
}

async function attnlabPeer() {
  const { load } = await import('attnlab');
  const lib = await load({ variant: peer.variant, threads: peer.threads });
  const info = { threads: lib.threads, isa: lib.isa };
  return {
    info,
    extras: () => [() => mhaParts(lib), ...(peer.memory ? [() => longCausal(lib)] : [])],
    prepare: ({ H, S, causal }, x) => {
      const shape = [H, S, D];
      const q = { data: x.q, shape }, k = { data: x.k, shape }, v = { data: x.v, shape };
      return { call: () => lib.attention(q, k, v, { causal }).output.data };
    },
  };
}

/** Multi-head attention with projections against its parts: one projection matmul and the core. */
async function mhaParts(lib) {
  const E = 512, H = 8, S = 512, d = E / H;
  const x = { data: random(S * E, 11), shape: [1, S, E] };
  const params = {
    numHeads: H, inProjWeight: { data: random(3 * E * E, 12), shape: [3 * E, E] }, inProjBias: { data: random(3 * E, 13), shape: [3 * E] },
    outProjWeight: { data: random(E * E, 14), shape: [E, E] }, outProjBias: { data: random(E, 15), shape: [E] },
  };
  const W = { data: random(E * E, 16), shape: [E, E] }, b = { data: random(E, 17), shape: [E] };
  const q = { data: random(S * E, 18), shape: [H, S, d] };
  const mha = await measure(() => lib.multiHeadAttention(x, x, x, params).output.data);
  const linear = await measure(() => lib.linear(x, W, b).data);
  const core = await measure(() => lib.attention(q, q, q).output.data);
  return { kind: 'mha', E, H, S, mha: mha.times, linear: linear.times, core: core.times };
}

/** H=1, S=16384, d=64, causal: time and the heap it needed. */
async function longCausal(lib) {
  const S = 16384;
  const t = { data: random(S * D, 21), shape: [1, S, D] };
  const before = lib.heapStats().total;
  const t0 = performance.now();
  lib.attention(t, t, t, { causal: true });
  return { kind: 'memory', S, ms: performance.now() - t0, heapBefore: before, heapAfter: lib.heapStats().total };
}

async function ortPeer() {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = peer.threads;
  const sessions = new Map();
  const session = async (name) => {
    if (!sessions.has(name)) {
      sessions.set(name, await ort.InferenceSession.create(path.join(here, 'graphs', `${name}.onnx`), {
        executionProviders: ['wasm'], graphOptimizationLevel: 'all',
      }));
    }
    return sessions.get(name);
  };
  return {
    info: { threads: peer.threads, version: ort.env.versions?.web ?? null },
    prepare: async ({ H, S, causal }, x) => {
      const sfx = causal ? '_causal' : '';
      let s, feeds, unpack = (y) => y;
      if (peer.graph === 'msm') {
        s = await session(`msm${sfx}`);
        const shape = [H, S, D];
        const mask = causal ? causalMask(S) : null;
        feeds = () => {
          const f = { q: new ort.Tensor('float32', x.q, shape), k: new ort.Tensor('float32', x.k, shape), v: new ort.Tensor('float32', x.v, shape) };
          if (mask) f.mask = new ort.Tensor('float32', mask, [S, S]);
          return f;
        };
      } else if (peer.graph === 'mha') {
        s = await session(`mha_h${H}${sfx}`);
        const shape = [1, S, H * D];
        const [q, k, v] = [x.q, x.k, x.v].map((t) => toBSNH(t, H, S, D));
        feeds = () => ({ q: new ort.Tensor('float32', q, shape), k: new ort.Tensor('float32', k, shape), v: new ort.Tensor('float32', v, shape) });
        unpack = (y) => fromBSNH(y, H, S, D);
      } else {
        s = await session(`attention${sfx}`);
        const shape = [1, H, S, D];
        feeds = () => ({ q: new ort.Tensor('float32', x.q, shape), k: new ort.Tensor('float32', x.k, shape), v: new ort.Tensor('float32', x.v, shape) });
      }
      return { call: async () => (await s.run(feeds())).out.data, unpack };
    },
  };
}

async function tfjsPeer() {
  const tf = await import('@tensorflow/tfjs-core');
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  wasm.setWasmPaths(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json')) + '/dist/');
  // In Node the backend reports no multithread support; asking for threads anyway shows whether
  // they can start (its workers come from blob: URLs, which Node's Worker refuses).
  if (peer.threads > 1) tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', true);
  wasm.setThreadsCount(peer.threads);
  const ok = await tf.setBackend('wasm').catch((e) => { throw new Error(`backend failed to start: ${String(e.message ?? e).split('\n')[0]}`); });
  if (!ok) throw new Error('backend failed to start with the requested threads (Node refuses its blob: workers)');
  await tf.ready();
  return {
    info: { threads: wasm.getThreadsCount(), version: tf.version_core },
    prepare: ({ H, S, causal }, x) => {
      const scale = 1 / Math.sqrt(D);
      const mask = causal ? tf.tensor2d(causalMask(S), [S, S]) : null;  // built once, like the ORT mask
      const call = () => {
        const y = tf.tidy(() => {
          const q = tf.tensor3d(x.q, [H, S, D]), k = tf.tensor3d(x.k, [H, S, D]), v = tf.tensor3d(x.v, [H, S, D]);
          let s = tf.mul(tf.matMul(q, k, false, true), scale);
          if (mask) s = tf.add(s, mask);
          return tf.matMul(tf.softmax(s), v);
        });
        const out = y.dataSync();
        y.dispose();
        return out;
      };
      return { call, release: () => mask?.dispose() };
    },
  };
}

/** peak.wasm: f32x4 mul+add; peak_fma.wasm (peer.fma): its twin with f32x4.relaxed_madd. */
async function peakKernel() {
  const bytes = readFileSync(path.join(here, 'peak', peer.fma ? 'peak_fma.wasm' : 'peak.wasm'));
  const { instance } = await WebAssembly.instantiate(bytes, { wasi_snapshot_preview1: { proc_exit() {} } });
  return instance.exports.peak;
}

/** The peak on its own: before and after the peers. */
async function peakAlone() {
  const peak = await peakKernel();
  const iterations = 20_000_000;
  const r = await measure(() => peak(iterations, 1));
  return { times: r.times, flops: iterations * 12 * 8 };
}

/** The peak as a peer in the rounds (same protocol; flops per call in info). */
async function peakPeer() {
  const peak = await peakKernel();
  return {
    info: { flops: PEAK_ROUND_ITERATIONS * 12 * 8 },
    prepare: () => ({ call: () => peak(PEAK_ROUND_ITERATIONS, 1) }),
  };
}

// The protocol: {cmd: 'job', job} prepares and warms up; {cmd: 'once'} answers one timing;
// {cmd: 'output'} the last result (for the float64 check); {cmd: 'extras'} the extra records.
const fail = (e) => String(e?.message ?? e).split('\n')[0];
let peerImpl = null;
let current = null;
parentPort.on('message', async (m) => {
  try {
    if (m.cmd === 'job') {
      current?.release?.();
      current = null;
      current = await peerImpl.prepare(m.job, inputs(m.job.H, m.job.S, D));
      await warmUp(async () => { current.last = await current.call(); });
      parentPort.postMessage({ type: 'prepared' });
    } else if (m.cmd === 'once') {
      // Lead-in calls for leadInMs, then the timed one right after them: the first call after
      // the driver's pause pays for waking this peer's threads (and the idle cores) and is
      // reported apart.
      let t = performance.now();
      current.last = await current.call();
      const firstMs = performance.now() - t;
      while (performance.now() - t < leadInMs) current.last = await current.call();
      const s0 = schedTotals();
      t = performance.now();
      current.last = await current.call();
      const ms = performance.now() - t;
      const s1 = schedTotals();
      const sched = s0 && s1 ? { cpuMs: s1.run - s0.run, waitMs: s1.wait - s0.wait } : null;
      parentPort.postMessage({ type: 'time', ms, firstMs, sched });
      // Collect this peer's garbage now, during the driver's settle pause, rather than leave it to
      // V8's concurrent collector on the other core while the next peer is timed (TF.js makes
      // plenty). Needs node --expose-gc (run.sh); workers inherit the flag.
      globalThis.gc?.();
    } else if (m.cmd === 'output') {
      const out = Float32Array.from((current.unpack ?? ((y) => y))(current.last));
      parentPort.postMessage({ type: 'output', out }, [out.buffer]);
    } else if (m.cmd === 'extras') {
      const extras = [];
      for (const extra of peerImpl.extras?.() ?? []) extras.push(await extra());
      parentPort.postMessage({ type: 'extras', extras });
    }
  } catch (e) {
    current = null;
    parentPort.postMessage({ type: 'error', error: fail(e) });
  }
});

try {
  if (peer.kind === 'peak') {
    parentPort.postMessage({ type: 'peak', ...(await peakAlone()) });
  } else {
    peerImpl = await { attnlab: attnlabPeer, ort: ortPeer, tfjs: tfjsPeer, 'peak-round': peakPeer }[peer.kind]();
    parentPort.postMessage({ type: 'ready', info: peerImpl.info });
  }
} catch (e) {
  parentPort.postMessage({ type: 'error', error: fail(e) });
}
