// The int8 product's two weight layouts in Chromium, whose relaxed SIMD computes the byte dot
// product right (Node 20's does not: there the relaxed builds keep the pairs, and the Node tests
// cannot reach the quads kernel). The relaxed nn module takes quads by default, and each shipped
// translator loaded in quads translates with the bits it has loaded in pairs: texts and tokens,
// every beam's score and log-probability, the cross-attention.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { launch, pageResult, repoRoot } from './helpers';
import { serveStatic, type StaticServer } from './static-server';

// The page's module script (vitest would rewrite a dynamic import inside a function handed to
// page.evaluate). It calls the relaxed nn module's bindings directly.
const script = `
import { instantiateNn } from '/dist/loader.js';
const m = await instantiateNn('relaxed-simd');
const quadsByDefault = m.q8Quads();
const sources = {
  'fra-eng': ["Il fait beau aujourd'hui.", 'Je ne sais pas ce que tu veux dire.', 'Nous sommes en retard.'],
  'eng-fra': ['The weather is nice today.', 'I do not know what you mean.', 'We are late.'],
};
async function run(file, quads) {
  const layout = m.setQ8Quads(quads);
  const bytes = new Uint8Array(await (await fetch('/web/models/' + file)).arrayBuffer());
  const p = m._malloc(bytes.length);
  new Uint8Array(m.memoryBuffer()).set(bytes, p);
  const info = {};
  const err = m.translatorCreate(p, bytes.length, info);
  m._free(p);
  if (err) throw new Error(err);
  const outs = [];
  for (const text of sources[file.slice(0, 7)])
    for (const beam of [1, 5]) {
      const out = {};
      const e = m.translatorTranslate(info.id, text, beam, 0, 1, out);
      if (e) throw new Error(e);
      // out.strings: the text, then the tokens and every beam's text and tokens (out.units long each)
      outs.push({ text: out.strings.slice(0, out.units[0]), strings: out.strings, scores: Array.from(out.scores), cross: Array.from(out.cross) });
    }
  m.dispose(info.id);
  return { layout, outs };
}
const results = [];
for (const file of ['fra-eng-gru.atl', 'fra-eng-transformer.atl', 'eng-fra-gru.atl', 'eng-fra-transformer.atl']) {
  const q = await run(file, true), p = await run(file, false);
  let values = 0, differ = 0;
  q.outs.forEach((o, i) => {
    const b = p.outs[i];
    if (o.text !== b.text || o.strings !== b.strings) differ++;
    for (const [x, y] of [[o.scores, b.scores], [o.cross, b.cross]]) {
      values += x.length;
      if (x.length !== y.length) differ++;
      else x.forEach((v, j) => { if (!Object.is(v, y[j])) differ++; });
    }
  });
  results.push({ file, quads: q.layout, pairs: p.layout, translations: q.outs.length, values, differ, sample: q.outs[1].text });
}
document.body.dataset.result = JSON.stringify({ quadsByDefault, results });
`;

let browser: Browser;
let server: StaticServer;

beforeAll(async () => {
  browser = await launch();
  server = await serveStatic(repoRoot, false, {
    pages: { '/q8.html': `<!doctype html><title>q8</title><link rel="icon" href="data:,"><body><script type="module">${script}</script>` },
  });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

test('relaxed-simd: int8 weights in quads give the bits they give in pairs, for every shipped translator', async () => {
  const { result: r, errors } = await pageResult(browser, `${server.url}q8.html`);
  expect(errors).toEqual([]);
  expect(r.quadsByDefault).toBe(true);
  for (const x of r.results) {
    expect(x).toMatchObject({ quads: true, pairs: false, translations: 6, differ: 0 });
    expect(x.values).toBeGreaterThan(100);
    expect(x.sample.length).toBeGreaterThan(3);
  }
}, 120_000);
