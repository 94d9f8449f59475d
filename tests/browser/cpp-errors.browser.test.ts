// tests/js/cpp-errors.test.ts in Chromium, on a cross-origin-isolated page where load() picks the
// threaded builds: an error only the C++ core sees is an Error with the core's message on every
// build, frees what it allocated, and the instance keeps working. The threaded builds once let
// such errors out as a bare WebAssembly.Exception (cpp/wasm/wasm_eh.cpp).
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { launch, pageResult, repoRoot } from './helpers';
import { serveStatic, type StaticServer } from './static-server';

const script = `
import { load } from '/dist/index.js';
const big = { data: new Float32Array([1e20, 0, 0, 1e20]), shape: [1, 2, 2] };
const small = { data: new Float32Array([1, 0, 0, 1]), shape: [1, 2, 2] };
const caught = async (f) => { try { await f(); return 'no error'; } catch (e) { return e instanceof Error ? e.message : Object.prototype.toString.call(e); } };
const results = {};
for (const variant of ['relaxed-simd-threads', 'simd-threads', 'relaxed-simd', 'simd', 'scalar']) {
  const lib = await load({ variant, threads: variant.endsWith('-threads') ? 2 : 1 });
  const first = [await caught(() => lib.attentionScores(big, big)), await caught(() => lib.loadTranslator(new Uint8Array(1000)))];
  const used = lib.heapStats().used;
  for (let i = 0; i < 10; i++) await caught(() => lib.attentionScores(big, big)), await caught(() => lib.loadTranslator(new Uint8Array(1000)));
  results[variant] = { threads: lib.threads, first, grew: lib.heapStats().used - used, works: Array.from(lib.attentionScores(small, small, { score: 'dot' }).data) };
  lib.dispose();
}
document.body.dataset.result = JSON.stringify({ isolated: globalThis.crossOriginIsolated, results });
`;

// A pthread allocates its thread-local block from the heap as it starts, on its own time: load()
// and the translator's module once resolved before that, and heapStats() then moved by 16-32
// bytes under a caller that had just loaded (this test's first half, once, in CI).
const startScript = `
import { load } from '/dist/index.js';
const settle = async () => { const t0 = performance.now(); while (performance.now() - t0 < 50); await new Promise((r) => setTimeout(r, 100)); };
const results = {};
for (const variant of ['relaxed-simd-threads', 'simd-threads']) {
  const moved = [];
  for (let i = 0; i < 3; i++) {
    const lib = await load({ variant, threads: 2 });
    let used = lib.heapStats().used;
    await settle();
    moved.push(lib.heapStats().used - used);
    await lib.loadTranslator(new Uint8Array(1000)).catch(() => {});
    used = lib.heapStats().used;
    await settle();
    moved.push(lib.heapStats().used - used);
    lib.dispose();
  }
  results[variant] = moved;
}
document.body.dataset.result = JSON.stringify(results);
`;

let browser: Browser;
let server: StaticServer;

beforeAll(async () => {
  browser = await launch();
  server = await serveStatic(repoRoot, true, {
    pages: {
      '/errors.html': `<!doctype html><title>errors</title><link rel="icon" href="data:,"><body><script type="module">${script}</script>`,
      '/start.html': `<!doctype html><title>start</title><link rel="icon" href="data:,"><body><script type="module">${startScript}</script>`,
    },
  });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

test('errors raised in C++ are Errors on every build, threaded ones included, and leave the heap as it was', async () => {
  const { result: r, errors } = await pageResult(browser, `${server.url}errors.html`);
  expect(errors).toEqual([]);
  expect(r.isolated).toBe(true);
  for (const [variant, x] of Object.entries(r.results as Record<string, { threads: number; first: string[]; grew: number; works: number[] }>)) {
    expect(x.first[0], variant).toMatch(/^attentionScores: q, k: the scores overflow float32/);
    expect(x.first[1], variant).toMatch(/^loadTranslator: model file: bad magic number/);
    expect(x.grew, variant).toBe(0);
    expect(x.works, variant).toEqual([1, 0, 0, 1]);
    expect(x.threads, variant).toBe(variant.endsWith('-threads') ? 2 : 1);
  }
}, 120_000);

test('load() and the first loadTranslator() resolve with their threads running: the heap does not move after', async () => {
  const { result: r, errors } = await pageResult(browser, `${server.url}start.html`);
  expect(errors).toEqual([]);
  expect(r).toEqual({ 'relaxed-simd-threads': [0, 0, 0, 0, 0, 0], 'simd-threads': [0, 0, 0, 0, 0, 0] });
}, 120_000);
