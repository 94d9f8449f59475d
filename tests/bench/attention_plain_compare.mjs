// Attention in a plain page (served without COOP/COEP, so not cross-origin isolated: the page
// most sites that embed attnlab are, with a coarse clock and one thread), two dist/ trees side by
// side: each load()s its default build (relaxed SIMD in Chromium), and their attention calls
// alternate, 15 each per shape after 3 untimed, medians. Run it both ways round.
//   node tests/bench/attention_plain_compare.mjs A_DIST B_DIST
import { createServer } from 'node:http';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { extname, join, normalize, resolve } from 'node:path';
import { chromium } from 'playwright-core';
const [A, B] = process.argv.slice(2).map((d) => d && resolve(d));
if (!A || !B) throw new Error('usage: attention_plain_compare.mjs A_DIST B_DIST');
const types = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };
const server = createServer((req, res) => {
  const p = new URL(req.url, 'http://x').pathname;
  if (p === '/') { res.writeHead(200, { 'content-type': 'text/html' }); return res.end('<!doctype html><title>plain</title>'); }
  const m = p.match(/^\/(a|b)\/(.*)$/);
  const f = m && normalize(join(m[1] === 'a' ? A : B, m[2]));
  if (!f || !existsSync(f) || !statSync(f).isFile()) { res.writeHead(404); return res.end(); }
  res.writeHead(200, { 'content-type': types[extname(f)] ?? 'application/octet-stream' });
  createReadStream(f).pipe(res);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'] });
const page = await browser.newPage();
await page.goto(`http://127.0.0.1:${server.address().port}/`);
const r = await page.evaluate(async () => {
  const libs = [await (await import('/a/index.js')).load(), await (await import('/b/index.js')).load()];
  const out = [`isolated ${crossOriginIsolated}, variants ${libs.map((l) => l.variant).join(' / ')}`];
  for (const [H, S, causal] of [[8, 512, false], [8, 512, true], [1, 2048, false]]) {
    const D = 64, N = H * S * D, rnd = () => { const a = new Float32Array(N); for (let i = 0; i < N; i++) a[i] = Math.random() - 0.5; return a; };
    const shape = [H, S, D], q = { data: rnd(), shape }, k = { data: rnd(), shape }, v = { data: rnd(), shape };
    for (const l of libs) for (let i = 0; i < 3; i++) l.attention(q, k, v, { causal });
    const t = [[], []];
    for (let i = 0; i < 15; i++) for (let j = 0; j < 2; j++) { await new Promise((r) => setTimeout(r, 20)); const t0 = performance.now(); libs[j].attention(q, k, v, { causal }); t[j].push(performance.now() - t0); }
    const med = (x) => [...x].sort((a, b) => a - b)[x.length >> 1];
    out.push(`H${H} S${S}${causal ? ' causal' : ''}: A ${med(t[0]).toFixed(1)} ms, B ${med(t[1]).toFixed(1)} ms, A/B ${(med(t[0]) / med(t[1])).toFixed(3)}`);
  }
  return out.join('\n');
});
console.log(r);
await browser.close(); server.close();
