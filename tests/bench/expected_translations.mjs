// Regenerates tests/js/translations.expected.json from the shipped models (run after `npm run
// build` whenever the models change):  node tests/bench/expected_translations.mjs
import { load } from 'attnlab';
import { existsSync, writeFileSync } from 'node:fs';

const sentences = {
  'fra-eng': ['Je suis fatigué.', 'Il est très intelligent.', 'Nous sommes en retard.', 'Où est la gare ?', "J'aime beaucoup ce livre.", 'ÉCOUTE-MOI !'],
  'eng-fra': ['I am tired.', 'He is very smart.', 'We are late.', 'Where is the station?', 'I really like this book.', 'LISTEN TO ME!'],
};
const lib = await load({ variant: 'simd' });
const out = {};
for (const dir of ['fra-eng', 'eng-fra']) {
  for (const arch of ['gru', 'transformer']) {
    if (!existsSync(new URL(`../../web/models/${dir}-${arch}.atl`, import.meta.url))) continue;
    const tr = await lib.loadTranslator(dir, { arch });
    out[`${dir}-${arch}`] = [];
    for (const text of sentences[dir]) {
      for (const beam of [1, 5]) out[`${dir}-${arch}`].push({ text, beam, expected: tr.translate(text, { beam }).text });
    }
    tr.dispose();
  }
}
writeFileSync(new URL('../js/translations.expected.json', import.meta.url), JSON.stringify(out, null, 2) + '\n');
console.log(JSON.stringify(out, null, 2));
lib.dispose();
