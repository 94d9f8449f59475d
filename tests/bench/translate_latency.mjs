// Inference latency on the SIMD WebAssembly build in Node: translate() of a 10-word sentence,
// greedy and beam 5, median over N runs after warm-up, every shipped model. Reports wall time and
// the process's CPU time per call (process.cpuUsage), which a busy shared machine skews far less.
//   node tests/bench/translate_latency.mjs [runs=50]
import { load } from 'attnlab';
import { existsSync } from 'node:fs';
import { benchSentences } from './sentences.mjs';

const runs = Number(process.argv[2] ?? 50);
const sentence = { 'fra-eng': benchSentences['fra-eng'][10], 'eng-fra': benchSentences['eng-fra'][10] };
const lib = await load({ variant: 'simd' });
const median = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];
for (const dir of ['fra-eng', 'eng-fra']) {
  for (const arch of ['gru', 'transformer']) {
    if (!existsSync(new URL(`../../web/models/${dir}-${arch}.atl`, import.meta.url))) continue;
    const tr = await lib.loadTranslator(dir, { arch });
    for (const beam of [1, 5]) {
      for (let i = 0; i < 5; i++) tr.translate(sentence[dir], { beam });
      const t = [], c = [];
      let r;
      for (let i = 0; i < runs; i++) {
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        r = tr.translate(sentence[dir], { beam });
        t.push(performance.now() - t0);
        const dc = process.cpuUsage(c0);
        c.push((dc.user + dc.system) / 1000);
      }
      console.log(`${dir} ${arch} beam ${beam}: wall median ${median(t).toFixed(2)} ms (min ${Math.min(...t).toFixed(2)}), ` +
        `CPU median ${median(c).toFixed(2)} ms, ` +
        `${r.sourceTokens.length} source / ${r.targetTokens.length} target tokens: ${r.text}`);
    }
    tr.dispose();
  }
}
lib.dispose();
