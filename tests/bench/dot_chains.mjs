// How many independent chains an instruction needs in headless Chromium, and its rate with enough:
// a loop of A accumulators, each updated once per iteration by i32x4.relaxed_dot_i8x16_i7x16_add_s
// (the int8 product's quads kernel), f32x4.relaxed_madd (the relaxed builds' FMA) or i32x4.add,
// operands in registers, nothing loaded. One chain gives the instruction's latency; the rate stops
// growing where the pipes are full. Why it matters: the int8 product's kernel has 4 accumulators
// per row, so a single row (greedy decoding) was one latency-bound chain each until
// kernels::gemm_q8_quad<1> took odd k-quads into four more.
//   node tests/bench/dot_chains.mjs    writes results/dot-chains-chromium-<date>.md
// The modules are written in WebAssembly text and assembled by the npm binaryen package here.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import binaryen from 'binaryen';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const ops = {
  'i32x4.relaxed_dot_i8x16_i7x16_add_s': (a) => `(i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $w) (local.get $x) (local.get ${a}))`,
  'f32x4.relaxed_madd': (a) => `(f32x4.relaxed_madd (local.get $w) (local.get $x) (local.get ${a}))`,
  'i32x4.add': (a) => `(i32x4.add (local.get ${a}) (local.get $x))`,
};
const chains = [1, 2, 4, 8, 12];

// f(n): n iterations of A chains; returns lane 0 of each summed, so nothing is dead.
function module(op, A) {
  const acc = Array.from({ length: A }, (_, a) => `$a${a}`);
  const text = `(module (func (export "f") (param $n i32) (result i32) (local $w v128) (local $x v128)
    ${acc.map((a) => `(local ${a} v128)`).join(' ')}
    (local.set $w (v128.const i32x4 0x01020304 0x05060708 0x090a0b0c 0x0d0e0f10))
    (local.set $x (v128.const i32x4 0x01010101 0x02020202 0x03030303 0x04040404))
    ${acc.map((a, i) => `(local.set ${a} (v128.const i32x4 ${i} 1 2 3))`).join(' ')}
    (loop $l ${acc.map((a) => `(local.set ${a} ${ops[op](a)})`).join(' ')}
      (local.set $n (i32.sub (local.get $n) (i32.const 1))) (br_if $l (local.get $n)))
    ${acc.reduce((s, a) => `(i32.add ${s} (i32x4.extract_lane 0 (local.get ${a})))`, '(i32.const 0)')}))`;
  const m = binaryen.parseText(text);
  m.setFeatures(binaryen.Features.MVP | binaryen.Features.SIMD128 | binaryen.Features.RelaxedSIMD);
  if (!m.validate()) throw new Error(`invalid module: ${op} x ${A}`);
  const bytes = m.emitBinary();
  m.dispose();
  return Array.from(bytes);
}

const modules = Object.keys(ops).flatMap((op) => chains.map((A) => ({ op, A, bytes: module(op, A) })));
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'] });
let rows, userAgent;
try {
  const page = await browser.newPage();
  userAgent = await page.evaluate(() => navigator.userAgent);
  rows = await page.evaluate(async (modules) => {
    const out = [];
    for (const { op, A, bytes } of modules) {
      const { instance } = await WebAssembly.instantiate(new Uint8Array(bytes));
      const f = instance.exports.f, n = 2e7;
      f(1e6);  // compiled by the optimising tier before timing
      let best = Infinity;
      for (let r = 0; r < 7; r++) {
        const t0 = performance.now();
        f(n);
        best = Math.min(best, performance.now() - t0);
      }
      out.push({ op, A, nsPerIteration: (best * 1e6) / n, gPerSecond: (n * A) / best / 1e6 });
    }
    return out;
  }, modules);
} finally {
  await browser.close();
}

const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: here, encoding: 'utf8' }).trim();
const lines = [
  '# Independent chains per instruction in headless Chromium',
  '',
  `- machine: ${os.cpus()[0]?.model ?? 'unknown'}, ${os.cpus().length} cores, 1-minute load ${os.loadavg()[0].toFixed(1)}`,
  `- browser: ${userAgent}`,
  `- attnlab at ${commit}; tests/bench/dot_chains.mjs: best of 7 runs of 2e7 iterations, operands in registers`,
  '',
  '| instruction | chains | ns per iteration | G instructions/s |',
  '|---|---|---|---|',
  ...rows.map((r) => `| ${r.op} | ${r.A} | ${r.nsPerIteration.toFixed(3)} | ${r.gPerSecond.toFixed(2)} |`),
  '',
];
const file = join(here, 'results', `dot-chains-chromium-${new Date().toISOString().slice(0, 10)}.md`);
writeFileSync(file, lines.join('\n'));
console.log(lines.join('\n'));
console.log(`wrote ${file}`);
