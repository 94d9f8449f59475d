// Cost curves of the attention variants: median time per call vs sequence length S, on the SIMD
// build with one thread, and the fitted exponent of each curve (time ~ S^p). Dense attention
// should come out near p = 2, the local, sparse and linear variants near p = 1.
//
//   npm run bench:variants              # S = 256 .. 16384; writes tests/bench/results/variants.{json,md}
//   npm run bench:variants -- --quick   # S = 256 .. 2048, results printed only
//   npm run bench:variants -- --only=lsh  # methods whose name contains 'lsh', results printed only
//
// Times are of the public call (argument checks and heap copies included), on random q, k, v of
// shape [S, 64]. Two clocks: the CPU time of this process (process.cpuUsage) and wall time. With
// one thread the CPU time is the work done, and it stays put when other jobs share the cores;
// wall time does not, so the tables lead with CPU time. The load average is recorded too.
//
// Memory: each method runs on its own instance, and the WebAssembly memory it has grown to after
// its runs at S (memory never shrinks) is the peak of its calls up to S, input copies included.
import { load } from 'attnlab';
import { execFileSync } from 'node:child_process';
import { writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const quick = process.argv.includes('--quick');
const SIZES = quick ? [256, 512, 1024, 2048] : [256, 512, 1024, 2048, 4096, 8192, 16384];
const D = 64;
const MAX_RUN_SECONDS = 60;  // a method is skipped at S when one run is predicted (in CPU time) to take longer
const FIT_FROM = 1024;       // the asymptotic fit ignores smaller S, where fixed costs weigh

const METHODS = [
  { name: 'dense', what: 'attention(q, k, v): every query scores every key', call: (l, x) => l.attention(x.q, x.k, x.v) },
  { name: 'local', what: "pattern { type: 'local', window: 128 }: 257 keys per query", call: (l, x) => l.attention(x.q, x.k, x.v, { pattern: { type: 'local', window: 128 } }) },
  { name: 'longformer', what: "pattern { type: 'longformer', window: 128, global: [0, 1, 2, 3] }", call: (l, x) => l.attention(x.q, x.k, x.v, { pattern: { type: 'longformer', window: 128, global: [0, 1, 2, 3] } }) },
  { name: 'bigbird', what: "pattern { type: 'bigbird', blockSize: 64, windowBlocks: 1, globalBlocks: [0], randomBlocks: 3 }: 7 blocks per query", call: (l, x) => l.attention(x.q, x.k, x.v, { pattern: { type: 'bigbird', blockSize: 64, windowBlocks: 1, globalBlocks: [0], randomBlocks: 3 } }) },
  { name: 'linear (elu)', what: 'linearAttention(q, k, v): elu(x) + 1 features', call: (l, x) => l.linearAttention(x.q, x.k, x.v) },
  { name: 'favor+', what: "linearAttention(q, k, v, { method: 'favor+', features: 128 })", call: (l, x) => l.linearAttention(x.q, x.k, x.v, { method: 'favor+', features: 128 }) },
  { name: 'linformer', what: "linearAttention(q, k, v, { method: 'linformer', rank: 128 })", call: (l, x) => l.linearAttention(x.q, x.k, x.v, { method: 'linformer', rank: 128 }) },
  // Reformer's configuration: chunks of 64 tokens, as many buckets as chunks (nBuckets = S / 64),
  // so hashing costs S * D * nBuckets / 2 per round, which grows as S^2 / 128; the sort (counting
  // sort) and the chunked attention grow as S.
  ...[1, 2, 4].map((nHashes) => ({
    name: `lsh x${nHashes}`, what: `lshAttention(q, v, { nBuckets: S / 64, nHashes: ${nHashes} }): chunks of 64, 128 keys per query per round`,
    call: (l, x) => l.lshAttention(x.q, x.v, { nBuckets: x.S / 64, nHashes }),
  })),
  {
    name: 'synth dense', what: "synthesizer(x, v, { kind: 'dense' }): an MLP 64 -> 64 -> S per token (its W2 [S, 64])",
    call: (l, x) => l.synthesizer(x.q, x.v, { kind: 'dense', dense: x.mlp }),
  },
  {
    name: 'synth random', what: "synthesizer(null, v, { kind: 'random', R }): a learned R [S, S] (4 S^2 bytes: up to S = 4096)", maxS: 4096,
    call: (l, x) => l.synthesizer(null, x.v, { kind: 'random', R: x.R() }),
  },
  {
    name: 'synth fact. random', what: "synthesizer(null, v, { kind: 'factorized-random', rank: 16 }): R1 R2^T drawn from the seed",
    call: (l, x) => l.synthesizer(null, x.v, { kind: 'factorized-random', rank: 16 }),
  },
];
const ONLY = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);

