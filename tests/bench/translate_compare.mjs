// Translator latency, before and after, in one Node process: two built dist/ trees (e.g. the
// untouched baseline and this tree) load the same shipped model bytes on the SIMD WebAssembly
// build, and their translate() calls alternate in rounds so machine load hits both alike.
// Reports per side the median wall and CPU time (process.cpuUsage) per call over all rounds, the
// ratio before / after, and whether both produced the same text.
//   node tests/bench/translate_compare.mjs BEFORE_DIST AFTER_DIST [runs per round=20] [rounds=5] [after threads=1]
// With after threads > 1 the after side runs the simd-threads build on that many threads (its
// translators' int8 products on the pool) and the CPU column sums every thread: read the wall time.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchSentences } from './sentences.mjs';

const [beforeDir, afterDir] = process.argv.slice(2, 4).map((d) => resolve(d));
const runs = Number(process.argv[4] ?? 20), rounds = Number(process.argv[5] ?? 5), threads = Number(process.argv[6] ?? 1);
if (!beforeDir || !afterDir) throw new Error('usage: translate_compare.mjs BEFORE_DIST AFTER_DIST [runs] [rounds]');
const sentences = { 'fra-eng': benchSentences['fra-eng'] };
const median = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];
const sides = [];
for (const [name, dir] of [['before', beforeDir], ['after', afterDir]]) {
  const mod = await import(pathToFileURL(`${dir}/index.js`).href);
  const threaded = name === 'after' && threads > 1;
  sides.push({ name, lib: await mod.load(threaded ? { variant: 'simd-threads', threads } : { variant: 'simd' }) });
}
const models = new URL('../../web/models/', import.meta.url);
console.log(`node ${process.version}, ${runs} runs x ${rounds} rounds per side, alternating; before ${beforeDir} (simd, 1 thread), ` +
  `after ${afterDir} (${sides[1].lib.variant}, ${sides[1].lib.threads} thread${sides[1].lib.threads > 1 ? 's' : ''})`);
console.log('| model | words | beam | before wall ms | after wall ms | before CPU ms | after CPU ms | speed-up (wall) | speed-up (CPU) | same text |');
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const dir of Object.keys(sentences)) {
  for (const arch of ['gru', 'transformer']) {
    const bytes = new Uint8Array(readFileSync(new URL(`${dir}-${arch}.atl`, models)));
    const trs = [];
    for (const s of sides) trs.push(await s.lib.loadTranslator(bytes.slice()));
    for (const [words, text] of Object.entries(sentences[dir])) {
      for (const beam of [1, 5]) {
        const wall = trs.map(() => []), cpu = trs.map(() => []), out = [];
        trs.forEach((tr, i) => { for (let w = 0; w < 3; w++) out[i] = tr.translate(text, { beam }).text; });
        for (let r = 0; r < rounds; r++) {
          trs.forEach((tr, i) => {
            for (let k = 0; k < runs; k++) {
              const c0 = process.cpuUsage();
              const t0 = performance.now();
              tr.translate(text, { beam });
              wall[i].push(performance.now() - t0);
              const dc = process.cpuUsage(c0);
              cpu[i].push((dc.user + dc.system) / 1000);
            }
          });
        }
        const [wb, wa] = wall.map(median), [cb, ca] = cpu.map(median);
        console.log(`| ${dir} ${arch} | ${words} | ${beam} | ${wb.toFixed(2)} | ${wa.toFixed(2)} | ${cb.toFixed(2)} | ${ca.toFixed(2)} | ` +
          `${(wb / wa).toFixed(2)}x | ${(cb / ca).toFixed(2)}x | ${out[0] === out[1] ? 'yes' : `NO: "${out[0]}" vs "${out[1]}"`} |`);
      }
    }
    trs.forEach((tr) => tr.dispose());
  }
}
for (const s of sides) s.lib.dispose();
