// The package in Firefox, from a CDN's layout (attnlab and attnlab-models side by side, as in
// tests/browser/embed.browser.test.ts) on a plain page and on a cross-origin isolated one, and
// from that CDN on a page of another origin.
import { mkdtemp, mkdir, rm, symlink } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { serveStatic, type StaticServer } from '../browser/static-server';
import { maxError, randBool, randn, refAttention } from '../js/reference';
import { launchFirefox, repoRoot } from './firefox';

const VERSION = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version as string;
const PKG = `/npm/attnlab@${VERSION}/dist/index.js`;
const EXPECTED = JSON.parse(readFileSync(join(repoRoot, 'tests/js/translations.expected.json'), 'utf8')) as
  Record<string, { text: string; beam: number; expected: string }[]>;

let browser: Browser;
let cdnRoot: string;
let plain: StaticServer;
let isolated: StaticServer;
let course: StaticServer;

beforeAll(async () => {
  cdnRoot = await mkdtemp(join(tmpdir(), 'attnlab-ff-cdn-'));
  await mkdir(join(cdnRoot, 'npm'));
  await symlink(repoRoot, join(cdnRoot, 'npm', `attnlab@${VERSION}`));
  await symlink(join(repoRoot, 'web', 'models'), join(cdnRoot, 'npm', `attnlab-models@${VERSION}`));
  // The package's module on the page (page.evaluate's functions go through Vite's transform,
  // which rewrites an import() in them).
  const pages = { '/page.html': `<!doctype html><meta charset="utf-8"><title>attnlab in Firefox</title><link rel="icon" href="data:,">
<script type="module">window.attnlab = await import('${PKG}'); document.documentElement.dataset.ready = '';</script>` };
  // CORS and CORP as jsDelivr and unpkg send them, for the course page on another origin.
  const headers = { 'Access-Control-Allow-Origin': '*', 'Cross-Origin-Resource-Policy': 'cross-origin' };
  [browser, plain, isolated] = await Promise.all([launchFirefox(), serveStatic(cdnRoot, false, { pages, headers }), serveStatic(cdnRoot, true, { pages, headers })]);
  // A course page (localhost) that uses attnlab from the CDN (127.0.0.1): another origin.
  course = await serveStatic(cdnRoot, false, { host: 'localhost', pages: { '/page.html': pages['/page.html'].replace(PKG, `${plain.url.slice(0, -1)}${PKG}`) } });
});

afterAll(async () => {
  await browser?.close();
  await Promise.all([plain?.close(), isolated?.close(), course?.close()]);
  if (cdnRoot) await rm(cdnRoot, { recursive: true, force: true });  // the links, not what they point at
});

async function open(server: StaticServer): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`uncaught: ${(e as Error).message}`));
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
  await page.goto(`${server.url}page.html`);
  await page.waitForSelector('html[data-ready]');
  return { page, problems };
}

// Attention cases, float32 inputs so the page and the float64 reference see the same numbers:
// dense (queries and keys of different lengths), causal, and a boolean mask (true: may attend).
type T = { data: Float32Array | Uint8Array; shape: number[] };
const q = randn([2, 7, 8], 1), k = randn([2, 9, 8], 2), v = randn([2, 9, 5], 3);
const sq = randn([2, 6, 4], 5), sv = randn([2, 6, 3], 6);
// Blocks of query rows for the threaded builds to share out between their threads.
const bq = randn([2, 2, 64, 16], 7), bk = randn([2, 2, 64, 16], 8), bv = randn([2, 2, 64, 8], 9);
const mask = randBool([7, 9], 4, 0.7);
for (let i = 0; i < 7; i++) mask.data[i * 9] = 1;  // every query keeps a key
const CASES: { name: string; q: T; k: T; v: T; options: { causal?: boolean; attnMask?: T } }[] = [
  { name: 'dense', q, k, v, options: {} },
  { name: 'causal', q: sq, k: sq, v: sv, options: { causal: true } },
  { name: 'masked', q, k, v, options: { attnMask: mask } },
  { name: 'large causal', q: bq, k: bk, v: bv, options: { causal: true } },
];

