// The widgets' text as a reader who needs it larger meets it: the browser's default font size
// (its text-size setting, here through the DevTools protocol) raised from 16 to 24 px makes every
// widget's text 1.5 times as large, SVG text included, and leaves it as it was at 16 px; and at
// 180 CSS px wide (a 360 px phone zoomed to 200%) nothing in a widget runs past the screen.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { launch, repoRoot } from './helpers';
import { serveStatic, type StaticServer } from './static-server';

let browser: Browser;
let server: StaticServer;

beforeAll(async () => {
  [browser, server] = await Promise.all([launch(), serveStatic(repoRoot, false)]);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const cells = JSON.stringify([[0.9, 0.05, 0.03, 0.02], [0.05, 0.85, 0.05, 0.05], [0.02, 0.03, 0.15, 0.8]]);
const WIDGETS = `
  <attn-heatmap id="heat" row-labels="je suis étudiant" col-labels="I am a student" row-title="output" col-title="source" show-values data="${cells}"></attn-heatmap>
  <attn-head-view id="hv" tokens="the cat sat" data="[[[0.8,0.1,0.1],[0.2,0.7,0.1],[0.3,0.3,0.4]],[[0.1,0.1,0.8],[0.6,0.2,0.2],[0.1,0.8,0.1]]]"></attn-head-view>
  <attn-model-view id="mv" tokens="a b" data="[[[[1,0],[0.5,0.5]],[[0,1],[0.2,0.8]]],[[[0.6,0.4],[0.4,0.6]],[[0.9,0.1],[0.1,0.9]]]]"></attn-model-view>
  <attn-beam-tree id="beams" data='[{"tokens":["i","am","a","student"],"score":-1.2},{"tokens":["i","am","student"],"score":-2.5},{"tokens":["i","study"],"score":-3.1}]'></attn-beam-tree>
  <attn-regression id="reg" kernel="epanechnikov" points="[[1,1],[2,3],[4,2],[4.5,5]]"></attn-regression>
  <attn-translate id="tr" value="je suis étudiant"></attn-translate>`;

/**
 * The widget page at `width` CSS px, the reader's default font size `fontSize`, every widget
 * drawn with data (the translator a test double with the documented API).
 */
async function open(width: number, fontSize: number): Promise<{ ctx: BrowserContext; page: Page; problems: string[] }> {
  const ctx = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await ctx.newPage();
  if (fontSize !== 16) {
    const cdp = await ctx.newCDPSession(page);
    await cdp.send('Page.enable');
    await cdp.send('Page.setFontSizes', { fontSizes: { standard: fontSize } });
  }
  const problems: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  await page.goto(`${server.url}tests/browser/fixtures/widget-faults.html`);
  await page.waitForFunction(() => customElements.get('attn-translate') !== undefined);
  await page.evaluate((html) => { document.getElementById('stage')!.innerHTML = html; }, WIDGETS);
  await page.evaluate(async () => {
    const tr = document.getElementById('tr') as unknown as { translator: unknown; run(): Promise<unknown> };
    tr.translator = {
      translate: () => ({
        // A long word: a narrow screen must break it, not run past it.
        text: 'i am an anticonstitutionally student', sourceTokens: ['je', 'suis', 'anticonstitutionnellement'], targetTokens: ['i', 'am', 'a', 'student'],
        attention: { data: new Float32Array([0.9, 0.05, 0.05, 0.1, 0.8, 0.1, 0.1, 0.2, 0.7, 0.05, 0.05, 0.9]), shape: [4, 3] },
      }),
    };
    await tr.run();
  });
  await page.waitForFunction(() => (document.getElementById('reg') as unknown as { result: unknown }).result !== null, undefined, { timeout: 45_000 });
  // Settled: every widget (and the ones inside the translator) drawn at its width.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  return { ctx, page, problems };
}

/**
 * The size text is drawn at, in CSS px, for a representative of each kind of text in each widget:
 * HTML text's computed font-size; SVG text's times its scale on screen.
 */
function textSizes(): Record<string, number> {
  const SAMPLES: [string, string[]][] = [
    ['heat', ['svg text[data-row]', 'svg text[data-col]', '.cells text', 'svg > text', '.readout', '.bar button']],
    ['hv', ['svg text[data-side]', '.heads button', '.readout']],
    ['mv', ['svg text']],
    ['beams', ['svg text:not([data-leaf])', 'svg text[data-leaf]']],
    ['reg', ['svg g text', 'svg g[fill] > text:last-child', '.readout']],
    ['tr', ['input[type=text]', 'form label', 'form button', '.cap', '.text', '.tok', 'attn-heatmap >>> svg text[data-row]']],
  ];
  const out: Record<string, number> = {};
  for (const [id, selectors] of SAMPLES) {
    for (const sel of selectors) {
      let root: ShadowRoot = document.getElementById(id)!.shadowRoot!;
      const parts = sel.split(' >>> ');
      for (const host of parts.slice(0, -1)) root = root.querySelector(host)!.shadowRoot!;
      const e = root.querySelector(parts[parts.length - 1]);
      if (!e) throw new Error(`#${id}: nothing matches ${sel}`);
      const px = parseFloat(getComputedStyle(e).fontSize);
      const m = e instanceof SVGGraphicsElement ? e.getScreenCTM()! : null;
      out[`${id} ${sel}`] = Math.round((m ? px * Math.hypot(m.a, m.b) : px) * 100) / 100;  // rotated labels too
    }
  }
  return out;
}

/**
 * What runs past the right edge of the screen, through the widgets' shadow roots: any shown
 * element reaching past it that no scrolling box within the screen holds; and the document and
 * each widget host if wider inside than out.
 */
function overflow(): string[] {
  const W = document.documentElement.clientWidth;
  const out: string[] = [];
  const doc = document.scrollingElement!;
  if (doc.scrollWidth > doc.clientWidth) out.push(`document: scrollWidth ${doc.scrollWidth} > ${doc.clientWidth}`);
  const up = (e: Element): Element | null => e.parentElement ?? (e.parentNode instanceof ShadowRoot ? e.parentNode.host : null);
  const name = (e: Element): string => {
    const root = e.getRootNode();
    const own = e.tagName.toLowerCase() + (e.id ? `#${e.id}` : e.getAttribute('class') ? `.${e.getAttribute('class')!.trim().split(/\s+/).join('.')}` : '');
    return root instanceof ShadowRoot ? `${name(root.host)} >>> ${own}` : own;
  };
  const walk = (root: Document | ShadowRoot) => root.querySelectorAll('*').forEach((e) => {
    if (e.shadowRoot) {
      if (e.scrollWidth > e.clientWidth) out.push(`${name(e)}: scrollWidth ${e.scrollWidth} > ${e.clientWidth}`);
      walk(e.shadowRoot);
    }
    const r = e.getBoundingClientRect();
    if (!r.width || !r.height || r.right <= W + 0.5 || !e.checkVisibility({ checkVisibilityCSS: true }) || e.closest('.sr')) return;
    for (let a = up(e); a && a !== document.body; a = up(a)) {
      if (getComputedStyle(a).overflowX !== 'visible' && a.getBoundingClientRect().right <= W + 0.5) return;
    }
    out.push(`${name(e)}: right edge ${Math.round(r.right)} > ${W}`);
  });
  walk(document);
  return out;
}

describe("the widgets' text follows the reader's font size", () => {
  test('at 16 px as before; at 24 px every sample 1.5 times as large (HTML and SVG text, nested widgets too)', async () => {
    const sizes: Record<number, Record<string, number>> = {};
    for (const font of [16, 24]) {
      const p = await open(1000, font);
      sizes[font] = await p.page.evaluate(textSizes);
      expect(p.problems).toEqual([]);
      await p.ctx.close();
    }
    // The sizes the widgets were drawn with before they followed the reader's (px).
    expect(sizes[16]).toEqual({
      'heat svg text[data-row]': 12, 'heat svg text[data-col]': 12, 'heat .cells text': 10, 'heat svg > text': 10, 'heat .readout': 13, 'heat .bar button': 11,
      'hv svg text[data-side]': 13, 'hv .heads button': 11, 'hv .readout': 13,
      'mv svg text': 12,
      'beams svg text:not([data-leaf])': 12, 'beams svg text[data-leaf]': 11,
      'reg svg g text': 11, 'reg svg g[fill] > text:last-child': 11, 'reg .readout': 13,
      'tr input[type=text]': 15, 'tr form label': 13, 'tr form button': 13, 'tr .cap': 12, 'tr .text': 17, 'tr .tok': 15, 'tr attn-heatmap >>> svg text[data-row]': 12,
    });
    const ratios = Object.fromEntries(Object.entries(sizes[24]).map(([k, px]) => [k, Math.round((px / sizes[16][k]) * 100) / 100]));
    expect(ratios).toEqual(Object.fromEntries(Object.keys(sizes[16]).map((k) => [k, 1.5])));
  }, 120_000);
});

describe('at 180 CSS px wide (a 360 px phone at 200% zoom)', () => {
  test.each([16, 24, 32])('default font size %i px: nothing runs past the screen; the beam tree scrolls rather than shrink its text', async (font) => {
    const p = await open(180, font);
    expect(await p.page.evaluate(overflow)).toEqual([]);
    // The beam tree scrolls sideways instead: shrunk to fit, its 12 px text was drawn at 5 px.
    const token = await p.page.evaluate(() => {
      const t = document.getElementById('beams')!.shadowRoot!.querySelector('svg text')! as SVGTextElement;
      return Math.round(parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM()!.a * 100) / 100;
    });
    expect(token).toBe((12 * font) / 16);
    expect(p.problems).toEqual([]);
    await p.ctx.close();
  }, 120_000);
});
