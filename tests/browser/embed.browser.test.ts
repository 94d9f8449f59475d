// attnlab where a course lives: the package on one origin standing in for a CDN (127.0.0.1, CORS
// `*` and Cross-Origin-Resource-Policy: cross-origin, as jsDelivr and unpkg send), course pages on
// another (localhost), plain and cross-origin isolated, and the built site framed by a course
// page (plain iframe, and sandboxed with and without allow-same-origin), served by the demo's own
// preview server (its headers are the hosting requirement under test). No network beyond these.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Frame, Page } from 'playwright-core';
import { createServer, preview, type PreviewServer } from 'vite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eachTwoAtATime, launch, repoRoot } from './helpers';
import { buildSite, siteConfig as configFile } from './site-server';
import { serveStatic, type StaticServer } from './static-server';

const VERSION = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version as string;
/** attnlab's folder on the local CDN, as https://cdn.jsdelivr.net/npm/attnlab@VERSION/ is on the real one. */
const cdnPkg = (server: StaticServer) => `${server.url}npm/attnlab@${VERSION}/`;
const CDN_HEADERS = { 'Access-Control-Allow-Origin': '*', 'Cross-Origin-Resource-Policy': 'cross-origin' };

let browser: Browser;
let cdn: StaticServer;
let corsOnlyCdn: StaticServer;
let course: StaticServer;
let isolatedCourse: StaticServer;
let site: PreviewServer;
let siteUrl: string;
let outDir: string;
let cdnRoot: string;

/** A course page that uses attnlab from the CDN: HTML-only widgets, and a module script. */
function coursePage(pkg: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A course page</title>
<link rel="icon" href="data:,">
<script type="module" src="${pkg}dist/components/index.js"></script></head>
<body><main>
<attn-regression id="reg" kernel="gaussian" bandwidth="0.5" n="20"></attn-regression>
<attn-heatmap id="heat" row-labels="a b" col-labels="c d" data="[[1,0],[0.25,0.75]]"></attn-heatmap>
<attn-beam-tree id="beams" data='[{"tokens":["i","am"],"score":-1},{"tokens":["i","was"],"score":-2}]'></attn-beam-tree>
<attn-head-view id="hv" model="fra-eng" text="Il fait beau aujourd'hui." layer="2"></attn-head-view>
<attn-model-view id="mv" model="fra-eng" text="Il fait beau aujourd'hui." part="cross"></attn-model-view>
<attn-translate id="tr" model="fra-eng" arch="gru" value="Je suis fatigué."></attn-translate>
<attn-translate id="tr-src" src="${pkg}../attnlab-models@${VERSION}/eng-fra-gru.atl" value="I am tired."></attn-translate>
<attn-model-view id="mv-gru" model="fra-eng" arch="gru" text="Il fait beau."></attn-model-view>
<attn-translate id="tr-bad" model="fra-eng" arch="lstm"></attn-translate>
</main>
<script type="module">
  import { load } from '${pkg}dist/index.js';
  try {
    const lib = await load();
    const x = { data: Float32Array.from({ length: 2 * 5 * 4 }, (_, i) => Math.cos(i)), shape: [2, 5, 4] };
    const { weights } = lib.attention(x, x, x, { causal: true, returnWeights: true });
    const tr = await lib.loadTranslator('fra-eng', { arch: 'gru' });
    const t = tr.translate('Il fait beau.');
    // The trainer: progress, then cancel at the first event; nothing may arrive after cancel().
    const progress = [];
    let cancelled = false, afterCancel = 0;
    const session = lib.createTrainer({ task: 'reverse', hidden: 16, evalEvery: 5, evalSize: 10, maxSeconds: 60, targetAccuracy: 1,
      onProgress: (p) => {
        if (cancelled) afterCancel++;
        progress.push(p.step);
        if (!cancelled) { cancelled = true; session.cancel(); }
      } });
    const done = await session.done;
    document.body.dataset.result = JSON.stringify({
      variant: lib.variant, reason: lib.variantReason, threads: lib.threads, isolated: crossOriginIsolated, origin: self.origin,
      w: [weights.data[0], weights.data[1], weights.data[5] + weights.data[6]], translation: t.text,
      trainer: { thread: done.thread, reason: done.reason, progress: progress.length, afterCancel, workerError: done.workerError ?? null },
    });
  } catch (e) {
    document.body.dataset.result = JSON.stringify({ error: String(e && e.stack || e) });
  }
</script></body></html>`;
}

/** What every widget on a course page shows once drawn: polled until all are there. */
async function widgets(frame: Page | Frame) {
  const read = () => frame.evaluate(() => {
    const $ = (id: string) => document.getElementById(id) as unknown as Record<string, any> & HTMLElement;
    const svg = (id: string) => !!$(id)?.shadowRoot?.querySelector('svg');
    return {
      regression: $('reg').result ? { finite: Array.from($('reg').result.output as Float32Array).every(Number.isFinite), svg: svg('reg') } : null,
      heatmap: svg('heat') ? $('heat').valueAt(1, 1) : null,
      beams: svg('beams') ? $('beams').data.length : null,
      headView: $('hv').lineCount > 0 ? { heads: $('hv').data.length, tokens: $('hv').leftTokens.length === $('hv').data[0].length } : null,
      modelView: svg('mv') ? { layers: $('mv').data.length, heads: $('mv').data[0].length } : null,
      translate: $('tr').result?.text ?? null,
      translateSrc: $('tr-src').result?.text ?? null,
      // Attributes that cannot work are named under the widget, which uses the default instead.
      gruModelView: $('mv-gru').data.length ? { layers: $('mv-gru').data.length, fault: $('mv-gru').shadowRoot.querySelector('.fault').textContent } : null,
      badModel: $('tr-bad').translator ? $('tr-bad').shadowRoot.querySelector('.fault').textContent : null,
    };
  });
  const done = (w: Awaited<ReturnType<typeof read>>) => Object.values(w).every((v) => v !== null);
  const t0 = Date.now();
  let w = await read();
  while (!done(w) && Date.now() - t0 < 60_000) {
    await new Promise((r) => setTimeout(r, 250));
    w = await read();
  }
  return w;
}

interface Visit {
  page: Page;
  problems: string[];
}

async function open(url: string): Promise<Visit> {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} (${r.failure()?.errorText})`));
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
  await page.goto(url);
  return { page, problems };
}

