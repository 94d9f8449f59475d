// Two dist/ trees, each in processes of its own, alternating A, B, A, B, ...: the SIMD128 int8
// product's 5-row pass alone (the nn module's q8RowGroupsProbe) and beam-5 translations of a
// shipped fra-eng model (translate_compare.mjs's 10- and 20-word sentences). On a VM whose
// speed moves by 1.3x for seconds at a time, and where two modules in one process bias whichever
// loaded first by a few percent (translate_compare.mjs), the fastest decile of each process and
// the best process per side are what stays put.
//   node tests/bench/process_compare.mjs BEFORE_DIST AFTER_DIST [processes per side=8] [arch=transformer|gru]
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchSentences } from './sentences.mjs';

const here = fileURLToPath(import.meta.url);
const models = resolve(here, '../../../web/models');
const sentences = Object.values(benchSentences['fra-eng']);  // 10 and 20 words
const decile = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 10)];

if (process.argv[2] === '--child') {
  const dir = resolve(process.argv[3]), arch = process.argv[4];
  let pass = null;  // a tree from before the nn module and its probe (issue 14's fb378e2) has none
  if (existsSync(`${dir}/wasm/attnlab-nn-simd.wasm`)) {
    const { default: factory } = await import(pathToFileURL(`${dir}/wasm/attnlab-nn-simd.mjs`).href);
    const m = await factory({ wasmBinary: readFileSync(`${dir}/wasm/attnlab-nn-simd.wasm`) });
    const ts = [];
    for (let i = 0; i < 80; i++) {
      const t0 = performance.now();
      m.q8RowGroupsProbe(5, 100);
      ts.push(performance.now() - t0);
    }
    pass = decile(ts);
  }
  const { load } = await import(pathToFileURL(`${dir}/index.js`).href);
  const lib = await load({ variant: 'simd', threads: 1 });
  const tr = await lib.loadTranslator(pathToFileURL(`${models}/fra-eng-${arch}.atl`));
  const beams = sentences.map((s) => {
    const ts = [];
    for (let i = 0; i < 200; i++) {
      const t0 = performance.now();
      tr.translate(s, { beam: 5 });
      ts.push(performance.now() - t0);
    }
    return decile(ts);
  });
  tr.dispose();
  console.log(JSON.stringify([pass, ...beams]));
} else {
  const [a, b] = process.argv.slice(2, 4).map((d) => resolve(d));
  if (!a || !b) throw new Error('usage: process_compare.mjs BEFORE_DIST AFTER_DIST [processes per side] [arch]');
  const n = Number(process.argv[4] ?? 8), arch = process.argv[5] ?? 'transformer';
  const runs = { before: [], after: [] };
  for (let i = 0; i < n; i++)
    for (const [side, dir] of [['before', a], ['after', b]])
      runs[side].push(JSON.parse(execFileSync(process.execPath, [here, '--child', dir, arch], { encoding: 'utf8' })));
  const names = ['5-row int8 pass x 100 (ms)', 'beam 5, 10 words (ms)', 'beam 5, 20 words (ms)'];
  console.log(`node ${process.version}; fra-eng ${arch}; before ${a}, after ${b}; ${n} processes a side, alternating; per process the fastest decile`);
  console.log('| what | before, each process | after, each process | best before | best after | speed-up (best) |');
  console.log('|---|---|---|---|---|---|');
  names.forEach((name, j) => {
    const x = runs.before.map((r) => r[j]), y = runs.after.map((r) => r[j]);
    if (x.includes(null) || y.includes(null)) {  // a side without the probe
      console.log(`| ${name} | - | - | - | - | - |`);
      return;
    }
    const bx = Math.min(...x), by = Math.min(...y), f = (v) => v.map((t) => t.toFixed(2)).join(' ');
    console.log(`| ${name} | ${f(x)} | ${f(y)} | ${bx.toFixed(2)} | ${by.toFixed(2)} | ${(bx / by).toFixed(3)}x |`);
  });
}
