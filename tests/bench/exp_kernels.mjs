// The exp-based kernels alone (kernels::exp_shift_total, exp2_shift_sum, tanh_inplace,
// sigmoid_sum, tanh_dot_rows, gelu_erf_inplace, gelu_tanh_inplace) in ns per element, SIMD128, in Node and in headless Chromium, with
// the exp kernel before 6e95598 (Cody-Waite reduction, degree-7 polynomial) beside today's (exp2
// of x log2 e): why a beam-5 GRU translation spent 18% less time in exp; and the GELU kernels
// beside libm's erf and tanh forms. tests/bench/exp_kernels.cpp
// is compiled here with Emscripten into a standalone module (no glue); per round every kernel runs
// once, ~20 ms each, rounds alternate kernels; medians of 9 rounds.
//   node tests/bench/exp_kernels.mjs    writes results/exp-kernels-<date>.md
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../..');
const out = join(root, 'build/bench-exp');
mkdirSync(out, { recursive: true });
const wasm = join(out, 'exp_kernels.wasm');
execFileSync('em++', ['-O3', '-DNDEBUG', '-std=c++17', '-msimd128', `-I${join(root, 'cpp/kernels')}`, '-sSTANDALONE_WASM', '--no-entry',
  join(here, 'exp_kernels.cpp'), '-o', wasm], { env: { ...process.env, NODE_PATH: '/usr/share/nodejs' }, stdio: ['ignore', 'ignore', 'inherit'] });
const bytes = readFileSync(wasm);

const kinds = [
  'exp_shift_total (exp, today: exp2 of x log2 e)',
  'the same loop, exp before 6e95598 (Cody-Waite)',
  'exp2_shift_sum (attention\'s base-2 exp, stored)',
  'tanh_inplace',
  'sigmoid_sum',
  'tanh_dot_rows (H = 192)',
  'gelu_erf_inplace (BERT\'s GELU)',
  'the same with libm\'s erf: 0.5 x (1 + erf(x / sqrt 2))',
  'gelu_tanh_inplace (GPT-2\'s GELU)',
  'the same with libm\'s tanh',
];

// Runs in Node and in the page alike (no closure over this module).
async function measure(bytes, kindCount) {
  const { instance } = await WebAssembly.instantiate(bytes, { wasi_snapshot_preview1: { proc_exit() {}, fd_write() { return 0; } } });
  const e = instance.exports;
  e._initialize?.();
  e.init();
  const reps = [];
  for (let k = 0; k < kindCount; k++) {  // warm up (optimising tier), then ~20 ms a call
    e.run(k, 200);
    const t0 = performance.now();
    e.run(k, 100);
    reps.push(Math.max(10, Math.round((100 * 20) / Math.max(0.5, performance.now() - t0))));
  }
  const times = Array.from({ length: kindCount }, () => []);
  for (let round = 0; round < 9; round++)
    for (let k = 0; k < kindCount; k++) {
      const t0 = performance.now();
      e.run(k, reps[k]);
      times[k].push(((performance.now() - t0) * 1e6) / (reps[k] * e.elements(k)));
    }
  return times.map((t) => t.sort((a, b) => a - b)[t.length >> 1]);
}

const node = await measure(bytes, kinds.length);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'] });
let page, userAgent;
try {
  const p = await browser.newPage();
  userAgent = await p.evaluate(() => navigator.userAgent);
  page = await p.evaluate(async ({ source, data, n }) => {
    const measureInPage = (0, eval)(`(${source})`);
    return measureInPage(new Uint8Array(data), n);
  }, { source: measure.toString(), data: Array.from(bytes), n: kinds.length });
} finally {
  await browser.close();
}

const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: here, encoding: 'utf8' }).trim();
const emcc = execFileSync('em++', ['--version'], { env: { ...process.env, NODE_PATH: '/usr/share/nodejs' }, encoding: 'utf8' }).split('\n')[0];
const lines = [
  '# The exp-based kernels alone, SIMD128',
  '',
  `- machine: ${os.cpus()[0]?.model ?? 'unknown'}, ${os.cpus().length} cores, 1-minute load ${os.loadavg()[0].toFixed(1)}`,
  `- node ${process.version}; browser: ${userAgent}`,
  `- attnlab at ${commit}; ${emcc}; tests/bench/exp_kernels.mjs: medians of 9 rounds, ~20 ms a call`,
  '- elements: 5 rows of 3,000 values in [-25, 5] (a beam-5 log-softmax), 4 rows for sigmoid_sum, 15 x 192 for tanh_dot_rows; the GELUs: 15,000 normal values, sigma 1 (their kernels\' rows include a copy in)',
  '',
  '| kernel | Node ns/element | Chromium ns/element |',
  '|---|---|---|',
  ...kinds.map((k, i) => `| ${k} | ${node[i].toFixed(3)} | ${page[i].toFixed(3)} |`),
  `| **exp before / today** | **${(node[1] / node[0]).toFixed(2)}x** | **${(page[1] / page[0]).toFixed(2)}x** |`,
  `| **erf GELU, libm / kernel** | **${(node[7] / node[6]).toFixed(2)}x** | **${(page[7] / page[6]).toFixed(2)}x** |`,
  `| **tanh GELU, libm / kernel** | **${(node[9] / node[8]).toFixed(2)}x** | **${(page[9] / page[8]).toFixed(2)}x** |`,
  '',
];
const file = join(here, 'results', `exp-kernels-${new Date().toISOString().slice(0, 10)}.md`);
writeFileSync(file, lines.join('\n'));
console.log(lines.join('\n'));
console.log(`wrote ${file}`);
