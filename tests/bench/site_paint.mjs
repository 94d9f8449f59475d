// The demo site's first paint in headless Chromium, each page cold and warm, for one or two built
// sites side by side (before and after a change), loads alternating between them:
//
//   node tests/bench/site_paint.mjs [--runs=5] [--pages=index,pooling] [--modes=cold,warm] [--cap=20] [NAME=DIR ...]
//
// DIR defaults to web/demo/dist (name "site"). Each site is served by its own server (its own
// origin, so no cache or service worker is shared) with `npm start`'s headers (COOP/COEP, CORS,
// CORP), gzip for text as static hosts send it, and throttled through DevTools: CPU 4x slower,
// network 150 ms latency per request, 1.6 Mbit/s down, 750 kbit/s up (Lighthouse's "slow 4G").
//   - cold: a fresh browser context (empty HTTP cache, no service worker);
//   - warm: a fresh context loads the page unthrottled, waits for the service worker to control
//     it and for the page to be ready, then the throttled reload is measured.
// Per load: first-contentful-paint (the page's static HTML: its title and lead paragraph),
// largest-contentful-paint, when the site header paints (built by the page's script, so when the
// page's own content shows: Element Timing on its name), the layout shift until ready (the header
// pushes the static text down), bytes transferred by requests that ended before FCP (the page's
// Resource Timing: the document included, Workers' fetches not), the longest main-thread task
// (Long Tasks API, so 50 ms or more) until the page is ready (body[data-result], the pages' own
// ready signal, or --cap seconds: the translation and heads pages download a model of several MB
// first), whether attnlab's WebAssembly loader or build was requested before FCP, and what the
// page requested before its first paint.
// Prints a markdown report (medians of --runs loads) to stdout; the caller saves it.
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { basename, extname, join, normalize, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';

const opts = Object.fromEntries(process.argv.slice(2).filter((a) => a.startsWith('--')).map((a) => a.slice(2).split('=')));
const RUNS = Number(opts.runs ?? 5);
const CAP_MS = Number(opts.cap ?? 20) * 1000;
const MODES = (opts.modes ?? 'cold,warm').split(',');
const PAGES = (opts.pages ?? 'index,pooling,scoring,heads,translation,models,positional,efficient,performance,embed').split(',');
const trees = process.argv.slice(2).filter((a) => !a.startsWith('--')).map((a) => a.split('='));
const SITES = (trees.length ? trees : [['site', 'web/demo/dist']]).map(([name, dir]) => ({ name, dir: resolve(dir) }));
const NETWORK = { offline: false, latency: 150, downloadThroughput: (1.6e6 / 8) * 0.9, uploadThroughput: (750e3 / 8) * 0.9 };
const CPU_SLOWDOWN = 4;

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json', '.txt': 'text/plain', '.svg': 'image/svg+xml' };
const HEADERS = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp', 'Access-Control-Allow-Origin': '*', 'Cross-Origin-Resource-Policy': 'cross-origin' };
const COMPRESSED = new Set(['.html', '.js', '.mjs', '.css', '.json', '.txt', '.svg', '.wasm']);

function serve(root) {
  const gz = new Map();
  const server = createServer((req, res) => {
    let file = normalize(join(root, decodeURIComponent(new URL(req.url, 'http://x').pathname)));
    if (!file.startsWith(root)) return res.writeHead(403).end();
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    if (!existsSync(file)) return res.writeHead(404, HEADERS).end();
    const ext = extname(file);
    const head = { ...HEADERS, 'Content-Type': TYPES[ext] ?? 'application/octet-stream', 'Cache-Control': 'no-cache' };
    if (COMPRESSED.has(ext) && /\bgzip\b/.test(req.headers['accept-encoding'] ?? '')) {
      if (!gz.has(file)) gz.set(file, gzipSync(readFileSync(file), { level: 9 }));
      return res.writeHead(200, { ...head, 'Content-Encoding': 'gzip', 'Content-Length': gz.get(file).length }).end(gz.get(file));
    }
    res.writeHead(200, { ...head, 'Content-Length': statSync(file).size });
    createReadStream(file).pipe(res);
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok({ url: `http://127.0.0.1:${server.address().port}/`, close: () => server.close() })));
}

// Runs in the page before its own scripts: the observers whose entries the load reads back.
function observe() {
  const m = (window.__paint = { lcp: 0, tasks: [], ready: 0, header: 0, cls: 0 });
  new PerformanceObserver((l) => { for (const e of l.getEntries()) if (e.identifier === 'brand') m.header ||= e.renderTime || e.loadTime; }).observe({ type: 'element', buffered: true });
  new PerformanceObserver((l) => { for (const e of l.getEntries()) if (!e.hadRecentInput && !m.ready) m.cls += e.value; }).observe({ type: 'layout-shift', buffered: true });
  // The site header's name, built by the page's script (site/shell.ts): when it paints, the page's
  // own script has run. Element Timing reports elements that carry the attribute when they paint.
  const brand = new MutationObserver(() => {
    const a = document.querySelector('header.site a.brand');
    if (a) { a.setAttribute('elementtiming', 'brand'); brand.disconnect(); }
  });
  brand.observe(document, { childList: true, subtree: true });
  new PerformanceObserver((l) => { for (const e of l.getEntries()) m.lcp = e.startTime; }).observe({ type: 'largest-contentful-paint', buffered: true });
  new PerformanceObserver((l) => { for (const e of l.getEntries()) m.tasks.push([e.startTime, e.duration]); }).observe({ type: 'longtask', buffered: true });
  document.addEventListener('DOMContentLoaded', () => {
    const seen = () => { if (!m.ready && document.body.dataset.result) m.ready = performance.now(); };
    new MutationObserver(seen).observe(document.body, { attributes: true, attributeFilter: ['data-result'] });
    seen();
  });
}

async function throttle(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', NETWORK);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU_SLOWDOWN });
}

async function measure(page) {
  // Some pages are ready before their first frame (their script says so as it ends): their header
  // and largest paint come a frame later.
  await page.waitForFunction(() => (window.__paint?.ready && window.__paint.header) || null, null, { timeout: CAP_MS }).catch(() => {});
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  return page.evaluate(() => {
    const m = window.__paint;
    const fcp = performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN;
    const nav = performance.getEntriesByType('navigation')[0];
    const resources = performance.getEntriesByType('resource');
    const until = m.ready || performance.now();
    const before = resources.filter((r) => r.startTime < fcp).map((r) => ({ name: r.name, bytes: r.transferSize, body: r.decodedBodySize, done: r.responseEnd <= fcp }));
    return {
      fcp, lcp: m.lcp, ready: m.ready || null, header: m.header || null, cls: m.cls,
      bytes: nav.transferSize + resources.filter((r) => r.responseEnd <= fcp).reduce((s, r) => s + r.transferSize, 0),
      longest: Math.max(0, ...m.tasks.filter(([t]) => t < until).map(([, d]) => d)),
      engineBeforeFcp: resources.some((r) => r.startTime < fcp && /attnlab-[\w-]+\.(mjs|wasm)$/.test(r.name)),
      before: [{ name: nav.name, bytes: nav.transferSize, body: nav.decodedBodySize, done: true }, ...before],
    };
  });
}

async function load(browser, site, page, warm) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    await context.addInitScript(observe);
    const p = await context.newPage();
    const url = `${site.url}${page}.html`;
    if (warm) {
      await p.goto(url);
      await p.waitForFunction(() => navigator.serviceWorker.controller && document.body.dataset.result, null, { timeout: 120_000 });
      await throttle(p);
      await p.reload();
    } else {
      await throttle(p);
      await p.goto(url);
    }
    return await measure(p);
  } finally {
    await context.close();
  }
}

