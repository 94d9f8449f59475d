// The built demo site as a learner on a phone meets it: a 360 x 740 touch screen (isMobile,
// hasTouch), light and dark, prefers-reduced-motion: reduce. Every page: no sideways scrolling,
// text contrast (SVG text included, which axe-core skips) and tap targets (WCAG 2.5.8); the main
// interaction by touch; the reader's own font size honoured.
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { lowContrastText } from './contrast';
import { eachTwoAtATime, settled } from './helpers';
import { useSite } from './site-server';

const PAGES = ['index', 'pooling', 'scoring', 'positional', 'heads', 'efficient', 'translation', 'models', 'performance', 'embed'];
const PHONE = { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true, reducedMotion: 'reduce', serviceWorkers: 'block' } as const;

const site = useSite('site-mobile');

interface Phone {
  ctx: BrowserContext;
  page: Page;
  problems: string[];
}

/**
 * A phone-sized page at `path`, ready (body[data-result="ok"]), recording console errors.
 * `fontSize`: the reader's default font size (the browser's text-size setting), 16 px unless given.
 */
async function phone(path: string, colorScheme: 'light' | 'dark' = 'light', fontSize = 16): Promise<Phone> {
  const ctx = await site.browser.newContext({ ...PHONE, colorScheme });
  const page = await ctx.newPage();
  if (fontSize !== 16) {
    const cdp = await ctx.newCDPSession(page);
    await cdp.send('Page.enable');
    await cdp.send('Page.setFontSizes', { fontSizes: { standard: fontSize, fixed: Math.round(fontSize * 13 / 16) } });
  }
  const problems: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  await page.goto(`${site.isolated.url}${path}`);
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

interface Audit {
  scrollWidth: number;
  wide: string[];
  lowContrast: string[];
  smallTargets: string[];
  animations: string[];
}

/**
 * Measures the page as it is (all of it, not only what is on screen), through open shadow roots:
 * elements reaching past the 360 px screen that no scrolling box holds; targets under 24 x 24 px
 * whose 24 px circle meets another target (2.5.8's spacing rule; a checkbox counts with its
 * label, links inside a sentence are exempt); running animations. measure() adds text contrast.
 */
/** audit(), and text below WCAG AA contrast (contrast.ts). */
async function measure(page: Page): Promise<Audit> {
  return { ...(await page.evaluate(audit)), lowContrast: await page.evaluate(lowContrastText) };
}

function audit(): Omit<Audit, 'lowContrast'> {
  const all: Element[] = [];
  const walk = (root: Document | ShadowRoot) => root.querySelectorAll('*').forEach((e) => { all.push(e); if (e.shadowRoot) walk(e.shadowRoot); });
  walk(document);
  const up = (e: Element): Element | null => e.parentElement ?? (e.parentNode instanceof ShadowRoot ? e.parentNode.host : null);
  const name = (e: Element): string => {
    const root = e.getRootNode();
    const own = e.tagName.toLowerCase() + (e.id ? `#${e.id}` : e.getAttribute('class') ? `.${e.getAttribute('class')!.trim().split(/\s+/).join('.')}` : '');
    return root instanceof ShadowRoot ? `${name(root.host)} >>> ${own}` : own;
  };
  const shown = (e: Element) => e.checkVisibility({ checkVisibilityCSS: true }) && !e.closest('.visually-hidden, .sr, .skip');
  const W = screen.width;

  const wide = all.filter((e) => {
    if (!shown(e)) return false;
    const r = e.getBoundingClientRect();
    if (!r.width || !r.height || (r.right <= W + 1 && r.left >= -1)) return false;
    for (let a = up(e); a && a !== document.body; a = up(a)) {
      const q = a.getBoundingClientRect();
      if (getComputedStyle(a).overflowX !== 'visible' && q.right <= W + 1 && q.left >= -1) return false;
    }
    return true;
  }).map((e) => `${name(e)} [${Math.round(e.getBoundingClientRect().left)}, ${Math.round(e.getBoundingClientRect().right)}]`);

  const TARGET = 'a[href], button, input:not([type=hidden]), select, textarea, summary, [role=button], [tabindex]:not([tabindex="-1"])';
  const targets = all.filter((e) => e.matches(TARGET) && shown(e)).map((e) => {
    const q = e.getBoundingClientRect();
    let box = { l: q.left, t: q.top, r: q.right, b: q.bottom };
    if (e instanceof HTMLInputElement && (e.type === 'checkbox' || e.type === 'radio')) {
      for (const label of e.labels ?? []) {
        const m = label.getBoundingClientRect();
        box = { l: Math.min(box.l, m.left), t: Math.min(box.t, m.top), r: Math.max(box.r, m.right), b: Math.max(box.b, m.bottom) };
      }
    }
    const inSentence = e.tagName === 'A' && getComputedStyle(e).display === 'inline'
      && [...(up(e)?.childNodes ?? [])].some((n) => n !== e && n.nodeType === Node.TEXT_NODE && n.textContent!.trim());
    return { e, box, x: (box.l + box.r) / 2, y: (box.t + box.b) / 2, small: !inSentence && (box.r - box.l < 24 || box.b - box.t < 24), exempt: inSentence };
  }).filter((t) => t.box.r > t.box.l);
  const smallTargets = targets.filter((t) => t.small && targets.some((o) => o !== t && !o.e.contains(t.e) && !t.e.contains(o.e) && (
    Math.hypot(Math.max(o.box.l - t.x, 0, t.x - o.box.r), Math.max(o.box.t - t.y, 0, t.y - o.box.b)) < 12
    || (o.small && Math.hypot(o.x - t.x, o.y - t.y) < 24))))
    .map((t) => `${name(t.e)} ${Math.round(t.box.r - t.box.l)}x${Math.round(t.box.b - t.box.t)}`);

  const animations = document.getAnimations().filter((a) => a.playState === 'running').map((a) => String((a.effect as KeyframeEffect | null)?.target?.tagName));
  return { scrollWidth: document.scrollingElement!.scrollWidth, wide, smallTargets, animations };
}

describe('the site on a phone', () => {

  test.each(['light', 'dark'] as const)('every page, %s: nothing past the 360 px screen, text contrast AA, tap targets 24 px or spaced, no running animation, no console errors', async (scheme) => {
    const found: Record<string, Partial<Audit> & { problems?: string[] }> = {};
    await eachTwoAtATime(PAGES, async (file) => {
      const p = await phone(`${file}.html`, scheme);
      await settled(p.page);  // widgets draw on an animation frame; first results land just after ready
      const a = await measure(p.page);
      const bad: Partial<Audit> & { problems?: string[] } = {};
      if (a.scrollWidth > 360) bad.scrollWidth = a.scrollWidth;
      for (const k of ['wide', 'lowContrast', 'smallTargets', 'animations'] as const) if (a[k].length) bad[k] = a[k];
      if (p.problems.length) bad.problems = p.problems;
      if (Object.keys(bad).length) found[file] = bad;
      await p.ctx.close();
    });
    expect(found).toEqual({});
  }, 300_000);
  test('200% text (a 32 px default font size): the site follows it, and no page runs past the screen or cuts off a title', async () => {
    const found: Record<string, unknown> = {};
    await eachTwoAtATime(PAGES, async (file) => {
      const p = await phone(`${file}.html`, 'light', 32);
      await settled(p.page);
      const root = await p.page.evaluate(() => getComputedStyle(document.documentElement).fontSize);
      const a = await p.page.evaluate(audit);
      const bad = { ...(root !== '32px' ? { root } : {}), ...(a.scrollWidth > 360 ? { scrollWidth: a.scrollWidth } : {}), ...(a.wide.length ? { wide: a.wide.slice(0, 5) } : {}) };
      if (Object.keys(bad).length) found[file] = bad;
      await p.ctx.close();
    });
    expect(found).toEqual({});
  }, 300_000);

  test('charts: their text is drawn at 11 px on the phone (not shrunk with the drawing), and twice that at a 32 px default font', async () => {
    const sizes: Record<string, [number, number]> = {};
    const runs = [16, 32].flatMap((fontSize) => ['pooling', 'scoring', 'efficient', 'performance'].map((file) => [fontSize, file] as const));
    await eachTwoAtATime(runs, async ([fontSize, file]) => {
      const p = await phone(`${file}.html`, 'light', fontSize);
      await settled(p.page);  // the charts drawn
      // The size a chart's text reaches the screen at: its font size times the drawing's scale.
      const px = await p.page.$$eval('svg.chart', (charts) => charts.filter((c) => c.checkVisibility()).flatMap((c) => {
        const scale = c.getBoundingClientRect().width / c.viewBox.baseVal.width;
        return [...c.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale);
      }));
      expect(px.length, file).toBeGreaterThan(5);
      const [lo, hi] = sizes[file] ?? [Infinity, 0];
      sizes[file] = fontSize === 16 ? [Math.min(...px), hi] : [lo, Math.min(...px)];
      await p.ctx.close();
    });
    for (const [file, [at16, at32]] of Object.entries(sizes)) {
      expect(at16, `${file} at 16 px`).toBeGreaterThanOrEqual(10.9);
      expect(at32 / at16, `${file}: 32 px over 16 px`).toBeCloseTo(2, 1);
    }
  }, 300_000);

  test('the header: one row (the name and a Menu button), not the five rows the path took; 200% text, a fifth of the screen', async () => {
    const heights: Record<string, number> = {};
    for (const [file, font] of [['pooling', 16], ['index', 16], ['pooling', 32]] as const) {
      const p = await phone(`${file}.html`, 'light', font);
      heights[`${file} ${font}px`] = await p.page.evaluate(() => document.querySelector('header.site')!.getBoundingClientRect().height);
      await p.ctx.close();
      expect(p.problems).toEqual([]);
    }
    // One row is 3.2rem (51.2 px) and a border; a second row (a wrapped link, 23 px, or the
    // button under the name) would pass 64. Unfolded the path took 188 px here, 633 px at 200% text.
    expect(heights['pooling 16px']).toBeLessThanOrEqual(64);
    expect(heights['index 16px']).toBeLessThanOrEqual(64);
    expect(heights['pooling 32px']).toBeLessThanOrEqual(740 / 5);
  }, 120_000);

  test('the Menu button: a tap opens and closes the path, which then meets the tap-target and contrast rules, light and dark', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      const p = await phone('scoring.html', scheme);
      const { page } = p;
      const state = () => page.evaluate(() => {
        const b = document.querySelector<HTMLButtonElement>('header.site button.menu-toggle')!;
        const links = [...document.querySelectorAll<HTMLAnchorElement>('header.site nav a')];
        return {
          expanded: b.getAttribute('aria-expanded'),
          controls: document.getElementById(b.getAttribute('aria-controls')!)?.contains(links[0]) ?? false,
          shown: links.filter((a) => a.checkVisibility() && a.getBoundingClientRect().right <= innerWidth).length,
          theme: document.getElementById('theme-select')!.checkVisibility(),
        };
      });
      expect(await state()).toEqual({ expanded: 'false', controls: true, shown: 0, theme: false });
      await page.tap('header.site button.menu-toggle');
      expect(await state()).toEqual({ expanded: 'true', controls: true, shown: 9, theme: true });
      const a = await measure(page);
      expect({ lowContrast: a.lowContrast, smallTargets: a.smallTargets, scrollWidth: a.scrollWidth }).toEqual({ lowContrast: [], smallTargets: [], scrollWidth: 360 });
      expect(await page.getAttribute('header.site nav a[aria-current="page"]', 'href')).toBe('./scoring.html');
      await page.tap('header.site button.menu-toggle');
      expect(await state()).toEqual({ expanded: 'false', controls: true, shown: 0, theme: false });
      // The stylesheet folds the path only while its button says so: without the button, it shows.
      await page.evaluate(() => document.querySelector('header.site button.menu-toggle')!.remove());
      expect(await page.evaluate(() => [...document.querySelectorAll('header.site nav a')].filter((x) => x.checkVisibility()).length)).toBe(9);
      await p.ctx.close();
      expect(p.problems).toEqual([]);
    }
  }, 120_000);

  test('the Menu button by keyboard: Enter and Space open it, Tab reaches every page and the theme switch, Escape closes it and returns focus', async () => {
    const p = await phone('heads.html');
    const { page } = p;
    const focused = () => page.evaluate(() => {
      const e = document.activeElement!;
      return e.matches('button.menu-toggle') ? `Menu ${e.getAttribute('aria-expanded')}` : e.getAttribute('href') ?? e.id;
    });
    const hrefs = ['./pooling.html', './scoring.html', './heads.html', './translation.html', './models.html', './positional.html', './efficient.html', './performance.html', './embed.html'];
    await page.keyboard.press('Tab'); // Skip to content
    await page.keyboard.press('Tab'); // the site name
    expect(await focused()).toBe('./index.html');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('Menu false');
    await page.keyboard.press('Enter');
    expect(await focused()).toBe('Menu true');
    const reached: string[] = [];
    for (let i = 0; i < hrefs.length + 1; i++) {
      await page.keyboard.press('Tab');
      reached.push(await focused());
    }
    expect(reached).toEqual([...hrefs, 'theme-select']);
    expect(await page.evaluate(() => document.activeElement!.getBoundingClientRect().bottom <= innerHeight)).toBe(true);
    await page.keyboard.press('Escape');
    expect(await focused()).toBe('Menu false');
    expect(await page.evaluate(() => document.querySelector('header.site nav a')!.checkVisibility())).toBe(false);
    await page.keyboard.press(' ');
    expect(await focused()).toBe('Menu true');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Escape'); // from a link in the menu
    expect(await focused()).toBe('Menu false');
    await page.keyboard.press(' ');
    await page.keyboard.press('Escape'); // from the button itself
    expect(await focused()).toBe('Menu false');
    // Folded, the next Tab leaves the header for the page.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => Boolean(document.activeElement?.closest('main')))).toBe(true);
    await p.ctx.close();
    expect(p.problems).toEqual([]);
  });

  test('a wide screen keeps the header of one row, path and theme switch in view, no Menu button; embed mode has no header', async () => {
    const ctx = await site.browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: 'block' });
    const page = await ctx.newPage();
    await page.goto(`${site.isolated.url}pooling.html`);
    await page.waitForSelector('body[data-result="ok"]', { timeout: 90_000 });
    expect(await page.evaluate(() => {
      const header = document.querySelector('header.site')!;
      const links = [...header.querySelectorAll('nav a')];
      return {
        button: header.querySelector('button.menu-toggle')!.checkVisibility(),
        shown: links.filter((a) => a.checkVisibility()).length,
        rows: new Set(links.map((a) => Math.round(a.getBoundingClientRect().top))).size,
        theme: document.getElementById('theme-select')!.checkVisibility(),
        height: header.getBoundingClientRect().height,
      };
    })).toEqual({ button: false, shown: 9, rows: 1, theme: true, height: expect.closeTo(52.2, 0) });
    await page.goto(`${site.isolated.url}pooling.html#embed=1`);
    await page.reload();
    await page.waitForSelector('body[data-result="ok"]', { timeout: 90_000 });
    expect(await page.evaluate(() => document.querySelectorAll('header, .menu-toggle, .skip').length)).toBe(0);
    await ctx.close();
  });

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