function random(n, seed) {
  let a = seed >>> 0;
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    data[i] = a / 2 ** 31 - 1;
  }
  return data;
}

const once = (make) => {
  let made;
  return () => (made ??= make());
};

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Least-squares slope of log(time) against log(S), time being p[key]. */
function exponent(points, key = 'ms') {
  const xs = points.map((p) => Math.log(p.S)), ys = points.map((p) => Math.log(p[key]));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length, my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0, den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  return points.length >= 2 ? num / den : null;
}

/** Runs: more for quick calls, at least 3; one untimed warm-up call first. */
function runsFor(predictedMs) {
  if (predictedMs > 10_000) return 3;
  if (predictedMs > 1_000) return 5;
  return 9;
}

const started = new Date();
const loadBefore = os.loadavg();
const methods = ONLY ? METHODS.filter((m) => m.name.includes(ONLY)) : METHODS;
const results = methods.map((m) => ({ name: m.name, what: m.what, points: [], skipped: [] }));
const libs = [];
for (let mi = 0; mi < methods.length; mi++) libs.push(await load({ variant: 'simd', threads: 1 }));
const lib = libs[0];
const MB = 2 ** 20;

for (const S of SIZES) {
  const x = {
    S,
    q: { data: random(S * D, 1), shape: [S, D] },
    k: { data: random(S * D, 2), shape: [S, D] },
    v: { data: random(S * D, 3), shape: [S, D] },
    mlp: { W1: { data: random(D * D, 4), shape: [D, D] }, W2: { data: random(S * D, 5), shape: [S, D] } },
    R: once(() => ({ data: random(S * S, 6), shape: [S, S] })),  // made only where it runs
  };
  for (let mi = 0; mi < methods.length; mi++) {
    const r = results[mi], last = r.points.at(-1);
    if (methods[mi].maxS && S > methods[mi].maxS) {
      r.skipped.push({ S, reason: `above S = ${methods[mi].maxS} (memory)` });
      continue;
    }
    const lib = libs[mi];
    const call = (l) => methods[mi].call(l, x);
    // Predict from the previous size with the exponent seen so far (2 until two sizes are in).
    const p = r.points.length >= 2 ? Math.max(1, exponent(r.points.slice(-2))) : 2;
    const predicted = last ? last.ms * (S / last.S) ** p : 0;
    if (predicted > MAX_RUN_SECONDS * 1000) {
      r.skipped.push({ S, reason: `one run predicted at ${(predicted / 1000).toFixed(0)} s (> ${MAX_RUN_SECONDS} s)` });
      console.log(`${r.name.padEnd(18)} S=${String(S).padStart(5)}  skipped: predicted ${(predicted / 1000).toFixed(0)} s per run`);
      continue;
    }
    if (predicted < 2_000) call(lib);  // warm-up (skipped where one run is long)
    const cpu = [], wall = [];
    for (let t = 0, n = runsFor(predicted); t < n; t++) {
      const c0 = process.cpuUsage(), t0 = performance.now();
      call(lib);
      wall.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpu.push((c.user + c.system) / 1000);
    }
    const memoryMB = lib.heapStats().total / MB;
    r.points.push({ S, ms: median(cpu), wallMs: median(wall), runs: cpu.length, minMs: Math.min(...cpu), maxMs: Math.max(...cpu), memoryMB });
    console.log(`${r.name.padEnd(18)} S=${String(S).padStart(5)}  cpu ${median(cpu).toFixed(2).padStart(9)} ms  wall ${median(wall).toFixed(2).padStart(9)} ms  (${cpu.length} runs, cpu ${Math.min(...cpu).toFixed(2)} .. ${Math.max(...cpu).toFixed(2)})  memory ${memoryMB.toFixed(0)} MB`);
  }
}

