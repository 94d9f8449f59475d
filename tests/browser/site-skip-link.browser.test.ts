// The site's "Skip to content" link at large text on a narrow screen (180 CSS px: a 360 px phone at
// 200% zoom, with the browser's text at 24 or 32 px): out of sight until focused, then wholly on
// the screen. Moved up by a fixed 3rem, it wrapped taller than that and showed over the header.
import { describe, expect, test } from 'vitest';
import { useSite } from './site-server';

const site = useSite('site-skip-link');

describe('skip link', () => {
  for (const fontSize of [16, 24, 32]) {
    test(`180 px wide, ${fontSize} px text: hidden until the first Tab, then inside the screen`, async () => {
      const ctx = await site.browser.newContext({ viewport: { width: 180, height: 700 }, serviceWorkers: 'block' });
      try {
        const page = await ctx.newPage();
        await page.goto(`${site.isolated.url}index.html`);
        // The text size is set for the page's own process (a cross-origin isolated page gets a new one), then reloaded.
        const cdp = await ctx.newCDPSession(page);
        await cdp.send('Page.enable');
        await cdp.send('Page.setFontSizes', { fontSizes: { standard: fontSize } });
        await page.reload();
        await page.waitForSelector('body[data-result="ok"]', { timeout: 60_000 });
        const box = () => page.$eval('a.skip', (a) => {
          const r = a.getBoundingClientRect();
          return { top: Math.round(r.top), bottom: Math.round(r.bottom), left: Math.round(r.left), right: Math.round(r.right), font: getComputedStyle(a).fontSize };
        });
        const hidden = await box();
        expect(hidden.font).toBe(`${fontSize}px`);
        expect(hidden.bottom).toBeLessThanOrEqual(0);
        await page.keyboard.press('Tab');
        expect(await page.evaluate(() => document.activeElement?.className)).toBe('skip');
        const shown = await box();
        expect(shown.top).toBeGreaterThanOrEqual(0);
        expect(shown.left).toBeGreaterThanOrEqual(0);
        expect(shown.right).toBeLessThanOrEqual(180);
      } finally {
        await ctx.close();
      }
    });
  }
});