/** In the page: load(options), each case's output and weights, two bad calls' errors, then the first case again. */
async function runAttention(page: Page, options: object) {
  const wire = (t: T) => ({ data: Array.from(t.data), shape: t.shape, bool: t.data instanceof Uint8Array });
  const cases = CASES.map((c) => ({ q: wire(c.q), k: wire(c.k), v: wire(c.v), options: { ...c.options, ...(c.options.attnMask && { attnMask: wire(c.options.attnMask) }) } }));
  return page.evaluate(async (options, cases) => {
    const { load } = (window as any).attnlab;
    const lib = await load(options);
    type W = { data: number[]; shape: number[]; bool: boolean };
    const t = (x: W) => ({ data: x.bool ? Uint8Array.from(x.data) : Float32Array.from(x.data), shape: x.shape });
    const run = (c: { q: W; k: W; v: W; options: Record<string, unknown> }) => {
      const o = { ...c.options, ...(c.options.attnMask ? { attnMask: t(c.options.attnMask as W) } : {}) };
      const r = lib.attention(t(c.q), t(c.k), t(c.v), { ...o, returnWeights: true });
      return { output: Array.from(r.output.data as Float32Array), weights: Array.from(r.weights.data as Float32Array) };
    };
    const results = cases.map(run);
    const errors: string[] = [];
    const [q, k, v] = [t(cases[0].q), t(cases[0].k), t(cases[0].v)];
    for (const bad of [() => lib.attention(q, { data: new Float32Array(3), shape: [2, 9, 8] }, v), () => lib.attention(q, k, v, { score: 'cosine' })]) {
      try { bad(); errors.push('no error'); } catch (e) { errors.push(e instanceof Error ? `Error: ${e.message}` : `not an Error: ${String(e)}`); }
    }
    const again = run(cases[0]);  // the instance keeps working
    const result = { variant: lib.variant, reason: lib.variantReason, threads: lib.threads, isolated: crossOriginIsolated, results, errors, again };
    lib.dispose();
    return result;
  }, options, cases);
}

/** Every case against the float64 reference (1e-5, as tests/js), and the masked-out weights exactly 0. */
function expectReference(r: Awaited<ReturnType<typeof runAttention>>): void {
  CASES.forEach((c, i) => {
    const want = refAttention(c.q as never, c.k as never, c.v as never, c.options as never);
    expect(maxError(r.results[i].output, want.output.data), c.name).toBeLessThanOrEqual(1e-5);
    expect(maxError(r.results[i].weights, want.weights.data), c.name).toBeLessThanOrEqual(1e-5);
    want.weights.data.forEach((w, j) => { if (w === 0) expect(r.results[i].weights[j], `${c.name} weight ${j}`).toBe(0); });
  });
  expect(r.again).toEqual(r.results[0]);
}

