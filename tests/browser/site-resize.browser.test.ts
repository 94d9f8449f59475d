// The built demo site as a learner resizes it: a window dragged narrower and wider, a phone turned
// on its side. The pages with line charts (site/chart.ts) redraw them at the new width; that must
// not surface as an error: the site shows every uncaught window error in a page-wide alert.
import { describe, expect, test } from 'vitest';
import { pageProblems } from './helpers';
import { useSite } from './site-server';

const site = useSite('site-resize');

// The pages that draw a line chart, and its id.
const PAGES = { pooling: 'loss-chart', scoring: 'saturation', efficient: 'cost-chart', performance: 'bench-chart' };
// From the 1280 px desktop: widths a chart's box crosses by far more than the 8 px that redraws it
// (phone, phone on its side, tablet), ending on the phone, where a chart is drawn at its box's width.
const SIZES: [number, number][] = [[360, 740], [740, 360], [1024, 700], [500, 900], [360, 740]];

describe('site resized', () => {
  for (const [file, chart] of Object.entries(PAGES)) {
    test(`${file}: resizing the window and turning a phone leave no error on the page or in the console`, async () => {
      const ctx = await site.browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: 'block' });
      try {
        const page = await ctx.newPage();
        const problems = pageProblems(page);
        await page.goto(`${site.isolated.url}${file}.html`);
        await page.waitForSelector('body[data-result="ok"]', { timeout: 60_000 });
        for (const [width, height] of SIZES) {
          await page.setViewportSize({ width, height });
          // Two frames: the resize's observers run, then whatever they scheduled.
          await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
          await page.waitForTimeout(100);
        }
        expect({ alert: await page.evaluate(() => document.getElementById('page-error')?.textContent ?? null), problems }).toEqual({ alert: null, problems: [] });
        // The chart still follows its box: redrawn at the phone's width, not left at the desktop's drawing, shrunk.
        const [drawnWidth, box] = await page.$eval(`#${chart}`, (s) => [(s as SVGSVGElement).viewBox.baseVal.width, s.clientWidth]);
        expect(box).toBeLessThan(360);
        expect(Math.abs(drawnWidth - box)).toBeLessThanOrEqual(8);
      } finally {
        await ctx.close();
      }
    });
  }
});
