// Translator latency in headless Chromium, before and after: translate_compare.mjs's sentences and
// shipped models, two dist/ trees in one cross-origin isolated page (so load() times the row
// groups as on a deployed site), the SIMD128 and relaxed-SIMD builds, 1 thread, calls alternating
// round by round; medians of wall time per call, and whether both sides produced the same text.
// Engines differ here: Chromium 156 keeps register blocks in registers that Node 20's V8 spills.
//   node tests/bench/translate_chromium.mjs BEFORE_DIST [AFTER_DIST=dist] [runs per round=20] [rounds=5] [builds=simd,relaxed-simd]
// (a tree from before the relaxed builds, such as issue 14's fb378e2, takes builds=simd; a build
// given as BEFORE:AFTER, such as simd:relaxed-simd, loads a different one on each side)
// writes results/translate-chromium-<date>.md
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openIsolatedPage } from './isolated_page.mjs';
import { benchSentences } from './sentences.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const [beforeArg, afterArg = 'dist'] = process.argv.slice(2, 4);
if (!beforeArg) throw new Error('usage: translate_chromium.mjs BEFORE_DIST [AFTER_DIST] [runs] [rounds]');
const runs = Number(process.argv[4] ?? 20), rounds = Number(process.argv[5] ?? 5);
const variants = (process.argv[6] ?? 'simd,relaxed-simd').split(',');
const mounts = { before: resolve(beforeArg), after: resolve(afterArg), models: join(root, 'web/models') };
const sentences = benchSentences['fra-eng'];

const load0 = os.loadavg()[0];
const { page, userAgent, close } = await openIsolatedPage(mounts, 'translate bench');
let rows;
try {
  rows = await page.evaluate(async ({ runs, rounds, sentences, variants }) => {
    const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
    const out = [];
    for (const variant of variants) {
      const libs = [];
      const [bv, av = bv] = variant.split(':');
      for (const [side, v] of [['before', bv], ['after', av]]) libs.push(await (await import(`/${side}/index.js`)).load({ variant: v }));
      for (const arch of ['gru', 'transformer']) {
        const bytes = new Uint8Array(await (await fetch(`/models/fra-eng-${arch}.atl`)).arrayBuffer());
        const trs = [];
        for (const lib of libs) trs.push(await lib.loadTranslator(bytes.slice()));
        for (const [words, text] of Object.entries(sentences)) for (const beam of [1, 5]) {
          const times = trs.map(() => []), texts = [];
          trs.forEach((tr, i) => { for (let w = 0; w < 3; w++) texts[i] = tr.translate(text, { beam }).text; });
          for (let r = 0; r < rounds; r++) trs.forEach((tr, i) => {
            for (let k = 0; k < runs; k++) {
              const t0 = performance.now();
              tr.translate(text, { beam });
              times[i].push(performance.now() - t0);
            }
          });
          out.push({ variant, arch, words, beam, before: median(times[0]), after: median(times[1]), same: texts[0] === texts[1] });
        }
        trs.forEach((tr) => tr.dispose());
      }
      libs.forEach((lib) => lib.dispose());
    }
    return out;
  }, { runs, rounds, sentences, variants });
} finally {
  await close();
}

const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root }).toString().trim();
const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root }).toString().trim() ? '+changes' : '';
const md = [
  '# Translators in headless Chromium, before and after, 1 thread',
  '',
  `- machine: ${os.cpus()[0]?.model ?? 'unknown'}, ${os.availableParallelism?.() ?? os.cpus().length} cores, 1-minute load ${load0.toFixed(1)} before, ${os.loadavg()[0].toFixed(1)} after`,
  `- browser: ${userAgent}; cross-origin isolated`,
  `- before: ${mounts.before}; after: ${mounts.after} (attnlab at ${commit}${dirty}); ${runs} calls x ${rounds} rounds per side, alternating; medians of wall time`,
  '',
  '| build | model | words | beam | before ms | after ms | speed-up | same text |',
  '|---|---|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.variant} | fra-eng ${r.arch} | ${r.words} | ${r.beam} | ${r.before.toFixed(2)} | ${r.after.toFixed(2)} | ` +
    `${(r.before / r.after).toFixed(2)}x | ${r.same ? 'yes' : 'NO'} |`),
];
const file = join(here, 'results', `translate-chromium-${new Date().toISOString().slice(0, 10)}.md`);
writeFileSync(file, md.join('\n') + '\n');
console.log(md.join('\n'));
console.log(`wrote ${file}`);