describe('attnlab in Firefox', () => {
  test('plain page: load() picks the single-threaded relaxed-SIMD build and says why; attention meets the float64 reference; bad input is a named Error', async () => {
    const { page, problems } = await open(plain);
    const r = await runAttention(page, {});
    await page.close();
    // Firefox 153 validates relaxed SIMD (f32x4.relaxed_madd); threads need cross-origin isolation.
    expect(r).toMatchObject({ variant: 'relaxed-simd', threads: 1, isolated: false });
    expect(r.reason).toBe("'relaxed-simd-threads' needs SharedArrayBuffer, which a browser grants only to cross-origin isolated pages (COOP/COEP headers): 'relaxed-simd' is the fastest build that runs here");
    expectReference(r);
    expect(r.errors).toEqual([
      'Error: attention: k: expected data of length 144 for shape [2, 9, 8], got length 3',
      `Error: attention: options.score: expected one of 'scaled_dot', 'dot', 'general', 'additive', got "cosine"`,
    ]);
    expect(problems).toEqual([]);
  });

  test('cross-origin isolated page: the threaded builds run, bit-identical to their single-threaded twins', async () => {
    const { page, problems } = await open(isolated);
    // One page, so both builds of a family share the realm's row-group choice (web/lib/loader.ts).
    const runs = [];
    for (const options of [{}, { variant: 'relaxed-simd' }, { variant: 'simd-threads' }, { variant: 'simd' }]) runs.push(await runAttention(page, options));
    await page.close();
    const [relaxedThreads, relaxed, simdThreads, simd] = runs;
    expect(relaxedThreads).toMatchObject({ variant: 'relaxed-simd-threads', isolated: true, reason: "'relaxed-simd-threads' is the fastest build, and it runs here" });
    expect(relaxedThreads.threads).toBeGreaterThanOrEqual(2);
    expect(simdThreads.variant).toBe('simd-threads');
    expect([relaxed.variant, simd.variant]).toEqual(['relaxed-simd', 'simd']);
    for (const r of runs) expectReference(r);
    expect(relaxedThreads.results).toEqual(relaxed.results);
    expect(simdThreads.results).toEqual(simd.results);
    expect(problems).toEqual([]);
  });

  test("translators: 'Je suis fatigué.' as in Node (tests/js/translations.expected.json), GRU and Transformer, greedy and beam 5", async () => {
    const { page, problems } = await open(plain);
    const got = await page.evaluate(async (text) => {
      const lib = await (window as any).attnlab.load();
      const out: Record<string, string> = {};
      for (const arch of ['gru', 'transformer']) {
        const tr = await lib.loadTranslator('fra-eng', { arch });  // by name: the models package beside attnlab's folder
        for (const beam of [1, 5]) out[`fra-eng-${arch} ${beam}`] = tr.translate(text, { beam }).text;
        tr.dispose();
      }
      lib.dispose();
      return out;
    }, 'Je suis fatigué.');
    await page.close();
    const want = Object.fromEntries(['fra-eng-gru', 'fra-eng-transformer'].flatMap((m) =>
      EXPECTED[m].filter((e) => e.text === 'Je suis fatigué.').map((e) => [`${m} ${e.beam}`, e.expected])));
    expect(Object.keys(want)).toHaveLength(4);
    expect(got).toEqual(want);
    expect(problems).toEqual([]);
  });

  test('the package from another origin (a CDN): the trainer and a checkpoint run in their Workers, with nothing in the console', async () => {
    const { page, problems } = await open(course);
    const r = await page.evaluate(async (model) => {
      const { load, loadModel } = (window as any).attnlab;
      const lib = await load();
      let progress = 0;
      const session = lib.createTrainer({ task: 'reverse', hidden: 16, evalEvery: 5, evalSize: 10, maxSeconds: 60, targetAccuracy: 1,
        onProgress: () => { if (progress++ === 0) session.cancel(); } });
      const done = await session.done;
      const m = await loadModel(model);
      const shape = (await m.forward('the cat', { attentions: true })).attentions.shape;
      const runsIn = m.runsIn;
      m.dispose();
      lib.dispose();
      return { crossOrigin: location.origin !== new URL(model).origin, trainer: { thread: done.thread, reason: done.reason, workerError: done.workerError ?? null }, model: { runsIn, shape } };
    }, `${plain.url}npm/attnlab@${VERSION}/tests/pretrained/fixtures/gpt-neo-f32/`);
    await page.close();
    expect(r).toEqual({ crossOrigin: true, trainer: { thread: 'worker', reason: 'cancelled', workerError: null }, model: { runsIn: 'worker', shape: [2, 4, 6, 6] } });
    expect(problems).toEqual([]);
  });
});