async function courseResult(page: Page) {
  await page.waitForSelector('body[data-result]', { state: 'attached', timeout: 150_000 });
  return JSON.parse((await page.getAttribute('body', 'data-result'))!);
}

/** The course page's trainer: it reported progress on `thread`, and cancel() ended it with nothing after. */
function expectTrainer(t: { thread: string; reason: string; progress: number; afterCancel: number; workerError: string | null }, thread: 'worker' | 'main') {
  expect(t).toMatchObject({ thread, reason: 'cancelled', afterCancel: 0 });
  expect(t.progress).toBeGreaterThan(0);
  expect(t.workerError === null).toBe(thread === 'worker');
}

beforeAll(async () => {
  // A CDN's layout (jsDelivr): each package in its own versioned folder, side by side.
  cdnRoot = await mkdtemp(join(tmpdir(), 'attnlab-cdn-'));
  mkdirSync(join(cdnRoot, 'npm'));
  symlinkSync(repoRoot, join(cdnRoot, 'npm', `attnlab@${VERSION}`));
  symlinkSync(join(repoRoot, 'web', 'models'), join(cdnRoot, 'npm', `attnlab-models@${VERSION}`));
  [browser, cdn, corsOnlyCdn, outDir] = await Promise.all([launch(), serveStatic(cdnRoot, false, { headers: CDN_HEADERS }),
    serveStatic(cdnRoot, false, { headers: { 'Access-Control-Allow-Origin': '*' } }), buildSite('embed')]);
  const pages = { '/course.html': coursePage(cdnPkg(cdn)), '/course-cors-only.html': coursePage(cdnPkg(corsOnlyCdn)) };
  [course, isolatedCourse] = await Promise.all([
    serveStatic(outDir, false, { host: 'localhost', pages }),
    serveStatic(outDir, true, { host: 'localhost', pages }),
  ]);
  // The demo's preview server, as `vite preview` runs it: its headers are under test.
  site = await preview({ configFile, logLevel: 'warn', build: { outDir }, preview: { port: 0, strictPort: false } });
  siteUrl = site.resolvedUrls!.local[0];
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([cdn?.close(), corsOnlyCdn?.close(), course?.close(), isolatedCourse?.close(), site?.close()]);
  if (outDir) await rm(outDir, { recursive: true, force: true });
  if (cdnRoot) await rm(cdnRoot, { recursive: true, force: true });  // the links, not what they point at
});

describe('the package from a CDN origin, on a course page of another origin', () => {
  test('plain page: load() gives the single-threaded relaxed-SIMD build and says why; attention, a translation, every widget from attributes alone', async () => {
    const v = await open(`${course.url}course.html`);
    const r = await courseResult(v.page);
    expect(r.error).toBeUndefined();
    expect(r).toMatchObject({ variant: 'relaxed-simd', threads: 1, isolated: false });
    expect(r.reason).toMatch(/^'relaxed-simd-threads' needs SharedArrayBuffer, .*: 'relaxed-simd' is the fastest build that runs here$/);
    expect(r.w[0]).toBe(1);
    expect(r.w[1]).toBe(0);
    expect(r.w[2]).toBeCloseTo(1, 6);
    expect(r.translation.length).toBeGreaterThan(3);
    expectTrainer(r.trainer, 'worker');
    const w = await widgets(v.page);
    expect(w).toEqual({
      regression: { finite: true, svg: true }, heatmap: 0.75, beams: 2,
      headView: { heads: expect.any(Number), tokens: true }, modelView: { layers: expect.any(Number), heads: expect.any(Number) },
      translate: expect.stringMatching(/tired/i), translateSrc: expect.stringMatching(/fatigu/i),
      gruModelView: { layers: expect.any(Number), fault: "<attn-model-view>: arch: expected 'transformer' (this view shows a Transformer's heads; a GRU has none), got 'gru'; using 'transformer'" },
      badModel: "<attn-translate>: arch: expected 'gru' or 'transformer', got 'lstm'; using 'transformer'",
    });
    expect(v.problems).toEqual([]);
    await v.page.close();
  }, 180_000);

  test('cross-origin isolated page: the threaded build runs, its workers started from the CDN', async () => {
    const v = await open(`${isolatedCourse.url}course.html`);
    const r = await courseResult(v.page);
    expect(r.error).toBeUndefined();
    expect(r).toMatchObject({ variant: 'relaxed-simd-threads', isolated: true, reason: "'relaxed-simd-threads' is the fastest build, and it runs here" });
    expect(r.threads).toBeGreaterThanOrEqual(2);
    expect(r.w[0]).toBe(1);
    expectTrainer(r.trainer, 'worker');
    const w = await widgets(v.page);
    expect(Object.entries(w).filter(([, x]) => x === null)).toEqual([]);
    expect(v.problems).toEqual([]);
    await v.page.close();
  }, 180_000);
});

