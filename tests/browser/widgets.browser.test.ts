// The widgets as a course author would use them: a plain HTML page (no bundler, no import map)
// that loads only the built package's dist/components/index.js, served without COOP/COEP.
// Checks that each element draws, reads its attributes, answers the keyboard and the mouse,
// fires its events and exports SVG and PNG.
import { readFile } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { axe, launch, repoRoot, screenshot, visit, type Visit } from './helpers';
import { serveStatic, type StaticServer } from './static-server';

let browser: Browser;
let server: StaticServer;
let v: Visit;

beforeAll(async () => {
  [browser, server] = await Promise.all([launch(), serveStatic(repoRoot, false)]);
  v = await visit(browser, `${server.url}tests/browser/fixtures/widgets.html`);
  await v.page.waitForFunction(() => (document.getElementById('reg') as unknown as { result: unknown }).result !== null, undefined, { timeout: 45_000 });
});

afterAll(async () => {
  await v?.page.close();
  await browser?.close();
  await server?.close();
});

describe('widgets from dist/ in a plain page', () => {
  test('load only the package: the regression widget loaded attnlab itself', async () => {
    const urls = await v.page.evaluate(() => performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname));
    expect(urls.every((u) => u.startsWith('/dist/'))).toBe(true);
    const r = await v.page.evaluate(() => {
      const el = document.getElementById('reg') as unknown as { result: { output: Float32Array; kernel: string; bandwidth: number }; points: unknown[] };
      return { n: el.points.length, kernel: el.result.kernel, h: el.result.bandwidth, finite: Array.from(el.result.output).every(Number.isFinite) };
    });
    expect(r).toEqual({ n: 30, kernel: 'epanechnikov', h: 0.4, finite: true });
  });

  test('regression: keyboard picks, moves, adds and removes points', async () => {
    const { page } = v;
    const pts = () => page.evaluate(() => (document.getElementById('reg') as unknown as { points: { x: number; y: number }[] }).points);
    const before = await pts();
    await page.locator('#reg .plot').focus();
    await page.keyboard.press('PageDown'); // picks point 1 of 30
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowUp');
    const moved = await pts();
    expect(moved[0].y).toBeGreaterThan(before[0].y);
    expect(moved[0].x).toBe(before[0].x);
    await page.keyboard.press('a');
    expect(await pts()).toHaveLength(31);
    await page.keyboard.press('Delete');
    expect(await pts()).toHaveLength(30);
    await expect.poll(() => page.locator('#reg .readout').textContent()).toMatch(/point \d+ of 30/);
  });

  test('regression: where a compact kernel reaches no training point there is no prediction: the line breaks', async () => {
    const { page } = v;
    // Two clusters far apart, a boxcar narrower than the gap between them.
    const r = await page.evaluate(async () => {
      const el = document.getElementById('reg') as unknown as HTMLElement & { points: { x: number; y: number }[]; kernel: string; bandwidth: number; result: { queries: Float32Array; weights: Float32Array } };
      const before = { points: el.points, kernel: el.kernel, bandwidth: el.bandwidth };
      el.points = [{ x: -2.5, y: 1 }, { x: -2.4, y: 1.2 }, { x: 2.4, y: 3 }, { x: 2.5, y: 3.1 }];
      el.kernel = 'boxcar';
      el.bandwidth = 0.3;
      await new Promise((done) => setTimeout(done, 500));
      const d = el.shadowRoot!.querySelector('svg path[stroke-width="2.5"]')!.getAttribute('d')!;
      Object.assign(el, before);
      return { segments: d.split('M').length - 1 };
    });
    expect(r.segments).toBe(2);
  });

  test('regression: the points property takes [x, y] pairs, as the attribute and the README do', async () => {
    const r = await v.page.evaluate(() => {
      const el = document.getElementById('reg') as unknown as HTMLElement & { points: unknown[] };
      const before = el.points;
      el.points = [[1, 1], [2, 3], { x: 4, y: 2 }];
      const after = { points: el.points, problem: el.shadowRoot!.textContent!.includes('points:') };
      el.points = before;
      return after;
    });
    expect(r).toEqual({ points: [{ x: 1, y: 1 }, { x: 2, y: 3 }, { x: 4, y: 2 }], problem: false });
  });

  test('heatmap: attributes, hover read-out, click to pin, keyboard', async () => {
    const { page } = v;
    expect(await page.evaluate(() => (document.getElementById('heat') as unknown as { valueAt(r: number, c: number): number }).valueAt(2, 3))).toBe(0.8);
    const pins: unknown[] = [];
    await page.exposeFunction('__pin', (d: unknown) => pins.push(d));
    await page.evaluate(() => document.getElementById('heat')!.addEventListener('attn-pin', (e) => (window as unknown as { __pin(d: unknown): void }).__pin((e as CustomEvent).detail)));
    const cells = page.locator('#heat rect[fill^="rgb"]');
    expect(await cells.count()).toBe(12);
    await cells.nth(5).hover();
    await expect.poll(() => page.locator('#heat .readout').textContent()).toContain('suis → am: 0.8500');
    await cells.nth(5).click();
    await expect.poll(() => pins.length).toBe(1);
    expect(pins[0]).toMatchObject({ row: 1, col: 1, value: 0.85, rowLabel: 'suis', colLabel: 'am' });
    // Keyboard: focus starts on the pinned cell; move right, pin with Enter.
    await page.locator('#heat .plot').focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Enter');
    await expect.poll(() => pins.length).toBe(2);
    expect(pins[1]).toMatchObject({ row: 1, col: 2, value: 0.05 });
  });

  test('heatmap: Page Up/Down move 10 rows, Home/End to the row\'s ends, Ctrl+Home/End to the corners; each announced as arrows are', async () => {
    const { page } = v;
    await page.evaluate(() => {
      const el = document.createElement('attn-heatmap') as HTMLElement & { data: number[][] };
      el.id = 'heat-keys';
      el.data = Array.from({ length: 25 }, (_, i) => Array.from({ length: 6 }, (_, j) => (i * 6 + j) / 150));
      document.querySelector('main')!.append(el);
    });
    const readout = () => page.evaluate(() => document.getElementById('heat-keys')!.shadowRoot!.querySelector('.plot + .readout')!.textContent);
    const live = () => page.evaluate(() => document.getElementById('heat-keys')!.shadowRoot!.querySelector('[aria-live]')!.textContent);
    const scrollY = () => page.evaluate(() => window.scrollY);
    try {
      await page.locator('#heat-keys .plot').focus();
      const seen: [string, string | null, string | null][] = [];
      for (const key of ['ArrowRight', 'PageDown', 'PageDown', 'PageDown', 'PageUp', 'End', 'Home', 'Control+End', 'Control+Home']) {
        await page.keyboard.press(key);
        seen.push([key, await readout(), await live()]);
      }
      // Rows and columns are 0-based labels; cell (i, j) holds (6i + j) / 150.
      expect(seen.map(([k, r]) => [k, r])).toEqual([
        ['ArrowRight', '0 → 1: 0.0067'],
        ['PageDown', '10 → 1: 0.4067'],
        ['PageDown', '20 → 1: 0.8067'],
        ['PageDown', '24 → 1: 0.9667'],
        ['PageUp', '14 → 1: 0.5667'],
        ['End', '14 → 5: 0.5933'],
        ['Home', '14 → 0: 0.5600'],
        ['Control+End', '24 → 5: 0.9933'],
        ['Control+Home', '0 → 0: 0.0000'],
      ]);
      expect(seen.every(([, r, l]) => r === l)).toBe(true);
      // The keys are the widget's: Ctrl+Home did not also scroll the page to its top.
      await page.evaluate(() => window.scrollTo(0, 200));
      const y = await scrollY();
      expect(y).toBeGreaterThan(0);
      await page.keyboard.press('Control+End');
      await page.keyboard.press('PageUp');
      expect(await scrollY()).toBe(y);
      expect(await page.locator('#heat-keys .plot').getAttribute('aria-label')).toContain('Page Up and Down, Home and End (with Control: first and last cell) move');
    } finally {
      await page.evaluate(() => document.getElementById('heat-keys')!.remove());
    }
  });

  test('heatmap: a key before the first frame is answered and announced at once', async () => {
    // Added, focused and pressed in one task, so no frame can draw the view in between.
    const got = await v.page.evaluate(() => {
      const el = document.createElement('attn-heatmap') as HTMLElement & { data: number[][] };
      el.data = [[0.1, 0.2], [0.3, 0.4]];
      document.querySelector('main')!.append(el);
      try {
        const root = el.shadowRoot!, plot = root.querySelector<HTMLElement>('.plot')!;
        plot.focus();
        plot.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowDown', bubbles: true, cancelable: true }));
        return [root.querySelector('.plot + .readout')!.textContent, root.querySelector('[aria-live]')!.textContent];
      } finally {
        el.remove();
      }
    });
    expect(got).toEqual(['1 → 0: 0.3000', '1 → 0: 0.3000']);
  });

  test('head view: click toggles a head, double-click solos it', async () => {
    const { page } = v;
    const state = () => page.evaluate(() => {
      const el = document.getElementById('hv') as unknown as { activeHeads: number[]; lineCount: number };
      return { active: el.activeHeads, lines: el.lineCount };
    });
    await expect.poll(async () => (await state()).lines).toBeGreaterThan(0);
    const all = await state();
    await page.click('#hv button[data-head="1"]');
    await expect.poll(async () => (await state()).active).toEqual([0]);
    // The lines redraw on the next frame, after activeHeads changes: poll for them too.
    await expect.poll(async () => (await state()).lines).toBeLessThan(all.lines);
    await page.dblclick('#hv button[data-head="1"]');
    await expect.poll(async () => (await state()).active).toEqual([1]);
    // Keyboard: Shift+Enter on head 1's button solos it.
    await page.focus('#hv button[data-head="0"]');
    await page.keyboard.press('Shift+Enter');
    await expect.poll(async () => (await state()).active).toEqual([0]);
  });

  test('model view: Enter on a thumbnail enlarges it', async () => {
    const { page } = v;
    await page.focus('#mv g[data-layer="1"][data-head="0"]');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => (document.getElementById('mv') as unknown as { selected: unknown }).selected)).toEqual({ layer: 1, head: 0 });
    await expect.poll(() => page.locator('#mv .detail').isVisible()).toBe(true);
  });

  test('model view: one Tab stop for the grid (arrows move it); Close puts focus back on the thumbnail', async () => {
    const { page } = v;
    // The test above left layer 2, head 1 enlarged.
    const tabStops = () => page.evaluate(() => [...document.getElementById('mv')!.shadowRoot!.querySelectorAll('g[tabindex="0"]')].map((g) => `${g.getAttribute('data-layer')}/${g.getAttribute('data-head')}`));
    await expect.poll(tabStops).toEqual(['1/0']);
    expect(await page.locator('#mv g[role=button]').count()).toBe(4);
    // Enter moved focus into the enlarged view: back to the grid.
    await page.focus('#mv g[data-layer="1"][data-head="0"]');
    await page.keyboard.press('ArrowRight');
    expect(await tabStops()).toEqual(['1/1']);
    await page.keyboard.press('ArrowLeft');
    await page.focus('#mv .detail button');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => (document.getElementById('mv') as unknown as { selected: unknown }).selected)).toBe(null);
    const focused = await page.evaluate(() => {
      const mv = document.getElementById('mv')!;
      const a = mv.shadowRoot!.activeElement;
      return document.activeElement === mv && a ? `${a.getAttribute('data-layer')}/${a.getAttribute('data-head')}` : String(document.activeElement?.localName);
    });
    expect(focused).toBe('1/0');
    expect(await page.evaluate(() => document.getElementById('mv')!.shadowRoot!.querySelector('.sr[aria-live]')!.textContent)).toBe('Layer 2, head 1 closed');
  });

  test('export buttons are named after the widget\'s label; live regions speak for keys, not for hovers or resizes', async () => {
    const { page } = v;
    await page.evaluate(() => document.getElementById('heat')!.setAttribute('label', 'Alignment'));
    expect(await page.locator('#heat button[aria-label="Download Alignment as PNG"]').count()).toBe(1);
    const live = (id: string) => page.evaluate((x) => [...document.getElementById(x)!.shadowRoot!.querySelectorAll('[aria-live]')].map((e) => e.textContent).join('|'), id);
    const before = { heat: await live('heat'), hv: await live('hv') };
    await page.locator('#heat rect[fill^="rgb"]').nth(2).hover();
    await page.locator('#hv text[data-side="left"]').first().hover();
    await page.setViewportSize({ width: 900, height: 900 });
    await expect.poll(() => page.evaluate(() => document.getElementById('heat')!.shadowRoot!.querySelector('.plot + .readout')!.textContent)).toContain('→');
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    expect({ heat: await live('heat'), hv: await live('hv') }).toEqual(before);
    await page.mouse.move(0, 0);
    await page.locator('#hv .plot').focus();
    await page.keyboard.press('ArrowDown');
    await expect.poll(() => live('hv')).toMatch(/^query “the”/);
    await page.keyboard.press('Escape');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  test('beam tree: shared prefixes merge, the best hypothesis is chosen', async () => {
    const { page } = v;
    const texts = await page.locator('#beams svg text').allTextContents();
    expect(texts.filter((t) => t === 'i')).toHaveLength(1); // one node for the shared first word
    expect(texts.filter((t) => t === 'am')).toHaveLength(1);
    expect(await page.evaluate(() => (document.getElementById('beams') as unknown as { chosen: number }).chosen)).toBe(0);
    await page.locator('#beams .plot').focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await expect.poll(() => page.locator('#beams .readout').textContent()).toContain('i am student');
  });

  test('beam tree: the chosen property sets the hypothesis drawn bold (0-based), as the attribute does; null gives the best back', async () => {
    const r = await v.page.evaluate(async () => {
      const el = document.getElementById('beams') as unknown as HTMLElement & { chosen: number | null };
      const bold = async () => {
        await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
        return [...el.shadowRoot!.querySelectorAll('svg text')].filter((t) => Number(getComputedStyle(t).fontWeight) >= 600).map((t) => t.textContent).sort();
      };
      el.chosen = 2;
      const set = { chosen: el.chosen, attribute: el.getAttribute('chosen'), bold: await bold() };
      // One it cannot use is refused, and the one set is kept.
      const refused = [3, -1, 1.5, '1'].map((bad) => {
        try {
          el.chosen = bad as number;
          return 'taken';
        } catch (e) {
          return (e as Error).message;
        }
      });
      Object.assign(set, { refused, kept: el.chosen });
      el.chosen = null;
      return { set, reset: { chosen: el.chosen, attribute: el.getAttribute('chosen'), bold: await bold() } };
    });
    expect(r.set).toEqual({
      chosen: 2, attribute: '2', bold: ['<bos>', 'i', 'study'], kept: 2,
      refused: ['3', '-1', '1.5', "'1'"].map((got) => `attn-beam-tree.chosen: expected null or a hypothesis number from 0 to 2 (0-based), got ${got}`),
    });
    expect(r.reset).toEqual({ chosen: 0, attribute: null, bold: ['<bos>', 'a', 'am', 'i', 'student'] });
  });

  test('translate: drives any object with the translator API; steps and flags unknown words', async () => {
    const { page } = v;
    // A test double with the documented API (the real translators live in the library).
    await page.evaluate(() => {
      const el = document.getElementById('tr') as unknown as { translator: unknown };
      el.translator = {
        translate: async (text: string, opts: { beam: number }) => ({
          text: 'i am a student',
          sourceTokens: [...text.split(' ').slice(0, 2), '<unk>'],
          targetTokens: ['i', 'am', 'a', 'student'],
          attention: { data: new Float32Array([0.9, 0.05, 0.05, 0.1, 0.8, 0.1, 0.1, 0.2, 0.7, 0.05, 0.05, 0.9]), shape: [4, 3] },
          beams: opts.beam > 1 ? [{ tokens: ['i', 'am', 'a', 'student'], score: -1 }, { tokens: ['i', 'am', 'student'], score: -2 }] : undefined,
        }),
      };
    });
    await page.evaluate(() => document.getElementById('tr')!.setAttribute('beam', '2'));
    await page.click('#tr button[type=submit]');
    await expect.poll(() => page.locator('#tr .readout').first().textContent()).toContain('Unknown to the model: <unk>');
    expect(await page.locator('#tr .tok.unk').count()).toBe(1);
    await page.click('#tr button[aria-label="Previous step"]');
    await page.click('#tr button[aria-label="Previous step"]');
    const s = await page.evaluate(() => {
      const el = document.getElementById('tr') as unknown as { step: number; shadowRoot: ShadowRoot };
      const heat = el.shadowRoot.querySelector('attn-heatmap') as unknown as { mask: boolean[][]; pinned: { row: number; col: number } };
      return { step: el.step, masked: heat.mask.map((r) => r[0]), pinned: heat.pinned && { row: heat.pinned.row, col: heat.pinned.col } };
    });
    expect(s).toEqual({ step: 1, masked: [false, false, true, true], pinned: { row: 1, col: 1 } });
    expect(await page.locator('#tr attn-beam-tree').isVisible()).toBe(true);
  });

  test('exports: SVG text and PNG bytes; a theme="dark" widget exports dark', async () => {
    const { page } = v;
    const out = await page.evaluate(async () => {
      const ids = ['reg', 'heat', 'dark', 'hv', 'mv', 'beams'];
      const res: Record<string, { svg: number; png: number; dark: boolean }> = {};
      for (const id of ids) {
        const el = document.getElementById(id) as unknown as { toSVG(): string; toPNG(): Promise<Blob> };
        const svg = el.toSVG();
        const png = await el.toPNG();
        res[id] = { svg: svg.length, png: png.size, dark: svg.includes('#1c1d24') };
      }
      return res;
    });
    for (const [id, r] of Object.entries(out)) {
      expect(r.svg, id).toBeGreaterThan(300);
      expect(r.png, id).toBeGreaterThan(500);
      expect(r.dark, id).toBe(id === 'dark');
    }
  });

  test('translate: exports the alignment as SVG and PNG, from code and from its buttons', async () => {
    const { page } = v;
    // The translate test above left a result (source 'je suis <unk>', output 'i am a student').
    const out = await page.evaluate(async () => {
      const el = document.getElementById('tr') as unknown as { toSVG(): string; toPNG(): Promise<Blob>; setStep(t: number): void; step: number; shadowRoot: ShadowRoot };
      const colored = (svg: string) => new DOMParser().parseFromString(svg, 'image/svg+xml').querySelectorAll('rect[fill^="rgb"]').length;
      // The export is the picture as shown: at step 1 the later output rows are still hidden.
      const atStep1 = el.step === 1 ? colored(el.toSVG()) : -1;
      el.setStep(3);
      const svg = el.toSVG();
      const png = await el.toPNG();
      const bitmap = await createImageBitmap(png);
      const vb = (el.shadowRoot.querySelector('attn-heatmap')!.shadowRoot!.querySelector('svg') as SVGSVGElement).viewBox.baseVal;
      const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
      return {
        atStep1,
        parses: doc.documentElement.localName === 'svg' && !doc.querySelector('parsererror'),
        texts: [...doc.querySelectorAll('text')].map((t) => t.textContent),
        cells: doc.querySelectorAll('rect[fill^="rgb"]').length,
        type: png.type,
        size: [bitmap.width, bitmap.height],
        expected: [Math.ceil(vb.width * 2), Math.ceil(vb.height * 2)],
      };
    });
    expect(out.parses).toBe(true);
    // Its labels are the tokens (the markup-like '<unk>' as text), its cells the 4 x 3 alignment.
    for (const t of ['je', 'suis', '<unk>', 'i', 'am', 'student']) expect(out.texts).toContain(t);
    expect(out.cells).toBe(12);
    expect(out.atStep1).toBe(6);
    expect(out.type).toBe('image/png');
    expect(out.size).toEqual(out.expected);
    // The SVG button downloads the same picture, named after the element.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#tr button[aria-label="Download Alignment as SVG"]')]);
    expect(download.suggestedFilename()).toBe('attn-translate.svg');
    const saved = await readFile((await download.path())!, 'utf8');
    expect(saved).toMatch(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(saved).toContain('&lt;unk&gt;');
    const [png] = await Promise.all([page.waitForEvent('download'), page.click('#tr button[aria-label="Download Alignment as PNG"]')]);
    expect(png.suggestedFilename()).toBe('attn-translate.png');
    const bytes = await readFile((await png.path())!);
    expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  });

  test('a widget with no theme attribute follows prefers-color-scheme; theme="light" does not', async () => {
    const { page } = v;
    const look = () => page.evaluate(() => {
      const read = (id: string) => {
        const el = document.getElementById(id) as unknown as HTMLElement & { toSVG(): string };
        return { bg: getComputedStyle(el).getPropertyValue('--bg').trim(), svgDark: el.toSVG().includes('#1c1d24') };
      };
      return { heat: read('heat'), tr: read('tr'), pinned: read('dark') };
    });
    const light = await look();
    expect(light.heat).toEqual({ bg: '#ffffff', svgDark: false });
    try {
      await page.emulateMedia({ colorScheme: 'dark' });
      await expect.poll(async () => (await look()).heat.bg).toBe('#1c1d24');
      const dark = await look();
      expect(dark.heat.svgDark).toBe(true);
      expect(dark.tr).toEqual({ bg: '#1c1d24', svgDark: true });
      expect(dark.pinned.svgDark).toBe(true); // theme="dark" stays dark either way
      // An explicit theme="light" wins over the system's dark.
      await page.evaluate(() => document.getElementById('heat')!.setAttribute('theme', 'light'));
      await expect.poll(async () => (await look()).heat).toEqual({ bg: '#ffffff', svgDark: false });
      await screenshot(page, 'widgets-plain-page-dark');
    } finally {
      await page.evaluate(() => document.getElementById('heat')!.removeAttribute('theme'));
      await page.emulateMedia({ colorScheme: 'light' });
    }
    await expect.poll(async () => (await look()).heat.bg).toBe('#ffffff');
  });

  test('resizing the page redraws the widgets at the new width', async () => {
    const { page } = v;
    const width = () => page.evaluate(() => (document.getElementById('reg')!.shadowRoot!.querySelector('svg') as SVGSVGElement).viewBox.baseVal.width);
    const w0 = await width();
    await page.setViewportSize({ width: 600, height: 900 });
    await expect.poll(width).toBeLessThan(w0);
  });

  test('no console errors, no serious axe findings', async () => {
    await screenshot(v.page, 'widgets-plain-page');
    expect(await axe(v.page)).toEqual([]);
    expect(v.problems).toEqual([]);
  });
});