for (const r of results) {
  const large = r.points.filter((p) => p.S >= FIT_FROM);
  r.exponent = { cpu: exponent(r.points), wall: exponent(r.points, 'wallMs') };
  r.exponentFrom1024 = { cpu: exponent(large), wall: exponent(large, 'wallMs') };
}
const env = {
  date: started.toISOString(),
  cpu: os.cpus()[0]?.model ?? 'unknown',
  logicalCores: os.availableParallelism?.() ?? os.cpus().length,
  node: process.version,
  platform: `${os.type()} ${os.release()} ${os.arch()}`,
  build: { variant: lib.variant, isa: lib.isa, threads: lib.threads },
  loadAverage1m: { before: loadBefore[0], after: os.loadavg()[0] },
  // The code measured: its commit, "+changes" when the work tree differed from it.
  commit: (() => {
    try {
      const git = (...a) => execFileSync('git', a, { cwd: join(dirname(fileURLToPath(import.meta.url)), '../..'), encoding: 'utf8' }).trim();
      return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') ? '+changes' : ''}`;
    } catch {
      return null;
    }
  })(),
  shape: `q, k, v: [S, ${D}]`,
  medianOf: 'runs per point: 9 (< 1 s per call), 5 (< 10 s), 3 (longer), after one untimed warm-up call when a call is < 2 s',
};
for (const l of libs) l.dispose();

console.log(`\nfitted exponents (time ~ S^p), cpu | wall: all sizes / S >= ${FIT_FROM}`);
for (const r of results) {
  const f = (e) => `${e.cpu?.toFixed(2)} / ${e.wall?.toFixed(2)}`;
  console.log(`  ${r.name.padEnd(18)} all S: ${f(r.exponent)}   S >= ${FIT_FROM}: ${f(r.exponentFrom1024)}`);
}

if (!quick && !ONLY) {
  const dir = join(dirname(fileURLToPath(import.meta.url)), 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'variants.json'), JSON.stringify({ env, sizes: SIZES, results }, null, 2) + '\n');
  writeFileSync(join(dir, 'variants.md'), markdown(env, results) + '\n');
  console.log(`\nwrote ${join(dir, 'variants.json')} and variants.md`);
}

function markdown(env, results) {
  const fmt = (ms) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
  const table = (key, expKey) => [
    `| S | ${results.map((r) => r.name).join(' | ')} |`,
    `|---:|${results.map(() => '---:').join('|')}|`,
    ...SIZES.map((S) => `| ${S} | ${results.map((r) => {
      const p = r.points.find((x) => x.S === S);
      if (p) return fmt(p[key]);
      return r.skipped.some((x) => x.S === S) ? 'skipped*' : '';
    }).join(' | ')} |`),
    `| **p, all S** | ${results.map((r) => r.exponent[expKey]?.toFixed(2) ?? '').join(' | ')} |`,
    `| **p, S >= ${FIT_FROM}** | ${results.map((r) => r.exponentFrom1024[expKey]?.toFixed(2) ?? '').join(' | ')} |`,
  ];
  const lines = [
    '# Attention variants: time vs sequence length',
    '',
    'Median milliseconds per call, generated by `npm run bench:variants` (tests/bench/variants.bench.mjs).',
    'p is the least-squares slope of log(time) against log(S), so time ~ S^p: dense attention',
    'should be near 2, the others near 1 (LSH: see its method note; the synthesizers are S^2 by design).',
    '',
    `- date: ${env.date}`,
    `- CPU: ${env.cpu}, ${env.logicalCores} logical cores (${env.platform})`,
    `- Node ${env.node}; attnlab build \`${env.build.variant}\` (${env.build.isa}), ${env.build.threads} thread`,
    `- load average (1 min) before / after: ${env.loadAverage1m.before.toFixed(2)} / ${env.loadAverage1m.after.toFixed(2)}`,
    `- commit: ${env.commit}`,
    `- ${env.shape}; ${env.medianOf}`,
    '',
    '## CPU time (ms)',
    '',
    'The work done by the one thread, which other jobs on the machine do not inflate.',
    '',
    ...table('ms', 'cpu'),
    '',
    '## Wall time (ms)',
    '',
    ...table('wallMs', 'wall'),
    '',
    '## WebAssembly memory (MB)',
    '',
    'The memory each method\'s own instance had grown to after its runs at S: the peak of its calls',
    'up to S (inputs copied into the heap included; a fresh instance starts at 16-20 MB).',
    '',
    `| S | ${results.map((r) => r.name).join(' | ')} |`,
    `|---:|${results.map(() => '---:').join('|')}|`,
    ...SIZES.map((S) => `| ${S} | ${results.map((r) => r.points.find((x) => x.S === S)?.memoryMB.toFixed(0) ?? '').join(' | ')} |`),
    '',
    '## Methods',
    '',
    ...results.map((r) => `- **${r.name}**: ${r.what}`),
  ];
  const skipped = results.flatMap((r) => r.skipped.map((s) => `- ${r.name} at S = ${s.S}: ${s.reason}`));
  if (skipped.length) lines.push('', '\\* Skipped:', ...skipped);
  return lines.join('\n');
}