// The built site framed by a course page (the LMS iframe snippet): each page in embed mode.
// Every page of the site, each Worker it starts included.
const FRAMED = ['index', 'pooling', 'scoring', 'heads', 'translation', 'positional', 'efficient', 'performance', 'embed'] as const;
const SANDBOXES = [
  ['a plain iframe', null],
  ['a sandboxed iframe (allow-scripts)', 'allow-scripts'],
  ['a sandboxed iframe (allow-scripts allow-same-origin)', 'allow-scripts allow-same-origin'],
] as const;

function framingPage(sandbox: string | null): string {
  const frames = FRAMED.map((p) => `<iframe name="${p}" src="${siteUrl}${p}.html#embed=1" title="attnlab ${p}"${sandbox ? ` sandbox="${sandbox}"` : ''}
  allow="clipboard-write; cross-origin-isolated" style="width: 100%; border: 0" loading="eager"></iframe>`).join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A course page with frames</title><link rel="icon" href="data:,"></head>
<body><main>${frames}</main>
<script>
  window.__heights = {};
  addEventListener('message', (e) => {
    if (!e.data || e.data.type !== 'attnlab:height') return;
    for (const f of document.querySelectorAll('iframe'))
      if (f.contentWindow === e.source) { f.style.height = e.data.height + 'px'; window.__heights[f.name] = e.data.height; }
  });
</script></body></html>`;
}

/** Evaluates a string in a frame: the site's CSP forbids compiling strings, not the DevTools protocol. */
const inFrame = <T>(frame: Frame, expr: string) => frame.evaluate(expr) as Promise<T>;

/**
 * Presses a framed page's button from the keyboard (focus, Enter), once it is enabled. A mouse
 * click goes to page coordinates, and the frames above this one still change height while their
 * pages settle: in the project's CI two clicks had no effect (the copy status stayed empty, the
 * cost chart "Not measured yet."), most likely by landing beside their buttons. Focus does not
 * depend on layout.
 */
async function press(f: Frame, sel: string): Promise<void> {
  await until(`${sel} enabled`, () => inFrame<boolean>(f, `!document.querySelector(${JSON.stringify(sel)}).disabled`), (x) => x, 60_000);
  await f.locator(sel).press('Enter');
}

async function until<T>(what: string, read: () => Promise<T>, ok: (x: T) => boolean, ms = 90_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const x = await read().catch(() => undefined as T);
    if (x !== undefined && ok(x)) return x;
    if (Date.now() - t0 > ms) throw new Error(`${what}: still ${JSON.stringify(x)} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('a package host without Cross-Origin-Resource-Policy, on an isolated course page', () => {
  test("the threaded build's workers are refused; load() falls back to 'relaxed-simd', says why, and everything works", async () => {
    const v = await open(`${isolatedCourse.url}course-cors-only.html`);
    const r = await courseResult(v.page);
    expect(r.error).toBeUndefined();
    expect(r).toMatchObject({ variant: 'relaxed-simd', threads: 1, isolated: true });
    expect(r.reason).toMatch(/^'relaxed-simd-threads' failed to start \(.+\): 'relaxed-simd' is the fastest build that runs here$/);
    expect(r.w[0]).toBe(1);
    // The trainer's Worker starts from a same-origin bootstrap that imports its module: that works here.
    expectTrainer(r.trainer, 'worker');
    const w = await widgets(v.page);
    expect(Object.entries(w).filter(([, x]) => x === null)).toEqual([]);
    // What the browser itself reports about the refused worker scripts is all there is.
    expect(v.problems.filter((p) => !/attnlab-(relaxed-)?simd-threads\.(worker\.)?js/.test(p))).toEqual([]);
    await v.page.close();
  }, 180_000);
});

describe("a course page whose Content-Security-Policy allows no inline style (style-src 'self')", () => {
  test('the widgets are styled (their stylesheets are constructed, not <style> elements) and nothing is refused', async () => {
    const pkg = cdnPkg(cdn), cdnOrigin = new URL(cdn.url).origin;
    const cells = JSON.stringify(Array.from({ length: 20 }, (_, i) => Array.from({ length: 20 }, (_, j) => ((i * 20 + j) % 7) / 7)));
    const page = `<!doctype html><meta charset="utf-8"><title>csp</title><link rel="icon" href="data:,">
      <attn-heatmap id="small" data="[[0.5,0.2],[0.1,0.9]]"></attn-heatmap>
      <attn-heatmap id="big" data="${cells}"></attn-heatmap>
      <script type="module">
      const seen = [];
      document.addEventListener('securitypolicyviolation', (e) => seen.push(e.effectiveDirective + ' ' + e.blockedURI));
      await import(${JSON.stringify(`${pkg}dist/components/index.js`)});
      const small = document.getElementById('small'), big = document.getElementById('big');
      for (let i = 0; i < 100 && !(small.shadowRoot?.querySelector('svg') && big.shadowRoot?.querySelector('svg image')); i++) await new Promise((r) => setTimeout(r, 50));
      const bar = small.shadowRoot.querySelector('.bar'), image = big.shadowRoot.querySelector('svg image');
      document.body.dataset.result = JSON.stringify({ seen, styleElements: small.shadowRoot.querySelectorAll('style').length,
        bar: getComputedStyle(bar).display, radius: getComputedStyle(small).borderRadius, bg: getComputedStyle(small).backgroundColor,
        rendering: image && getComputedStyle(image).imageRendering, sameSheet: small.shadowRoot.adoptedStyleSheets[0] === big.shadowRoot.adoptedStyleSheets[0] });
      </script>`;
    const policy = `default-src 'self'; script-src 'self' 'unsafe-inline' ${cdnOrigin}; connect-src 'self' ${cdnOrigin}; img-src 'self' data: blob:; style-src 'self'`;
    const strict = await serveStatic(outDir, false, { host: 'localhost', pages: { '/styles.html': page }, headers: { 'Content-Security-Policy': policy } });
    try {
      const v = await open(`${strict.url}styles.html`);
      await v.page.waitForSelector('body[data-result]', { state: 'attached', timeout: 30_000 });
      const r = JSON.parse((await v.page.getAttribute('body', 'data-result'))!);
      expect(r).toEqual({ seen: [], styleElements: 0, bar: 'flex', radius: '6px', bg: 'rgb(255, 255, 255)', rendering: 'pixelated', sameSheet: true });
      expect(v.problems).toEqual([]);
      await v.page.close();
    } finally {
      await strict.close();
    }
  }, 60_000);
});

describe("an isolated course page whose Content-Security-Policy has no worker-src blob:", () => {
  test("the threads' blob: workers are refused: load() falls back to 'relaxed-simd' and names the policy (it waited for ever)", async () => {
    const pkg = cdnPkg(cdn), cdnOrigin = new URL(cdn.url).origin;
    const page = `<!doctype html><meta charset="utf-8"><title>csp</title><script type="module">
      const { load } = await import(${JSON.stringify(`${pkg}dist/index.js`)});
      const r = {};
      try {
        const lib = await load();
        const x = { data: new Float32Array(8).fill(0.5), shape: [2, 4] };
        Object.assign(r, { variant: lib.variant, threads: lib.threads, reason: lib.variantReason, out: Array.from(lib.attention(x, x, x).output.data) });
      } catch (e) { r.error = String(e); }
      document.body.dataset.result = JSON.stringify(r);
    </script>`;
    const policy = `default-src 'self'; script-src 'self' 'unsafe-inline' ${cdnOrigin} 'wasm-unsafe-eval'; connect-src 'self' ${cdnOrigin}; worker-src 'self'`;
    const strict = await serveStatic(outDir, true, { host: 'localhost', pages: { '/csp.html': page }, headers: { 'Content-Security-Policy': policy } });
    try {
      const v = await open(`${strict.url}csp.html`);
      await v.page.waitForSelector('body[data-result]', { state: 'attached', timeout: 60_000 });
      const r = JSON.parse((await v.page.getAttribute('body', 'data-result'))!);
      expect(r.error).toBeUndefined();
      expect(r).toMatchObject({ variant: 'relaxed-simd', threads: 1, out: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5] });
      expect(r.reason).toMatch(/^'relaxed-simd-threads' failed to start \(the page's Content-Security-Policy \(worker-src\) refused the threads' workers, .*add blob: to worker-src\): 'relaxed-simd' is the fastest build that runs here$/);
      await v.page.close();
    } finally {
      await strict.close();
    }
  }, 120_000);
});

