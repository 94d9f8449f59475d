// The widgets import attnlab's API (dist/index.js and what it imports) only when one needs it: a
// course page of heatmaps never downloads it, and one with a regression (no `lib` given) or a
// model attribute gets it on first use, not before its widgets can draw.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Browser } from 'playwright-core';
import { launch, pageProblems, repoRoot } from './helpers';
import { serveStatic, type StaticServer } from './static-server';

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Widgets only</title>
<link rel="icon" href="data:,"><script type="module" src="/dist/components/index.js"></script></head>
<body><main id="stage"><attn-heatmap id="heat" row-labels="a b" col-labels="c d" data="[[1,0],[0.25,0.75]]"></attn-heatmap></main></body></html>`;

let browser: Browser;
let server: StaticServer;
beforeAll(async () => {
  [browser, server] = await Promise.all([launch(), serveStatic(repoRoot, false, { pages: { '/widgets-only.html': PAGE } })]);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('the widgets and the library', () => {
  test('a page of heatmaps never fetches dist/index.js; a regression without `lib` fetches it and computes', async () => {
    const page = await browser.newPage();
    const problems = pageProblems(page);
    const fetched: string[] = [];
    page.on('request', (r) => fetched.push(new URL(r.url()).pathname));
    await page.goto(`${server.url}widgets-only.html`);
    await page.waitForFunction(() => customElements.get('attn-regression') !== undefined);
    expect(await page.evaluate(() => (document.getElementById('heat') as unknown as { valueAt(i: number, j: number): number }).valueAt(1, 1))).toBe(0.75);
    expect(fetched).not.toContain('/dist/index.js');
    expect(fetched.filter((p) => /\.(wasm|mjs)$/.test(p))).toEqual([]);
    await page.evaluate(() => {
      const reg = document.createElement('attn-regression');
      reg.id = 'reg';
      reg.setAttribute('n', '20');
      document.getElementById('stage')!.append(reg);
    });
    await page.waitForFunction(() => (document.getElementById('reg') as unknown as { result: unknown }).result !== null, undefined, { timeout: 30_000 });
    expect(fetched).toContain('/dist/index.js');
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);
});
