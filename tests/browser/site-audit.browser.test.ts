// The built demo site where things go wrong for a learner: a Worker that cannot start (its script
// not reachable, as offline before the page ever ran it) must be said, and leave Run usable.
import { describe, expect, test } from 'vitest';
import { pageProblems } from './helpers';
import { useSite } from './site-server';

const site = useSite('site-audit');

// page, its Run button, its Cancel button, its status line, the Worker script's name.
const WORKERS: [string, string, string, string, string][] = [
  ['pooling', 'train', 'cancel', 'train-status', 'train'],
  ['efficient', 'run-cost', 'cancel-cost', 'cost-status', 'efficient'],
  ['performance', 'run', 'cancel', 'bench-status', 'bench'],
];

describe('site audit', () => {
  for (const [file, run, cancel, status, script] of WORKERS) {
    test(`${file}: a Worker that cannot start is said in the status and the page's error; Run is usable again, with focus`, async () => {
      const ctx = await site.browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: 'block' });
      try {
        await ctx.route(new RegExp(`/assets/${script}\\.worker-[^/]*\\.js$`), (r) => r.abort());
        const page = await ctx.newPage();
        const problems = pageProblems(page);
        await page.goto(`${site.isolated.url}${file}.html`);
        await page.waitForSelector('body[data-result="ok"]', { timeout: 60_000 });
        await page.focus(`#${run}`);
        await page.keyboard.press('Enter');
        await page.waitForFunction((id) => /failed/i.test(document.getElementById(id)!.textContent!), status, { timeout: 20_000 });
        expect(await page.textContent(`#${status}`)).toMatch(/failed to start/);
        expect(await page.evaluate(() => document.getElementById('page-error')?.textContent ?? '')).toMatch(/worker failed/);
        expect(await page.evaluate(([r, c]) => [(document.getElementById(r) as HTMLButtonElement).disabled, (document.getElementById(c) as HTMLButtonElement).disabled], [run, cancel])).toEqual([false, true]);
        expect(await page.evaluate(() => document.activeElement?.id)).toBe(run);
        // The aborted script and the page's own report of it are the failures expected.
        expect(problems.filter((p) => !/Failed to load resource|^console error: \w+ worker failed$/.test(p))).toEqual([]);
      } finally {
        await ctx.close();
      }
    });
  }

  test("charts: the picture's accessible description gives the numbers plotted (the label alone named the axes); an empty chart says so", async () => {
    const ctx = await site.browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: 'block' });
    try {
      const page = await ctx.newPage();
      const problems = pageProblems(page);
      const cdp = await ctx.newCDPSession(page);
      /** The accessible description of the image named `name`, as Chromium gives it to a screen reader. */
      const description = async (name: string) => {
        const { nodes } = await cdp.send('Accessibility.getFullAXTree') as { nodes: { role?: { value: string }; name?: { value: string }; description?: { value: string } }[] };
        return nodes.find((n) => n.role?.value === 'image' && n.name?.value === name)?.description?.value ?? '';
      };
      await page.goto(`${site.isolated.url}scoring.html`);
      await page.waitForSelector('body[data-result="ok"]', { timeout: 60_000 });
      await page.waitForFunction(() => document.querySelectorAll('#saturation path[data-series]').length === 4);
      const plotted = await page.$$eval('#saturation path[data-series]', (ps) => ps.map((p) => [p.getAttribute('data-series')!, JSON.parse(p.getAttribute('data-points')!) as [number, number][]] as const));
      const said = await description('Mean largest attention weight against dimension for the four scores');
      expect(said).toMatch(/^mean largest weight by dimension d\. /);
      for (const [name, points] of plotted) {
        expect(points).toHaveLength(9);
        expect(said).toContain(`${name}: ${points.map(([x, y]) => `${Number(y.toPrecision(3))} at ${x}`).join(', ')}`);
      }
      await page.goto(`${site.isolated.url}pooling.html`);
      await page.waitForSelector('body[data-result="ok"]', { timeout: 60_000 });
      expect(await description('Training loss by step')).toBe('Train the bandwidth to plot its loss here.');
      expect(problems).toEqual([]);
    } finally {
      await ctx.close();
    }
  });

  test('charts: the sizes on the x axis read in full (1024, 2048), each label inside the picture', async () => {
    const ctx = await site.browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: 'block' });
    try {
      const page = await ctx.newPage();
      const problems = pageProblems(page);
      /** The chart's x-axis labels (under the plot), and those whose box passes the picture's edge. */
      const axis = (id: string) => page.evaluate((chart) => {
        const svg = document.getElementById(chart) as unknown as SVGSVGElement;
        const box = svg.getBoundingClientRect();
        const labels = [...svg.querySelectorAll('g > text[text-anchor="middle"]')].filter((t) => !t.hasAttribute('data-empty') && /^[\d.k]+$/.test(t.textContent!));
        return { labels: labels.map((t) => t.textContent), outside: labels.filter((t) => t.getBoundingClientRect().right > box.right + 0.5).map((t) => t.textContent) };
      }, id);
      // 1024 read '1.024k', and 2048 '2.048k' with its 'k' cut at the edge: S = 2.048.
      await page.goto(`${site.isolated.url}efficient.html`);
      await page.waitForSelector('body[data-result="ok"]', { timeout: 60_000 });
      expect(await axis('cost-chart')).toEqual({ labels: ['256', '512', '1024', '2048'], outside: [] });
      await page.goto(`${site.isolated.url}performance.html#preset=full`);
      await page.waitForSelector('body[data-result="ok"]', { timeout: 60_000 });
      expect(await axis('bench-chart')).toEqual({ labels: ['64', '128', '256', '512', '1024'], outside: [] });
      expect(problems).toEqual([]);
    } finally {
      await ctx.close();
    }
  });

  test('translation: a beam width from the URL that the slider rounds (#beam=2.5) is the one the widget decodes with', async () => {
    const ctx = await site.browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: 'block' });
    try {
      const page = await ctx.newPage();
      const problems = pageProblems(page);
      await page.goto(`${site.isolated.url}translation.html#beam=2.5`);
      await page.waitForFunction(() => document.body.dataset.api === 'ready', undefined, { timeout: 90_000 });
      const widget = page.locator('#translate');
      await expect.poll(() => widget.evaluate((w) => (w as unknown as { result: unknown }).result !== null), { timeout: 30_000 }).toBe(true);
      // The slider showed 3 while the widget was given '2.5', refused it and decoded greedily.
      expect(await page.evaluate(() => ({ slider: (document.getElementById('beam') as HTMLInputElement).value, widget: document.getElementById('translate')!.getAttribute('beam') })))
        .toEqual({ slider: '3', widget: '3' });
      expect(await widget.evaluate((w) => w.shadowRoot!.textContent)).toContain('beam width 3');
      expect(problems).toEqual([]);
    } finally {
      await ctx.close();
    }
  });

  test('translation and heads: French is marked French (example sentences, the text box, source and translation; the heads page\'s source), so a screen reader reads it so', async () => {
    const ctx = await site.browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const page = await ctx.newPage();
      const problems = pageProblems(page);
      const langs = () => page.evaluate(() => {
        const root = document.querySelector('attn-translate')!.shadowRoot!;
        return {
          examples: [...document.querySelectorAll('#examples button')].map((b) => b.getAttribute('lang')),
          widget: ['input', '.tokens.src', '.text', '.tokens.out'].map((s) => root.querySelector(s)!.getAttribute('lang')),
        };
      });
      await page.goto(`${site.isolated.url}translation.html`);
      await page.waitForSelector('body[data-result="ok"]', { timeout: 60_000 });
      expect(await langs()).toEqual({ examples: ['fr', 'fr', 'fr', 'fr'], widget: ['fr', 'fr', 'en', 'en'] });
      // The other direction, from its link (a page of its own: a hash change alone loads no model).
      await page.goto('about:blank');
      await page.goto(`${site.isolated.url}translation.html#dir=eng-fra`);
      await page.waitForSelector('body[data-result="ok"]', { timeout: 60_000 });
      await expect.poll(langs, { timeout: 30_000 }).toEqual({ examples: ['en', 'en', 'en', 'en'], widget: ['en', 'en', 'fr', 'fr'] });
      // The heads page's French source and English target.
      await page.goto(`${site.isolated.url}heads.html`);
      await page.waitForSelector('body[data-result="ok"]', { timeout: 60_000 });
      expect(await page.evaluate(() => ['src', 'tgt'].map((id) => document.getElementById(id)!.getAttribute('lang')))).toEqual(['fr', 'en']);
      expect(problems).toEqual([]);
    } finally {
      await ctx.close();
    }
  });
});
