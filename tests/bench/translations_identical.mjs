// Do two built dist/ trees translate alike, bit for bit? The WebAssembly twin of
// translations_compare.sh (which runs the native eval tool): every shipped model, greedy and beam
// 5, on N sentences spread over the Tatoeba corpus, before against after on one build, and after
// at 1 thread against its threaded build at 2. A translation counts as identical when its text,
// every beam's text, pieces and scores, and every attention tensor's bytes are equal; for changes
// that move the numerics on purpose, the table also counts translations whose texts (the output
// and every beam's) are equal.
//   node [--experimental-wasm-relaxed-simd] tests/bench/translations_identical.mjs BEFORE_DIST AFTER_DIST [N=1000] [variant=simd]
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [beforeDir, afterDir] = process.argv.slice(2, 4).map((d) => resolve(d));
const N = Number(process.argv[4] ?? 1000), variant = process.argv[5] ?? 'simd';
if (!beforeDir || !afterDir) throw new Error('usage: translations_identical.mjs BEFORE_DIST AFTER_DIST [N] [variant]');
const lib = async (dir, options) => (await import(pathToFileURL(`${dir}/index.js`).href)).load(options);
const libs = [await lib(beforeDir, { variant }), await lib(afterDir, { variant }), await lib(afterDir, { variant: `${variant}-threads`, threads: 2 })];
const corpus = new URL('../../../shared/data/tatoeba-fra-eng/pairs.tsv', import.meta.url);
const lines = readFileSync(corpus, 'utf8').trim().split('\n');
const pairs = Array.from({ length: N }, (_, i) => lines[Math.floor((i * lines.length) / N)].split('\t'));
const bytesEqual = (x, y) => x.length === y.length && Buffer.compare(Buffer.from(x.buffer, x.byteOffset, x.byteLength), Buffer.from(y.buffer, y.byteOffset, y.byteLength)) === 0;
const sameText = (a, b) => a.text === b.text && a.beams.every((x, i) => x.text === b.beams[i]?.text);
const same = (a, b) => a.text === b.text && JSON.stringify(a.beams) === JSON.stringify(b.beams) &&
  Object.keys(a.attention).every((k) => !a.attention[k]?.data || bytesEqual(a.attention[k].data, b.attention[k].data));

console.log(`node ${process.version}; before ${beforeDir}, after ${afterDir}; ${variant}; ${N} sentences`);
console.log(`| model | beam | before = after (${variant}) | same texts | after: 1 thread = 2 threads (${variant}-threads) |`);
console.log('|---|---|---|---|---|');
for (const name of ['fra-eng-gru', 'fra-eng-transformer', 'eng-fra-gru', 'eng-fra-transformer']) {
  const bytes = new Uint8Array(readFileSync(new URL(`../../web/models/${name}.atl`, import.meta.url)));
  const trs = await Promise.all(libs.map((l) => l.loadTranslator(bytes.slice())));
  for (const beam of [1, 5]) {
    let before = 0, texts = 0, threads = 0;
    for (const [en, fr] of pairs) {
      const [b, a, t] = trs.map((tr) => tr.translate(name.startsWith('fra') ? fr : en, { beam }));
      before += same(b, a);
      texts += sameText(b, a);
      threads += same(a, t);
    }
    console.log(`| ${name} | ${beam} | ${before} of ${N} | ${texts} of ${N} | ${threads} of ${N} |`);
  }
  trs.forEach((tr) => tr.dispose());
}
libs.forEach((l) => l.dispose());
