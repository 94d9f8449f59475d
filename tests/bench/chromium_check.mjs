// In Debian's Chromium (playwright-core): createTrainer() in a module Worker on the toy reverse task
// (time to >= 95% exact match, progress events), and loadTranslator('fra-eng') fetching the
// shipped model with progress, translating with attention. Serves the checkout over HTTP itself.
//   node tests/bench/chromium_check.mjs
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('../..', import.meta.url));
const types = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html', '.atl': 'application/octet-stream', '.json': 'application/json' };
const page = `<!doctype html><meta charset="utf-8"><script type="module">
import { load } from '/dist/index.js';
const lib = await load({ variant: 'simd' });
const events = [];
const t0 = performance.now();
const s = lib.createTrainer({ task: 'reverse', hidden: 64, maxSeconds: 60, evalEvery: 50, evalSize: 200, onProgress: (p) => events.push([p.step, p.exactMatch, p.elapsedMs]) });
const r = await s.done;
const trainer = { reason: r.reason, seconds: (performance.now() - t0) / 1000, step: r.step, exactMatch: r.exactMatch, events: events.length };
const prog = [];
const tr = await lib.loadTranslator('fra-eng', { arch: 'gru', onProgress: (p) => prog.push(p.loaded) });
const out = tr.translate('Je suis très fatigué.', { beam: 5 });
window.result = { trainer, translate: { text: out.text, progressEvents: prog.length, shape: out.attention.alignment.shape } };
</script>`;
const server = createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/') { res.writeHead(200, { 'content-type': 'text/html' }); res.end(page); return; }
  try {
    const p = normalize(join(root, decodeURIComponent(url.pathname)));
    if (!p.startsWith(root)) throw new Error('outside');
    const body = await readFile(p);
    res.writeHead(200, { 'content-type': types[extname(p)] ?? 'application/octet-stream', 'content-length': body.length });
    res.end(body);
  } catch { res.writeHead(404); res.end(); }
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-background-networking', '--no-first-run'] });
try {
  const pg = await browser.newPage();
  pg.on('console', (m) => console.log('[page]', m.text()));
  pg.on('pageerror', (e) => console.log('[page error]', e.message));
  await pg.goto(`http://127.0.0.1:${server.address().port}/`);
  await pg.waitForFunction(() => window.result, null, { timeout: 150_000 });
  console.log(JSON.stringify(await pg.evaluate(() => window.result), null, 1));
} finally {
  await browser.close();
  server.close();
}
