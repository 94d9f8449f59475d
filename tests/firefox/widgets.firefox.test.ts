// The widgets in Firefox, on a plain page that loads only dist/components/index.js (the embed
// snippet): a heatmap drawn as rects, one drawn as an image (past 300 cells), and the regression,
// which loads attnlab itself. Each draws and exports an SVG that parses and a PNG whose pixels
// are the picture's; their SVG and PNG buttons save those files through Firefox's downloads.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { serveStatic, type StaticServer } from '../browser/static-server';
import { launchFirefox, repoRoot } from './firefox';

const N = 24;  // the large heatmap: N x N, 0 at the top left, 1 at the bottom right
const large = Array.from({ length: N }, (_, i) => Array.from({ length: N }, (_, j) => (i * N + j) / (N * N - 1)));
const PAGE = `<!doctype html><html lang="en"><meta charset="utf-8"><title>attnlab widgets in Firefox</title><link rel="icon" href="data:,">
<script type="module" src="/dist/components/index.js"></script>
<main>
<attn-heatmap id="small" row-labels="je suis" col-labels="I am" data="[[1,0],[0.25,0.75]]" show-values></attn-heatmap>
<attn-heatmap id="large" data="${JSON.stringify(large)}"></attn-heatmap>
<attn-regression id="reg" kernel="gaussian" bandwidth="0.5" n="20"></attn-regression>
</main></html>`;

let browser: Browser;
let server: StaticServer;
let page: Page;
let downloads: string;
const problems: string[] = [];

beforeAll(async () => {
  downloads = await mkdtemp(join(tmpdir(), 'attnlab-ff-downloads-'));
  [browser, server] = await Promise.all([launchFirefox(), serveStatic(repoRoot, false, { pages: { '/widgets.html': PAGE } })]);
  // Downloads saved in `downloads` without asking (WebDriver BiDi's browser.setDownloadBehavior).
  const context = await browser.createBrowserContext({ downloadBehavior: { policy: 'allow', downloadPath: downloads } });
  page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warn') problems.push(`console ${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`uncaught: ${(e as Error).message}`));
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
  await page.goto(`${server.url}widgets.html`);
  await page.waitForFunction(() => (document.getElementById('reg') as unknown as { result: unknown }).result != null, { timeout: 30_000 });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (downloads) await rm(downloads, { recursive: true, force: true });
});

/** In the page: the widget's SVG export parsed, its PNG decoded, and the PNG's pixels in its cells. */
function exportOf(id: string) {
  return page.evaluate(async (id) => {
    const el = document.getElementById(id) as unknown as HTMLElement & { toSVG(): string; toPNG(): Promise<Blob> };
    const live = el.shadowRoot!.querySelector('svg') as SVGSVGElement;
    const svg = el.toSVG();
    const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
    const png = await el.toPNG();
    const bitmap = await createImageBitmap(png);
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
    const ctx = canvas.getContext('2d')!;
    ctx.drawImage(bitmap, 0, 0);
    const pixels = ctx.getImageData(0, 0, bitmap.width, bitmap.height).data;
    const at = (x: number, y: number) => Array.from(pixels.subarray((Math.floor(y * 2) * bitmap.width + Math.floor(x * 2)) * 4, (Math.floor(y * 2) * bitmap.width + Math.floor(x * 2)) * 4 + 3));
    // Cells: each rect's fill and a pixel near its corner (its value is printed in the middle); or
    // the image's first and last cells' centres.
    const rects = [...doc.querySelectorAll('g.cells rect[fill^="rgb"]')].map((r) => {
      const n = (a: string) => Number(r.getAttribute(a));
      return { fill: r.getAttribute('fill'), png: at(n('x') + 4, n('y') + 4) };
    });
    const image = doc.querySelector('g.cells image');
    const corners = image ? (() => {
      const n = (a: string) => Number(image.getAttribute(a));
      const cw = n('width') / (el as unknown as { data: number[][] }).data.length;
      return [at(n('x') + cw / 2, n('y') + cw / 2), at(n('x') + n('width') - cw / 2, n('y') + n('height') - cw / 2)];
    })() : null;
    const colours = new Set<number>();
    for (let i = 0; i < pixels.length; i += 4) colours.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
    return {
      parses: doc.documentElement.localName === 'svg' && !doc.querySelector('parsererror'),
      paths: doc.querySelectorAll('path').length,
      type: png.type, size: [bitmap.width, bitmap.height],
      expected: [Math.ceil(live.viewBox.baseVal.width * 2), Math.ceil(live.viewBox.baseVal.height * 2)],
      rects, corners, colours: colours.size,
    };
  }, id);
}

const rgb = (fill: string) => fill.match(/\d+/g)!.map(Number);
const near = (a: number[], b: number[]) => a.every((x, i) => Math.abs(x - b[i]) <= 2);

