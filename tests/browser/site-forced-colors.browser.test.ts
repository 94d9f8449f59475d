// The built site in forced colours (Windows contrast themes, emulated): box-shadows are dropped
// there, so what the site shows by a shadow needs a border in a system colour as well.
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { pageProblems } from './helpers';
import { useSite } from './site-server';

const site = useSite('site-forced-colors');

/** An edge as a reader sees it: 'bar' (a border of some width, in a colour unlike the page's) or 'none'. */
const edges = (page: Page, selector: string, index = 0) => page.evaluate(([sel, i]) => {
  const el = document.querySelectorAll(sel)[i];
  // The contrast theme's background, read where forced colours leave the author's colour alone.
  const probe = document.body.appendChild(document.createElement('i'));
  probe.style.cssText = 'forced-color-adjust: none; color: Canvas';
  const canvas = getComputedStyle(probe).color;
  probe.remove();
  const cs = getComputedStyle(el);
  const edge = (side: 'Left' | 'Right') => {
    const color = cs.getPropertyValue(`border-${side.toLowerCase()}-color`);
    const shows = parseFloat(cs.getPropertyValue(`border-${side.toLowerCase()}-width`)) > 0 && cs.getPropertyValue(`border-${side.toLowerCase()}-style`) !== 'none'
      && color !== canvas && !/rgba\(.*, 0\)$/.test(color);
    return shows ? 'bar' : 'none';
  };
  return { left: edge('Left'), right: edge('Right'), forced: matchMedia('(forced-colors: active)').matches };
}, [selector, index] as const);

describe('site in forced colours', () => {
  test("the narrow menu's current page keeps its bar (a box-shadow elsewhere)", async () => {
    const ctx = await site.browser.newContext({ viewport: { width: 360, height: 740 }, forcedColors: 'active', serviceWorkers: 'block' });
    try {
      const page = await ctx.newPage();
      const problems = pageProblems(page);
      await page.goto(`${site.isolated.url}pooling.html`);
      await page.waitForSelector('body[data-result="ok"]', { timeout: 90_000 });
      await page.click('header.site button.menu-toggle');
      expect(await edges(page, 'header.site li a[aria-current]')).toEqual({ left: 'bar', right: 'none', forced: true });
      // Its text starts where the other pages' names do: the bar takes its width from the padding.
      const starts = await page.$$eval('header.site li a', (as) => [...new Set(as.map((a) => Math.round(a.getBoundingClientRect().left + parseFloat(getComputedStyle(a).paddingLeft) + parseFloat(getComputedStyle(a).borderLeftWidth))))]);
      expect(starts.length).toBeLessThanOrEqual(2); // two columns of names at 360 px at most
      const current = await page.$eval('header.site li a[aria-current]', (a) => Math.round(a.getBoundingClientRect().left + parseFloat(getComputedStyle(a).paddingLeft) + parseFloat(getComputedStyle(a).borderLeftWidth)));
      expect(starts).toContain(current);
      expect(problems).toEqual([]);
    } finally {
      await ctx.close();
    }
  });

  test('a formula wider than its column at 360 px: a bar at each edge with more past it (a shadow elsewhere); scrolling moves nothing', async () => {
    const ctx = await site.browser.newContext({ viewport: { width: 360, height: 740 }, forcedColors: 'active', serviceWorkers: 'block' });
    try {
      const page = await ctx.newPage();
      const problems = pageProblems(page);
      await page.goto(`${site.isolated.url}index.html`);
      await page.waitForSelector('body[data-result="ok"]', { timeout: 90_000 });
      await page.waitForSelector('math.more-right', { timeout: 5000 });
      const i = await page.$$eval('math[display=block]', (ms) => ms.findIndex((m) => m.classList.contains('more-right')));
      const formula = (await page.$$('math[display=block]'))[i];
      const place = async (to: 'start' | 'middle' | 'end', cls: string, has: boolean) => {
        await formula.evaluate((m, where) => {
          const far = m.scrollWidth - m.clientWidth;
          m.scrollLeft = where === 'start' ? 0 : where === 'end' ? far : Math.floor(far / 2);
        }, to);
        await page.waitForFunction(([m, c, h]) => (m as Element).classList.contains(c as string) === h, [formula, cls, has] as const, { timeout: 2000 });
        return { ...(await edges(page, 'math[display=block]', i)), width: await formula.evaluate((m) => m.getBoundingClientRect().width) };
      };
      const start = await place('start', 'more-left', false);
      const middle = await place('middle', 'more-left', true);
      const end = await place('end', 'more-right', false);
      expect({ start, middle, end }).toEqual({
        start: { left: 'none', right: 'bar', forced: true, width: start.width },
        middle: { left: 'bar', right: 'bar', forced: true, width: start.width },
        end: { left: 'bar', right: 'none', forced: true, width: start.width },
      });
      expect(problems).toEqual([]);
    } finally {
      await ctx.close();
    }
  });
});