// The course page itself framed (a notebook's output frame, an LMS page that frames the author's
// HTML): the package from the CDN (127.0.0.1), the course page (localhost:B) in a frame of a page on
// a third origin (localhost:C), plain and sandboxed.
describe.each(SANDBOXES)('a course page using the CDN, in %s of a page of a third origin', (_, sandbox) => {
  test('load() and its variant, attention, a translation, trainer progress and cancel, every widget from attributes alone', async () => {
    const path = `/host-${sandbox?.replace(/\W+/g, '-') ?? 'plain'}.html`;
    const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>host</title><link rel="icon" href="data:,"></head>
<body style="margin: 0"><iframe name="course" src="${course.url}course.html" title="course"${sandbox ? ` sandbox="${sandbox}"` : ''}
  style="width: 100%; height: 2400px; border: 0"></iframe></body></html>`;
    const host = await serveStatic(outDir, false, { host: 'localhost', pages: { [path]: html } });
    expect(new URL(host.url).origin).not.toBe(new URL(course.url).origin);
    const v = await open(`${host.url}${path.slice(1)}`);
    try {
      const frame = () => v.page.frames().find((f) => f.name() === 'course')!;
      const raw = await until('the framed course page', () => frame().evaluate(() => document.body.dataset.result), (x) => x !== undefined, 90_000);
      const r = JSON.parse(raw!);
      expect(r.error).toBeUndefined();
      expect(r).toMatchObject({ variant: 'relaxed-simd', threads: 1, isolated: false, origin: sandbox === 'allow-scripts' ? 'null' : new URL(course.url).origin });
      expect(r.reason).toMatch(/^'relaxed-simd-threads' needs SharedArrayBuffer, .*: 'relaxed-simd' is the fastest build that runs here$/);
      expect(r.w[0]).toBe(1);
      expect(r.w[1]).toBe(0);
      expect(r.w[2]).toBeCloseTo(1, 6);
      expect(r.translation.length).toBeGreaterThan(3);
      expectTrainer(r.trainer, 'worker');
      const w = await widgets(frame());
      expect(w).toMatchObject({
        regression: { finite: true, svg: true }, heatmap: 0.75, beams: 2,
        headView: { heads: expect.any(Number), tokens: true }, modelView: { layers: expect.any(Number), heads: expect.any(Number) },
        translate: expect.stringMatching(/tired/i), translateSrc: expect.stringMatching(/fatigu/i),
      });
      expect(v.problems).toEqual([]);
    } finally {
      await v.page.close();
      await host.close();
    }
  }, 240_000);
});

describe.each(SANDBOXES)('the built site in %s on a course page of another origin', (_, sandbox) => {
  test('every framed page draws, loads attnlab, translates, sizes itself, and leaves the top window alone', async () => {
    const path = `/frames-${FRAMED.length}-${sandbox?.replace(/\W+/g, '-') ?? 'plain'}.html`;
    const server = await serveStatic(outDir, false, { host: 'localhost', pages: { [path]: framingPage(sandbox) } });
    const v = await open(`${server.url}${path.slice(1)}`);
    try {
      const frame = (name: string) => v.page.frames().find((f) => f.name() === name)!;
      // What each page must show once loaded, read inside its frame.
      const checks: Record<(typeof FRAMED)[number], (f: Frame) => Promise<void>> = {
        index: async (f) => {
          expect(await inFrame(f, "document.getElementById('variant').textContent")).toBe('relaxed-simd');
          expect(await inFrame(f, 'self.origin')).toBe(sandbox === 'allow-scripts' ? 'null' : new URL(siteUrl).origin);
        },
        pooling: async (f) => {
          await until('pooling: the regression widget', () => inFrame<boolean>(f, "document.querySelector('attn-regression').result !== null"), (x) => x);
          // The page's trainer (a Worker; from a blob: in an opaque origin): progress, then cancel.
          await press(f, '#train');
          const step = await until('pooling: training progress', () => inFrame<number>(f, "Number(document.getElementById('train-status').dataset.step)"), (n) => n >= 2, 60_000);
          await press(f, '#cancel');
          const after = await inFrame<{ cancelled?: string; done?: string; text: string; step: number }>(f,
            "({ ...document.getElementById('train-status').dataset, text: document.getElementById('train-status').textContent, step: Number(document.getElementById('train-status').dataset.step) })");
          expect(after).toMatchObject({ cancelled: '1', text: expect.stringMatching(/^Cancelled after step \d+: h stays /) });
          expect(after.done).toBeUndefined();
          expect(after.step).toBeGreaterThanOrEqual(step);
          // Stopped: no step arrives after the cancel.
          await new Promise((r) => setTimeout(r, 300));
          expect(await inFrame<number>(f, "Number(document.getElementById('train-status').dataset.step)")).toBe(after.step);
        },
        scoring: async () => {},
        positional: async () => {},
        efficient: async (f) => {
          // Its cost chart is measured in a Worker: a first measurement, then cancel.
          await press(f, '#run-cost');
          await until('efficient: a measurement', () => inFrame<string>(f, "document.getElementById('cost-status').textContent"), (t) => /^S = \d+/.test(t), 60_000);
          await press(f, '#cancel-cost');
          expect(await inFrame<string>(f, "document.getElementById('cost-status').textContent")).toBe('Cancelled.');
        },
        performance: async (f) => {
          // The benchmark runs in a Worker: it starts a build, then cancel.
          await press(f, '#run');
          await until('performance: running', () => inFrame<string>(f, "document.getElementById('bench-status').textContent"), (t) => /^Running /.test(t), 60_000);
          await press(f, '#cancel');
          expect(await inFrame<string | undefined>(f, 'document.body.dataset.bench')).toBe('cancelled');
        },
        heads: async (f) => {
          // The head view draws on an animation frame, which Chromium withholds from a frame out of
          // view; the frames above grow as their pages settle and can push this one out while the
          // model loads (twice it stayed at 0 for 90 s in a full browser stage, with the model loaded
          // and the page saying ok). So scroll it back into view at each look, as a reader would;
          // on failure, say what the page said.
          const look = async () => {
            await v.page.locator('iframe[name="heads"]').scrollIntoViewIfNeeded();
            return inFrame<number>(f, "document.getElementById('head-view').lineCount");
          };
          await until('heads: lines drawn', look, (n) => n > 0).catch(async (e: Error) => {
            const note = await inFrame<string>(f, "[document.getElementById('model-note')?.textContent, document.body.dataset.result, document.body.dataset.api].join(' | ')").catch(() => '?');
            throw new Error(`${e.message}; the page said: ${note}`);
          });
        },
        translation: async (f) => {
          const text = await until('translation: a result', () => inFrame<string | null>(f, "document.getElementById('translate').result?.text ?? null"), (t) => !!t);
          expect(text.length).toBeGreaterThan(3);
        },
        embed: async (f) => {
          // The copy button: the clipboard may be refused in a frame; it must say what happened, not throw.
          // "Copied." clears itself after 2 s, which a slow poll can miss: record every status the button shows.
          await inFrame(f, `{ const s = document.querySelector('#snippet-iframe-copy + .stat'); window.__copy = [];
            new MutationObserver(() => window.__copy.push(s.textContent)).observe(s, { childList: true, characterData: true, subtree: true }); }`);
          await press(f, '#snippet-iframe-copy');
          await until('embed: copy status', () => inFrame<string[]>(f, 'window.__copy'), (seen) => seen.some((s) => /^(Copied|Selected)/.test(s)), 15_000);
        },
      };
      for (const p of FRAMED) {
        // Chromium does not render frames out of view (no animation frames): scroll to each, as a reader would.
        await v.page.locator(`iframe[name="${p}"]`).scrollIntoViewIfNeeded();
        await until(`${p}: body[data-result]`, () => inFrame<string | undefined>(frame(p), 'document.body.dataset.result'), (r) => r !== undefined, 60_000);
        expect(await inFrame(frame(p), "document.body.dataset.result + ' ' + (document.getElementById('page-error')?.textContent ?? '')")).toBe('ok ');
        await checks[p](frame(p));
      }
      // Each frame reported its height and the snippet's script sized it; the top window stayed put.
      // Read together in one evaluation (a frame may still report a new height while its page
      // settles), until every frame has the height it last reported.
      await until('frames sized to their reported heights', () => v.page.evaluate((names) => {
        const h = (window as unknown as { __heights: Record<string, number> }).__heights;
        return names.map((n) => [h[n] ?? 0, document.querySelector(`iframe[name="${n}"]`)!.getBoundingClientRect().height]);
      }, [...FRAMED]), (rows) => rows.every(([want, got]) => want > 100 && Math.abs(want - got) < 0.5), 15_000);
      expect(v.page.url()).toBe(`${server.url}${path.slice(1)}`);
      for (const p of FRAMED) expect(await inFrame<number>(frame(p), "document.querySelectorAll('a[target=_top], a[target=_parent], form[target=_top]').length")).toBe(0);
      expect(v.problems).toEqual([]);
    } finally {
      await v.page.close();
      await server.close();
    }
  }, 480_000);
});

describe('the built site framed by a cross-origin isolated course page', () => {
  test('with the LMS snippet\'s allow="cross-origin-isolated" the framed page is isolated and runs the threaded build; without it, one thread', async () => {
    const frames = [['with', ' allow="clipboard-write; cross-origin-isolated"'], ['without', '']] as const;
    const path = '/isolated-frames.html';
    const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>isolated course</title><link rel="icon" href="data:,"></head>
<body>${frames.map(([name, allow]) => `<iframe name="${name}" src="${siteUrl}index.html#embed=1" title="${name}"${allow} style="width: 100%; height: 500px; border: 0"></iframe>`).join('\n')}</body></html>`;
    const server = await serveStatic(outDir, true, { host: 'localhost', pages: { [path]: html } });
    const v = await open(`${server.url}${path.slice(1)}`);
    try {
      expect(await v.page.evaluate(() => crossOriginIsolated)).toBe(true);
      const seen: Record<string, unknown> = {};
      for (const [name] of frames) {
        await v.page.locator(`iframe[name="${name}"]`).scrollIntoViewIfNeeded();
        const f = () => v.page.frames().find((x) => x.name() === name)!;
        await until(`${name}: body[data-result]`, () => inFrame<string | undefined>(f(), 'document.body.dataset.result'), (r) => r !== undefined, 60_000);
        seen[name] = await inFrame(f(), "({ result: document.body.dataset.result, isolated: self.crossOriginIsolated, variant: document.getElementById('variant').textContent })");
      }
      expect(seen).toEqual({
        with: { result: 'ok', isolated: true, variant: 'relaxed-simd-threads' },
        without: { result: 'ok', isolated: false, variant: 'relaxed-simd' },
      });
      expect(v.problems).toEqual([]);
    } finally {
      await v.page.close();
      await server.close();
    }
  }, 180_000);
});