test('heatmap drawn as rects: values, SVG and PNG exports whose cells are the widget\'s colours', async () => {
  expect(await page.evaluate(() => (document.getElementById('small') as unknown as { valueAt(r: number, c: number): number }).valueAt(1, 1))).toBe(0.75);
  const e = await exportOf('small');
  expect(e).toMatchObject({ parses: true, type: 'image/png', size: e.expected });
  expect(e.rects).toHaveLength(4);
  for (const r of e.rects) expect(near(r.png, rgb(r.fill!)), `${r.fill} drawn as ${r.png}`).toBe(true);
});

test('heatmap drawn as an image: the PNG holds its cells (viridis from #440154 to #fde725)', async () => {
  const e = await exportOf('large');
  expect(e).toMatchObject({ parses: true, type: 'image/png', size: e.expected, rects: [] });
  const [first, last] = e.corners!;
  expect(near(first, [68, 1, 84]), `first cell ${first}`).toBe(true);
  expect(near(last, [253, 231, 37]), `last cell ${last}`).toBe(true);
});

test('regression: attnlab loaded, a finite curve drawn and exported', async () => {
  const r = await page.evaluate(() => {
    const el = document.getElementById('reg') as unknown as { result: { output: Float32Array }; points: unknown[] };
    return { n: el.points.length, finite: Array.from(el.result.output).every(Number.isFinite) };
  });
  expect(r).toEqual({ n: 20, finite: true });
  const e = await exportOf('reg');
  expect(e).toMatchObject({ parses: true, type: 'image/png', size: e.expected });
  expect(e.paths).toBeGreaterThan(0);
  expect(e.colours).toBeGreaterThan(20);  // curve, points, axes and text, antialiased: not a blank picture
});

/** Clicks the widget's SVG or PNG button and returns the file Firefox saved, once whole. */
async function downloaded(id: string, kind: 'svg' | 'png'): Promise<{ name: string; bytes: Buffer }> {
  const name = `${id}.${kind}`;
  await page.evaluate((id) => document.getElementById(id)!.setAttribute('filename', id), id);
  await (await page.$(`#${id} >>> button[aria-label$=" as ${kind.toUpperCase()}"]`))!.click();
  // Firefox reserves the name with an empty file, writes name.part and renames it over that.
  await expect.poll(async () => {
    const files = await readdir(downloads);
    return files.includes(name) && !files.includes(`${name}.part`) && (await readFile(join(downloads, name))).length > 0;
  }, { timeout: 15_000 }).toBe(true);
  return { name, bytes: await readFile(join(downloads, name)) };
}

test('the SVG and PNG buttons save files: the SVG is the widget\'s export and parses, the PNG decodes at its size', async () => {
  for (const id of ['small', 'reg']) {
    const svg = await downloaded(id, 'svg');
    const s = await page.evaluate((id, text) => {
      const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
      return {
        parses: doc.documentElement.localName === 'svg' && !doc.querySelector('parsererror'),
        same: text === (document.getElementById(id) as unknown as { toSVG(): string }).toSVG(),
      };
    }, id, svg.bytes.toString('utf8'));
    expect(s, svg.name).toEqual({ parses: true, same: true });

    const png = await downloaded(id, 'png');
    expect([...png.bytes.subarray(0, 8)], png.name).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(png.bytes.length, png.name).toBeGreaterThan(2000);  // a picture, not an empty canvas
    // IHDR, the first chunk: width and height, big-endian, twice the viewBox.
    const ihdr = [png.bytes.readUInt32BE(16), png.bytes.readUInt32BE(20)];
    const p = await page.evaluate(async (id, base64) => {
      const live = document.getElementById(id)!.shadowRoot!.querySelector('svg') as SVGSVGElement;
      const bitmap = await createImageBitmap(await (await fetch(`data:image/png;base64,${base64}`)).blob());
      return { decoded: [bitmap.width, bitmap.height], expected: [Math.ceil(live.viewBox.baseVal.width * 2), Math.ceil(live.viewBox.baseVal.height * 2)] };
    }, id, png.bytes.toString('base64'));
    expect({ ihdr, decoded: p.decoded }, png.name).toEqual({ ihdr: p.expected, decoded: p.expected });
  }
  expect((await readdir(downloads)).sort()).toEqual(['reg.png', 'reg.svg', 'small.png', 'small.svg']);
});

test('no fault shown in any widget, no console errors or warnings', async () => {
  const faults = await page.evaluate(() => ['small', 'large', 'reg'].map((id) => document.getElementById(id)!.shadowRoot!.querySelector('.fault:not([hidden])')?.textContent ?? ''));
  expect(faults).toEqual(['', '', '']);
  expect(problems).toEqual([]);
});
