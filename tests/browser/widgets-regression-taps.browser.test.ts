// <attn-regression> under quick taps on empty space: a reader who taps twice (or three times)
// quickly on an empty spot means to add a point there, not to add one and take it away again.
import { describe, expect, test } from 'vitest';
import { touchScreen, useWidgetPage } from './widget-page';

const widgetPage = useWidgetPage();
const { v } = widgetPage;

describe('quick taps on empty space', () => {
  test('two or three quick taps on an empty spot add one point and keep it; a later double tap on it removes it', async () => {
    const { ctx, page, frames, tap } = await touchScreen(widgetPage, '<attn-regression id="r" points="[[1,1],[4,2]]"></attn-regression>');
    try {
      const count = () => page.evaluate(() => (document.getElementById('r') as unknown as { points: unknown[] }).points.length);
      /** The page point at data x on the first point's level (y = 1): empty, away from x = 1 and 4. */
      const spot = (x: number) => page.evaluate((x) => {
        const root = document.getElementById('r')!.shadowRoot!;
        const svg = root.querySelector('svg')!;
        const rect = svg.getBoundingClientRect();
        const vb = svg.viewBox.baseVal;
        // The x axis's tick labels (whole numbers, centred) give the data-to-SVG scale.
        const tick = (t: string) => Number([...svg.querySelectorAll('text[text-anchor="middle"]')].find((n) => n.textContent === t)!.getAttribute('x'));
        const sx = tick('1') + (x - 1) * (tick('2') - tick('1'));
        const sy = Number(root.querySelector('circle[data-index="0"]')!.getAttribute('cy'));
        return [rect.left + (sx * rect.width) / vb.width, rect.top + (sy * rect.height) / vb.height];
      }, x);
      // An empty spot at x = 2.5, on the first point's line: far (over 16 px) from both points.
      const [ex, ey] = await spot(2.5);

      await tap(ex, ey);
      await tap(ex, ey, 80);
      await frames();
      expect(await count()).toBe(3);
      await page.waitForTimeout(600);

      // Three quick taps on another empty spot: still one more point, kept.
      const [fx, fy] = await spot(3.3);
      await tap(fx, fy);
      await tap(fx, fy, 80);
      await tap(fx, fy, 80);
      await frames();
      expect(await count()).toBe(4);
      await page.waitForTimeout(400);
      expect(await count()).toBe(4);

      // Later, a double tap on a point made that way removes it (the double tap still works).
      await tap(fx, fy);
      await tap(fx, fy, 80);
      await frames();
      expect(await count()).toBe(3);
      const left = await page.evaluate(() => (document.getElementById('r') as unknown as { points: { x: number }[] }).points.map((p) => Math.round(p.x * 10) / 10));
      expect(left).toEqual([1, 4, 2.5]);
    } finally {
      await ctx.close();
    }
    expect(v.problems).toEqual([]);
  });

  test('a mouse double-click on an empty spot adds one point; a double-click on a point removes it', async () => {
    const { page } = v;
    await widgetPage.stage('<attn-regression id="r" points="[[1,1],[4,2]]"></attn-regression>');
    await page.waitForFunction(() => (document.getElementById('r') as unknown as { result: unknown }).result !== null, undefined, { timeout: 45_000 });
    const frames = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const xs = () => page.evaluate(() => (document.getElementById('r') as unknown as { points: { x: number }[] }).points.map((p) => Math.round(p.x * 10) / 10));
    const [ex, ey] = await page.evaluate(() => {
      const c = document.getElementById('r')!.shadowRoot!.querySelectorAll('circle.pt');
      const a = c[0].getBoundingClientRect(), b = c[1].getBoundingClientRect();
      return [(a.x + b.x + b.width) / 2, a.y + a.height / 2];
    });
    /** A double-click as a hand makes one: the page draws between its clicks. */
    const dblclick = async (x: number, y: number) => {
      await page.mouse.move(x, y);
      for (const clickCount of [1, 2]) {
        await page.mouse.down({ clickCount });
        await page.mouse.up({ clickCount });
        await frames();
      }
    };
    await dblclick(ex, ey);
    expect((await xs()).length).toBe(3);
    await page.waitForTimeout(600);
    await dblclick(ex, ey);
    await frames();
    expect(await xs()).toEqual([1, 4]);
    expect(v.problems).toEqual([]);
  });
});