describe('the hosting requirement, as the site\'s own servers send it', () => {
  // npm start runs Vite's dev server with web/demo/vite.config.ts (scripts/start.sh); vite preview
  // serves the build. Every response of both: CORS and CORP for frames, COOP and COEP for threads.
  const WANT = {
    'access-control-allow-origin': '*', 'cross-origin-resource-policy': 'cross-origin',
    'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp',
  };
  const headersOf = async (url: string) => {
    const r = await fetch(url, { headers: { Origin: 'null' } });
    await r.arrayBuffer();
    expect(r.status, url).toBe(200);
    return Object.fromEntries(Object.keys(WANT).map((k) => [k, r.headers.get(k)]));
  };

  test('npm start (the dev server): pages, modules and .wasm', async () => {
    // No dependency scan: it outlives this test's few requests, and closing the server under it
    // printed ten esbuild errors. The headers do not depend on it.
    const dev = await createServer({ configFile, logLevel: 'warn', server: { port: 0, strictPort: false, hmr: false }, optimizeDeps: { noDiscovery: true } });
    await dev.listen();
    try {
      const base = dev.resolvedUrls!.local[0];
      for (const path of ['index.html', 'embed.html', 'main.ts', '@fs' + join(repoRoot, 'dist', 'wasm', 'attnlab-simd.wasm')]) expect(await headersOf(base + path), path).toEqual(WANT);
    } finally {
      await dev.close();
    }
  });

  test('vite preview (the built site): pages, scripts, stylesheet, .wasm and the service worker', async () => {
    const index = await (await fetch(`${siteUrl}index.html`)).text();
    const assets = [...index.matchAll(/(?:src|href)="\.\/(assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]);
    expect(assets.length).toBeGreaterThan(1);
    const wasm = readdirSync(join(outDir, 'assets')).find((f) => f.endsWith('.wasm'))!;
    for (const path of ['index.html', 'translation.html', 'sw.js', `assets/${wasm}`, ...assets]) expect(await headersOf(siteUrl + path), path).toEqual(WANT);
  });
});

/** Every attnlab element on a page has drawn what its attributes ask for (polled). */
async function allDrawn(page: Page): Promise<Record<string, boolean>> {
  const read = () => page.evaluate(() => Object.fromEntries([...document.querySelectorAll('*')].filter((e) => e.localName.startsWith('attn-')).map((e, i) => {
    const w = e as unknown as Record<string, any>;
    const ok = e.localName === 'attn-translate' ? !!w.result?.text
      : e.localName === 'attn-regression' ? w.result !== null
        : e.localName === 'attn-head-view' ? w.lineCount > 0
          : e.localName === 'attn-model-view' ? w.data.length > 0
            : !!e.shadowRoot?.querySelector('svg');
    return [`${i}:${e.localName}`, ok];
  })));
  return until('widgets drawn', read, (r) => Object.keys(r).length > 0 && Object.values(r).every(Boolean), 60_000).catch(() => read());
}

/** Runs a notebook cell as Jupyter would show it: its last expression's _repr_html_(), with a
 * stand-in for IPython.display.HTML (IPython itself is not installed here). */
function runNotebookCell(cell: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'attnlab-ipython-'));
  try {
    mkdirSync(join(dir, 'IPython'));
    writeFileSync(join(dir, 'IPython', '__init__.py'), '');
    writeFileSync(join(dir, 'IPython', 'display.py'), 'class HTML:\n    def __init__(self, data):\n        self.data = data\n    def _repr_html_(self):\n        return self.data\n');
    const runner = 'import ast, sys\ntree = ast.parse(sys.stdin.read())\nlast = tree.body.pop()\nns = {}\nexec(compile(tree, "cell", "exec"), ns)\nsys.stdout.write(eval(compile(ast.Expression(last.value), "cell", "eval"), ns)._repr_html_())\n';
    return execFileSync('/usr/bin/python3', ['-c', runner], { input: cell, encoding: 'utf8', env: { ...process.env, PYTHONPATH: dir } });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The body of a fenced raw block whose opening line is exactly `fence`. */
function rawBlock(text: string, fence: string): string {
  const lines = text.split('\n');
  expect(lines[0]).toBe(fence);
  expect(lines.at(-1)).toBe('```');
  return lines.slice(1, -1).join('\n');
}

describe("the embed page's recipes, run as written", () => {
  const version = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version as string;
  const JSDELIVR = `https://cdn.jsdelivr.net/npm/attnlab@${version}/`;
  const UNPKG = `https://unpkg.com/attnlab@${version}/`;

  /** The embed page for a view (page + its hash state): the text of each recipe it generates. */
  async function recipes(page: string, view: string, cdnName = 'jsdelivr') {
    const v = await open(`${siteUrl}embed.html#${new URLSearchParams({ page, view, cdn: cdnName })}`);
    await v.page.waitForSelector('body[data-result="ok"]');
    // All in one read: the preview's height messages rewrite every snippet at once (the LMS
    // iframe carries the measured height), so reading them one by one could straddle a rewrite.
    const r = await v.page.evaluate(() => {
      const text = (id: string) => document.getElementById(id)!.textContent!;
      return { cdn: text('snippet-element'), notebook: text('snippet-notebook'), myst: text('snippet-myst'), quarto: text('snippet-quarto'), iframe: text('snippet-iframe'), resize: text('snippet-resize') };
    });
    expect(v.problems).toEqual([]);
    await v.page.close();
    return r;
  }

  /** A course page (other origin) holding `html`, with the public CDN swapped for the local one. */
  async function run(html: string): Promise<Visit & { close: () => Promise<void> }> {
    const local = html.replaceAll(JSDELIVR, cdnPkg(cdn)).replaceAll(UNPKG, cdnPkg(cdn));
    expect(local).not.toMatch(/https:\/\//);  // no real network
    const path = `/recipe-${Math.random().toString(36).slice(2)}.html`;
    const server = await serveStatic(outDir, false, { host: 'localhost', pages: { [path]: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>recipe</title><link rel="icon" href="data:,"></head><body>${local}</body></html>` } });
    const v = await open(`${server.url}${path.slice(1)}`);
    return { ...v, close: async () => { await v.page.close(); await server.close(); } };
  }

  test('CDN script (jsDelivr and unpkg URL forms), for the translation view as it stands', async () => {
    const view = 'dir=fra-eng&arch=gru&beam=2&text=Je+suis+fatigu%C3%A9.';
    const [j, u] = await Promise.all([recipes('translation.html', view), recipes('translation.html', view, 'unpkg')]);
    expect(j.cdn).toBe(`<script type="module" src="${JSDELIVR}dist/components/index.js"></script>\n<attn-translate model="fra-eng" arch="gru" beam="2" value="Je suis fatigué."></attn-translate>`);
    expect(u.cdn).toBe(j.cdn.replace(JSDELIVR, UNPKG));
    await eachTwoAtATime([j.cdn, u.cdn], async (html) => {
      const v = await run(html);
      expect(await allDrawn(v.page)).toEqual({ '0:attn-translate': true });
      // beam="2" reached the translator: a beam search's hypotheses came back.
      expect(await v.page.evaluate(() => (document.querySelector('attn-translate') as unknown as { result: { beams?: unknown[] } }).result.beams?.length)).toBeGreaterThanOrEqual(2);
      expect(v.problems).toEqual([]);
      await v.close();
    });
  });

  test('notebook cell (IPython.display.HTML), Jupyter Book / MyST and Quarto blocks, for the heads and pooling views', async () => {
    const [heads, pooling] = await Promise.all([recipes('heads.html', 'src=Il+fait+beau.&kind=cross&layer=1'), recipes('pooling.html', 'kernel=epanechnikov&h=0.400&n=25&seed=3')]);
    expect(pooling.cdn).toContain('<attn-regression kernel="epanechnikov" bandwidth="0.4" n="25" seed="3"></attn-regression>');
    expect(heads.cdn).toContain('<attn-head-view model="fra-eng" text="Il fait beau." part="cross" layer="2"></attn-head-view>');
    const cases = [
      ['notebook', runNotebookCell(pooling.notebook), pooling.cdn],
      ['myst', rawBlock(heads.myst, '```{raw} html'), heads.cdn],
      ['quarto', rawBlock(pooling.quarto, '```{=html}'), pooling.cdn],
    ] as const;
    for (const [name, html, expected] of cases) expect(html, name).toBe(expected);
    await eachTwoAtATime(cases, async ([name, html]) => {
      const v = await run(html);
      const drawn = await allDrawn(v.page);
      expect(Object.values(drawn).every(Boolean), `${name}: ${JSON.stringify(drawn)}`).toBe(true);
      expect(v.problems, name).toEqual([]);
      await v.close();
    });
  });

  test('a view no widget reproduces (scoring): every recipe frames the page, in its state', async () => {
    const r = await recipes('scoring.html', 'logd=9&causal=1');
    expect(r.iframe).toMatch(/^<iframe src="[^"]*scoring\.html#logd=9&amp;causal=1&amp;embed=1"/);
    expect(r.cdn).toBe(r.iframe);
    expect(runNotebookCell(r.notebook)).toBe(r.iframe);
    expect(rawBlock(r.myst, '```{raw} html')).toBe(r.iframe);
    const v = await run(rawBlock(r.quarto, '```{=html}'));
    const f = () => v.page.frames()[1];
    await until('the framed scoring page', () => f()?.evaluate('document.body.dataset.result') as Promise<string | undefined>, (x) => x === 'ok', 60_000);
    // The view's state reached the page: d = 2^9, causal mask on.
    expect(await f().evaluate("({ d: document.getElementById('dim').value, causal: document.getElementById('causal').checked })")).toEqual({ d: '9', causal: true });
    expect(v.problems).toEqual([]);
    await v.close();
  });

  test('heads view of the decoder, with a layer and the heads chosen: the widgets show that part', async () => {
    const r = await recipes('heads.html', 'src=il+pleut+.&kind=decoder&layer=0&heads=1');
    expect(r.cdn).toContain('<attn-head-view model="fra-eng" text="il pleut ." part="decoder" layer="1" heads="2"></attn-head-view>');
    const v = await run(r.cdn);
    expect(Object.values(await allDrawn(v.page)).every(Boolean)).toBe(true);
    const hv = await v.page.evaluate(() => {
      const e = document.querySelector('attn-head-view') as unknown as { leftTokens: string[]; rightTokens: string[]; activeHeads: number[]; data: number[][][] };
      // Rows: the pieces written; keys: the pieces read ('<bos>', then each written one before).
      return { shifted: JSON.stringify(e.rightTokens) === JSON.stringify(['<bos>', ...e.leftTokens.slice(0, -1)]), active: e.activeHeads, heads: e.data.length,
        // Decoder self-attention is causal: nothing above the diagonal.
        causal: e.data.every((m) => m.every((row, i) => row.every((w, j) => j <= i || w < 1e-6))) };
    });
    expect(hv).toMatchObject({ shifted: true, active: [1], causal: true });
    expect(hv.heads).toBeGreaterThan(1);
    // A head number that is no head is left out, and the widget says so under it.
    await v.page.evaluate(() => document.querySelector('attn-head-view')!.setAttribute('heads', '1 99'));
    const said = await until('the heads attribute read again', () => v.page.evaluate(() => {
      const e = document.querySelector('attn-head-view') as unknown as HTMLElement & { activeHeads: number[] };
      return { active: e.activeHeads, fault: e.shadowRoot!.querySelector('.fault')?.textContent ?? '', readout: e.shadowRoot!.querySelector('.plot + .readout')?.textContent ?? '' };
    }), (x) => x.fault !== '', 10_000);
    expect(said).toEqual({ active: [0], fault: `<attn-head-view>: heads: expected head numbers from 1 to ${hv.heads}, got '99'; showing head 1`,
      readout: expect.stringMatching(new RegExp(`^1 of ${hv.heads} heads shown`)) });
    expect(v.problems).toEqual([]);
    await v.close();
  });

  test('the LMS iframe snippet and the resize script: the framed view loads, in its state, and fits', async () => {
    const r = await recipes('pooling.html', 'kernel=epanechnikov&h=0.400');
    expect(r.iframe).toMatch(/^<iframe src="[^"]*pooling\.html#kernel=epanechnikov&amp;h=0\.400&amp;embed=1"[^>]* allow="clipboard-write; cross-origin-isolated"><\/iframe>$/);
    const v = await run(`${r.iframe}\n${r.resize}`);
    await until('the framed page', () => v.page.frames()[1]?.evaluate('document.body.dataset.result') as Promise<string | undefined>, (x) => x === 'ok', 60_000);
    expect(await v.page.frames()[1].evaluate("document.querySelector('attn-regression').kernel")).toBe('epanechnikov');
    // The snippet's fixed height (the one the embed page measured, or 640) gives way to the height
    // the page posts, which the resize script writes into the frame's style.
    await until('resized', () => v.page.locator('iframe').evaluate((f) => (f as HTMLIFrameElement).style.height), (h) => h !== '', 30_000);
    const fitted = (await v.page.locator('iframe').boundingBox())!.height;
    expect(fitted).toBeGreaterThan(100);
    // It follows the page both ways: taller content grows the frame, and the frame shrinks back
    // once that content is gone (scrollHeight, never below the frame's own height, kept it tall).
    await inFrame(v.page.frames()[1], "document.body.append(Object.assign(document.createElement('div'), { id: 'tall', style: 'height: 3000px' }))");
    await until('grown', async () => (await v.page.locator('iframe').boundingBox())!.height, (h) => h > fitted + 2900, 30_000);
    await inFrame(v.page.frames()[1], "document.getElementById('tall').remove()");
    await until('shrunk back', async () => (await v.page.locator('iframe').boundingBox())!.height, (h) => Math.abs(h - fitted) <= 2, 30_000);
    expect(v.problems).toEqual([]);
    await v.close();
  });

  test('the LMS iframe snippet carries the height the preview measured, and frameborder="0"', async () => {
    const v = await open(`${siteUrl}embed.html#${new URLSearchParams({ page: 'pooling.html', view: 'kernel=epanechnikov&h=0.400' })}`);
    await v.page.waitForSelector('body[data-result="ok"]');
    // No script resizes the frame in an LMS: a fixed 640 left a box scrolling inside the page.
    await expect.poll(() => v.page.evaluate(() => {
      const h = Number(document.getElementById('preview-height')!.dataset.height ?? 0);
      return h > 100 && document.getElementById('snippet-iframe')!.textContent!.includes(`height="${h + 32}"`);
    }), { timeout: 30_000 }).toBe(true);
    expect(await v.page.textContent('#snippet-iframe')).toContain('style="border: 0" frameborder="0"');
    expect(v.problems).toEqual([]);
    await v.page.close();
  });
});
