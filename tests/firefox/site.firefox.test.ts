// The built demo site in Firefox, cross-origin isolated as it is hosted: the home page (attention
// on the threaded build, its heatmap) and the pooling page's interactions (the bandwidth slider
// from the keyboard, a training point dragged with the mouse, the bandwidth trained in a Worker);
// in dark mode (the system's, Firefox launched dark): dark pages and widgets, text contrast AA;
// offline once loaded, through the service worker, with the server gone.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'puppeteer-core';
import { build } from 'vite';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { lowContrastText } from '../browser/contrast';
import { serveStatic, type StaticServer } from '../browser/static-server';
import { launchFirefox } from './firefox';

const configFile = fileURLToPath(new URL('../../web/demo/vite.config.ts', import.meta.url));

let browser: Browser;
let outDir: string;
let site: StaticServer;

beforeAll(async () => {
  // A temporary outDir (as tests/browser/site.browser.test.ts): the test leaves nothing in the work tree.
  outDir = await mkdtemp(join(tmpdir(), 'attnlab-ff-site-'));
  await build({ configFile, logLevel: 'warn', build: { outDir } });
  [browser, site] = await Promise.all([launchFirefox(), serveStatic(outDir, true)]);
});

afterAll(async () => {
  await browser?.close();
  await site?.close();
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

/** Opens a page of the site, records console errors, uncaught exceptions and HTTP errors, waits for its ready signal. */
async function visit(path: string, from: { browser?: Browser; url?: string } = {}): Promise<{ page: Page; problems: string[] }> {
  const page = await (from.browser ?? browser).newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const problems: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`uncaught: ${(e as Error).message}`));
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
  await page.goto(`${from.url ?? site.url}${path}`);
  await ready(page, problems);
  return { page, problems };
}

/** Waits for the page's ready signal and checks it says 'ok'. */
async function ready(page: Page, problems: string[]): Promise<void> {
  await page.waitForSelector('body[data-result]', { timeout: 45_000 }).catch((e: Error) => { throw new Error(`${e.message}\n${problems.join('\n')}`); });
  const result = await page.evaluate(() => [document.body.dataset.result, document.getElementById('page-error')?.textContent ?? document.getElementById('error')?.textContent ?? '']);
  expect(result, problems.join('\n')).toEqual(['ok', '']);
}

/** Evaluates `fn` on the element with this id, as a string expression: the site's CSP forbids compiling strings in the page. */
function on<T>(page: Page, id: string, fn: (el: any) => T): Promise<T> {
  return page.evaluate(`(${fn.toString()})(document.getElementById(${JSON.stringify(id)}))`) as Promise<T>;
}

test('home: causal attention on the relaxed threaded build, shown in its heatmap, no console errors', async () => {
  const { page, problems } = await visit('');
  const s = await page.evaluate(() => ({
    isolated: crossOriginIsolated,
    variant: document.getElementById('variant')?.textContent,
    rows: JSON.parse(document.getElementById('result')!.dataset.exact!) as number[][],
  }));
  expect(s).toMatchObject({ isolated: true, variant: 'relaxed-simd-threads' });
  s.rows.forEach((r, i) => {
    expect(Math.abs(r.reduce((a, b) => a + b, 0) - 1)).toBeLessThan(1e-5);
    r.forEach((x, j) => { if (j > i) expect(x).toBe(0); });
  });
  expect(await on(page, 'home-heatmap', (el) => el.valueAt(3, 1))).toBeCloseTo(s.rows[3][1], 6);
  expect(await on(page, 'home-heatmap', (el) => !!el.shadowRoot.querySelector('svg'))).toBe(true);
  await page.close();
  expect(problems).toEqual([]);
});