const median = (xs) => {
  const s = xs.filter((x) => x !== null && !Number.isNaN(x)).sort((a, b) => a - b);
  if (s.length < xs.length) return null; // a load never got there: no median
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (x) => (x === null ? `> ${CAP_MS / 1000} s` : `${Math.round(x)}`);
const kb = (x) => (x / 1024).toFixed(1);

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'] });
const servers = await Promise.all(SITES.map((s) => serve(s.dir)));
SITES.forEach((s, i) => { s.url = servers[i].url; });
const results = {}; // results[mode][page][site] = loads
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const loadBefore = loadavg();
try {
  for (let run = 0; run < RUNS; run++) {
    for (const mode of MODES) {
      for (const page of PAGES) {
        // Alternating which site goes first, so neither always meets the machine in the same state.
        for (const site of run % 2 ? [...SITES].reverse() : SITES) {
          const r = await load(browser, site, page, mode === 'warm');
          (((results[mode] ??= {})[page] ??= {})[site.name] ??= []).push(r);
          console.error(`${mode} ${page} ${site.name} run ${run + 1}: FCP ${Math.round(r.fcp)} LCP ${Math.round(r.lcp)} header ${ms(r.header)} CLS ${r.cls.toFixed(3)} ready ${ms(r.ready)} longest ${Math.round(r.longest)} ${kb(r.bytes)} KB`);
        }
      }
    }
  }
} finally {
  await browser.close();
  servers.forEach((s) => s.close());
}

const out = [];
out.push(`Load average before: ${loadBefore}; after: ${loadavg()}. ${RUNS} loads per page, mode and site; medians.`);
out.push(`Throttling (DevTools): CPU ${CPU_SLOWDOWN}x, network ${NETWORK.latency} ms per request, 1.6 Mbit/s down, 750 kbit/s up (both x 0.9, Lighthouse's slow 4G); gzip for text and .wasm. Viewport 1280 x 900.`);
out.push(`Sites: ${SITES.map((s) => `${s.name} = ${s.dir}`).join(', ')}.`, '');
for (const mode of MODES) {
  out.push(`## ${mode === 'cold' ? 'Cold (fresh context: no HTTP cache, no service worker)' : 'Warm (service worker in control, reload)'}`, '');
  out.push('| page | site | FCP ms | LCP ms | header painted ms | layout shift | KB before FCP | longest task ms | ready ms | engine fetched before FCP |', '|---|---|---|---|---|---|---|---|---|---|');
  for (const page of PAGES) {
    for (const site of SITES) {
      const loads = results[mode][page][site.name];
      const engine = loads.filter((l) => l.engineBeforeFcp).length;
      out.push(`| ${page} | ${site.name} | ${ms(median(loads.map((l) => l.fcp)))} | ${ms(median(loads.map((l) => l.lcp)))} | ${ms(median(loads.map((l) => l.header)))} | ${median(loads.map((l) => l.cls)).toFixed(3)} | ${kb(median(loads.map((l) => l.bytes)))} | ${ms(median(loads.map((l) => l.longest)))} | ${ms(median(loads.map((l) => l.ready)))} | ${engine} of ${loads.length} |`);
    }
  }
  out.push('');
}
if (results.cold) out.push('## Requested before first paint (cold, the load with the median FCP)', '', 'KB transferred (gzip) / decoded; * = still downloading at FCP.', '');
for (const page of results.cold ? PAGES : []) {
  for (const site of SITES) {
    const loads = [...results.cold[page][site.name]].sort((a, b) => a.fcp - b.fcp);
    const l = loads[(loads.length - 1) >> 1];
    out.push(`- ${page} (${site.name}, FCP ${Math.round(l.fcp)} ms): ${l.before.map((r) => `${basename(new URL(r.name).pathname) || '/'} ${kb(r.bytes)}/${kb(r.body)}${r.done ? '' : '*'}`).join(', ')}`);
  }
}
console.log(out.join('\n'));
