// The demo page in Debian's Chromium, served two ways: the Vite dev server, and `vite build`
// output behind `vite preview`. Both must be cross-origin isolated, run the 'relaxed-simd-threads'
// build, and show a correct causal softmax, without console errors or failed requests.
import { rm } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { launchChromium } from './chromium';
import { createServer, preview } from 'vite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildSite, siteConfig as configFile } from './site-server';
import { DIM, SEQ, exampleInputs } from '../../web/demo/example';

// Port 0: the OS picks a free one, so parallel runs and a running `npm start` don't collide.
const listen = { host: '127.0.0.1', port: 0, strictPort: true };

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** Causal softmax(q k^T / sqrt(d)) of the demo's inputs, in float64. */
function expectedWeights(): number[][] {
  const { q, k } = exampleInputs();
  return Array.from({ length: SEQ }, (_, i) => {
    const scores = Array.from({ length: SEQ }, (_, j) => {
      let s = 0;
      for (let d = 0; d < DIM; d++) s += q.data[i * DIM + d] * k.data[j * DIM + d];
      return j <= i ? s / Math.sqrt(DIM) : -Infinity;
    });
    const max = Math.max(...scores);
    const e = scores.map((s) => Math.exp(s - max));
    const sum = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / sum);
  });
}

async function checkDemo(url: string): Promise<void> {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} (${r.failure()?.errorText})`));
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
  try {
    await page.goto(url);
    // Shorter than the test's timeout, so a page that never finishes fails with what it logged.
    await page.waitForSelector('body[data-result]', { timeout: 45_000 }).catch((e: Error) => {
      throw new Error(`${e.message}\n${problems.join('\n')}`);
    });
    const state = await page.evaluate(() => {
      const text = (id: string) => document.getElementById(id)?.textContent ?? '';
      const result = document.getElementById('result')!;
      return {
        result: document.body.dataset.result,
        error: text('error'),
        isolated: globalThis.crossOriginIsolated,
        variant: text('variant'),
        threads: Number(text('threads')),
        rounded: result.textContent ?? '',
        exact: result.dataset.exact ?? '',
      };
    });
    const snapshot = [...problems];

    // Together, so a failure shows the page's message next to what the console said.
    expect({ error: state.error, problems: snapshot }).toEqual({ error: '', problems: [] });
    expect(state.result).toBe('ok');
    expect(state.isolated).toBe(true);
    expect(state.variant).toBe('relaxed-simd-threads');  // the fastest build (web/demo/main.ts); Chromium has relaxed SIMD
    expect(state.threads).toBeGreaterThanOrEqual(1);

    const w = JSON.parse(state.exact) as number[][];
    expect(w).toHaveLength(SEQ);
    const want = expectedWeights();
    w.forEach((row, i) => {
      expect(row).toHaveLength(SEQ);
      row.forEach((x, j) => {
        if (j > i) expect(x).toBe(0); // masked: exactly zero, not merely tiny
        else expect(x).toBeGreaterThan(0);
        expect(Math.abs(x - want[i][j])).toBeLessThan(1e-5);
      });
      expect(Math.abs(row.reduce((a, b) => a + b, 0) - 1)).toBeLessThanOrEqual(1e-5);
    });
    // What people see is the same numbers, rounded to 4 decimals.
    expect(JSON.parse(state.rounded)).toEqual(w.map((r) => r.map((x) => Math.round(x * 1e4) / 1e4)));

  } finally {
    await page.close();
  }
}

describe('demo on the Vite dev server', () => {
  let server: Awaited<ReturnType<typeof createServer>>;
  beforeAll(async () => {
    server = await createServer({ configFile, logLevel: 'warn', server: { ...listen, hmr: false } });
    await server.listen();
  });
  afterAll(async () => {
    await server?.close();
  });

  test('runs causal attention with relaxed-simd-threads', async () => {
    await checkDemo(server.resolvedUrls!.local[0]);
  });
});

describe('demo built by vite build, served by vite preview', () => {
  let outDir: string;
  let server: Awaited<ReturnType<typeof preview>>;
  beforeAll(async () => {
    // A temporary outDir: the test leaves nothing in the work tree.
    outDir = await buildSite('demo');
    server = await preview({ configFile, logLevel: 'warn', build: { outDir }, preview: listen });
  });
  afterAll(async () => {
    await server?.close();
    if (outDir) await rm(outDir, { recursive: true, force: true });
  });

  test('runs causal attention with relaxed-simd-threads', async () => {
    await checkDemo(server.resolvedUrls!.local[0]);
  });
});
