// The built demo site as a learner on a phone meets it: a 360 x 740 touch screen (isMobile,
// hasTouch), light and dark, prefers-reduced-motion: reduce. Every page: no sideways scrolling,
// text contrast (SVG text included, which axe-core skips) and tap targets (WCAG 2.5.8); the main
// interaction by touch; the reader's own font size honoured.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { launch } from './helpers';
import { serveStatic, type StaticServer } from './static-server';

const configFile = fileURLToPath(new URL('../../web/demo/vite.config.ts', import.meta.url));
const PHONE = { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true, reducedMotion: 'reduce', serviceWorkers: 'block' } as const;

let browser: Browser;
let outDir: string;
let site: StaticServer;

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'attnlab-site-mobile-'));
  await build({ configFile, logLevel: 'warn', build: { outDir } });
  [browser, site] = await Promise.all([launch(), serveStatic(outDir, true)]);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

interface Phone {
  ctx: BrowserContext;
  page: Page;
  problems: string[];
}

/** A phone-sized page at `path`, ready (body[data-result="ok"]), recording console errors. */
async function phone(path: string, colorScheme: 'light' | 'dark' = 'light'): Promise<Phone> {
  const ctx = await browser.newContext({ ...PHONE, colorScheme });
  const page = await ctx.newPage();
  const problems: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  await page.goto(`${site.url}${path}`);
  await page.waitForSelector('body[data-result="ok"]', { timeout: 90_000 }).catch((e: Error) => {
    throw new Error(`${path}: ${e.message}\n${problems.join('\n')}`);
  });
  return { ctx, page, problems };
}

/** A finger along `path` (CSS px in the viewport): the touch events a touch screen sends. */
async function finger(p: Phone, path: [number, number][]): Promise<void> {
  const cdp = await p.ctx.newCDPSession(p.page);
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x: path[0][0], y: path[0][1] }] });
  for (const [x, y] of path.slice(1)) {
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [{ x, y }] });
    await p.page.waitForTimeout(16);
  }
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await p.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await cdp.detach();
}

describe('the site on a phone', () => {
  test('pooling: a fingertip beside a training point (not dead on its 10 px circle) drags it; the page holds still', async () => {
    const p = await phone('pooling.html');
    const { page } = p;
    const points = () => page.evaluate(() => (document.getElementById('regression') as unknown as { points: { x: number; y: number }[] }).points);
    await page.locator('#regression').scrollIntoViewIfNeeded();
    // The point farthest from the others, so "nearest" cannot be another one.
    const target = await page.evaluate(() => {
      const cs = [...document.getElementById('regression')!.shadowRoot!.querySelectorAll('circle.pt')].map((c) => {
        const r = c.getBoundingClientRect();
        return { i: Number(c.getAttribute('data-index')), x: r.left + r.width / 2, y: r.top + r.height / 2, size: r.width };
      });
      const gap = (a: typeof cs[number]) => Math.min(...cs.filter((b) => b !== a).map((b) => Math.hypot(a.x - b.x, a.y - b.y)));
      return cs.reduce((best, c) => (gap(c) > gap(best) ? c : best));
    });
    expect(target.size).toBeLessThan(16); // the reason: a point is much smaller than a fingertip
    const before = await points();
    const scroll = await page.evaluate(() => scrollY);
    // 7 px right of the centre: outside the circle, well inside a fingertip.
    const x = target.x + 7;
    await finger(p, [[x, target.y], [x, target.y - 10], [x, target.y - 25], [x, target.y - 40], [x, target.y - 55]]);
    const after = await points();
    expect(after).toHaveLength(before.length);
    expect(after[target.i].y).toBeGreaterThan(before[target.i].y + 0.5);
    expect(await page.evaluate(() => scrollY)).toBe(scroll);
    await p.ctx.close();
    expect(p.problems).toEqual([]);
  });
});