test('pooling: the bandwidth slider, dragging a point and training the bandwidth in a Worker change what the widgets show', async () => {
  const { page, problems } = await visit('pooling.html');
  const peak = (el: { data: number[][] }) => Math.max(...el.data[20]);
  const before = { h: await on(page, 'weights', (el) => Number(el.dataset.bandwidth)), peak: await on(page, 'weights', peak) };
  expect(before.h).toBeCloseTo(0.5, 2);
  await page.focus('#bandwidth');
  for (let i = 0; i < 20; i++) await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => {
    const h = 0.05 * 60 ** (Number((document.getElementById('bandwidth') as HTMLInputElement).value) / 100);
    return Math.abs(Number(document.getElementById('weights')!.dataset.bandwidth) - h) < 1e-4;
  });
  const after = { h: await on(page, 'weights', (el) => Number(el.dataset.bandwidth)), peak: await on(page, 'weights', peak) };
  expect(after.h).toBeGreaterThan(before.h * 1.2);
  expect(after.peak).toBeLessThan(before.peak);  // a wider kernel spreads the weights

  // Drag training point 5 up: its y grows, the curve near it rises.
  const p5 = await on(page, 'regression', (el) => el.points[5]);
  const yhat = await on(page, 'regression', (el) => el.predictionAt(el.points[5].x));
  const box = (await page.evaluate(() => {
    const r = document.getElementById('regression')!.shadowRoot!.querySelector('circle[data-index="5"]')!.getBoundingClientRect();
    return { x: r.x, y: r.y, width: r.width, height: r.height };
  }));
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2, box.y - 40, { steps: 5 });
  await page.mouse.move(box.x + box.width / 2, box.y - 80, { steps: 5 });
  await page.mouse.up();
  const moved = await on(page, 'regression', (el) => el.points[5]);
  expect(moved.y).toBeGreaterThan(p5.y + 1);
  expect(Math.abs(moved.x - p5.x)).toBeLessThan(0.2);
  expect(await on(page, 'regression', (el) => el.predictionAt(el.points[5].x))).toBeGreaterThan(yhat);

  // Train: the leave-one-out loss falls.
  const loss0 = Number(await on(page, 'loss', (el) => el.dataset.value));
  await page.click('#train');
  await page.waitForSelector('#train-status[data-done="1"]', { timeout: 45_000 });
  expect(Number(await on(page, 'loss', (el) => el.dataset.value))).toBeLessThan(loss0);
  await page.close();
  expect(problems).toEqual([]);
});

test('dark mode (the system\'s): the pages and their widgets turn dark, text contrast AA, no console errors', async () => {
  const dark = await launchFirefox({ dark: true });
  try {
    for (const path of ['', 'pooling.html']) {
      const { page, problems } = await visit(path, { browser: dark });
      const look = await page.evaluate(() => {
        const bg = getComputedStyle(document.body).backgroundColor.match(/\d+/g)!.map(Number);
        const widgets = [...document.querySelectorAll('main *')].filter((e) => e.localName.startsWith('attn-')) as unknown as (HTMLElement & { toSVG(): string })[];
        return {
          scheme: matchMedia('(prefers-color-scheme: dark)').matches,
          pageDark: Math.max(...bg) < 60,
          widgets: widgets.length,
          lightWidgets: widgets.filter((w) => !w.toSVG().includes('#1c1d24')).map((w) => w.id),  // DARK.bg in web/components/theme.ts
        };
      });
      expect(look.widgets, path).toBeGreaterThan(0);
      expect({ ...look, widgets: undefined }, path).toEqual({ scheme: true, pageDark: true, widgets: undefined, lightWidgets: [] });
      expect(await page.evaluate(lowContrastText), path).toEqual([]);
      await page.close();
      expect(problems).toEqual([]);
    }
  } finally {
    await dark.close();
  }
});

/** The site behind a switch: `down` makes it unreachable (every connection reset), as a network gone. */
async function unplugged(target: string): Promise<{ url: string; down: boolean; refused: number; close(): Promise<void> }> {
  const to = new URL(target);
  const front = { url: '', down: false, refused: 0, close: () => new Promise<void>((ok) => server.close(() => ok())) };
  const server = createServer((req, res) => {
    if (front.down) {
      front.refused += 1;
      req.socket.destroy();
      return;
    }
    const up = request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    req.pipe(up);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  front.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return front;
}

test('offline: the home page, once loaded, reloads and computes with the server gone; a page never visited works too', async () => {
  const net = await unplugged(site.url);  // its own origin: a first visit, no service worker yet
  const { page, problems } = await visit('', { url: net.url });
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, { timeout: 30_000 });
  // Everything the page fetched is kept: the shell by the install, its build from the HTTP cache.
  await expect.poll(() => page.evaluate(async () => {
    const used = performance.getEntriesByType('resource').map((e) => e.name).filter((u) => u.startsWith(location.origin));
    const kept = await Promise.all(used.map((u) => caches.match(u, { ignoreSearch: true })));
    return used.filter((_, i) => !kept[i]);
  }), { timeout: 30_000 }).toEqual([]);
  net.down = true;
  await page.reload();
  await ready(page, problems);
  const s = await page.evaluate(() => ({
    isolated: crossOriginIsolated,
    variant: document.getElementById('variant')?.textContent,
    rows: JSON.parse(document.getElementById('result')!.dataset.exact!) as number[][],
  }));
  expect(s).toMatchObject({ isolated: true, variant: 'relaxed-simd-threads' });
  for (const r of s.rows) expect(Math.abs(r.reduce((a, b) => a + b, 0) - 1)).toBeLessThan(1e-5);
  await page.goto(`${net.url}pooling.html`);  // never visited: its shell, on the home page's build
  await ready(page, problems);
  expect(await on(page, 'weights', (el) => el.rowCount)).toBe(40);
  expect(net.refused).toBeGreaterThan(0);  // the pages were asked of the network first, and it was gone
  await page.close();
  await net.close();
  expect(problems).toEqual([]);
});
