// <attn-model-view>'s column titles as a reader meets them: BERT-base's 12 heads in a 640 px column,
// or a model's 4 heads on a 360 px phone with the browser's text at 28 px. 'Head 10 Head 11' ran
// into each other there; no title may touch another, and where they fit each says 'Head n'.
import { expect, test } from 'vitest';
import { useWidgetPage } from './widget-page';

const widgetPage = useWidgetPage();

/** The model view's texts as drawn, at `width` CSS px with the reader's font at `fontSize`, `heads` heads in 2 layers. */
async function titles(width: number, fontSize: number, heads: number): Promise<{ texts: string[]; touching: string[] }> {
  const ctx = await widgetPage.browser.newContext({ viewport: { width, height: 900 } });
  try {
    const page = await ctx.newPage();
    const cdp = await ctx.newCDPSession(page);
    await cdp.send('Page.enable');
    await cdp.send('Page.setFontSizes', { fontSizes: { standard: fontSize } });
    await page.goto(widgetPage.url);
    await page.waitForFunction(() => customElements.get('attn-model-view') !== undefined);
    return await page.evaluate(async (nh) => {
      const T = 6;
      const layer = Array.from({ length: nh }, (_, h) => Array.from({ length: T }, (_, i) => Array.from({ length: T }, (_, j) => (i === (j + h) % T ? 1 : 0))));
      const mv = document.createElement('attn-model-view') as HTMLElement & { data: unknown };
      mv.setAttribute('tokens', 'a b c d e f');
      mv.data = [layer, layer];
      document.getElementById('stage')!.append(mv);
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      const boxes = [...mv.shadowRoot!.querySelectorAll('svg text')].map((t) => ({ text: t.textContent!, r: t.getBoundingClientRect() }));
      const touching: string[] = [];
      for (const [i, a] of boxes.entries()) for (const b of boxes.slice(i + 1)) {
        if (a.r.left < b.r.right && b.r.left < a.r.right && a.r.top < b.r.bottom && b.r.top < a.r.bottom) touching.push(`'${a.text}' and '${b.text}'`);
      }
      return { texts: boxes.map((b) => b.text), touching };
    }, heads);
  } finally {
    await ctx.close();
  }
}

test('12 heads in 640 px and 4 heads on a phone at 28 px text: no column title touches another; "Head n" where it fits', async () => {
  const wide = await titles(1280, 16, 12);
  expect(wide.touching).toEqual([]);
  expect(wide.texts).toEqual([...Array.from({ length: 12 }, (_, h) => `Head ${h + 1}`), 'Layer 1', 'Layer 2']);
  for (const [width, font, heads] of [[640, 16, 12], [360, 28, 4], [360, 32, 4]]) {
    const narrow = await titles(width, font, heads);
    expect({ width, font, touching: narrow.touching }).toEqual({ width, font, touching: [] });
    // Every head still has its number over its column, and 'Head' is said once, in the corner.
    expect(narrow.texts).toEqual(['Head', ...Array.from({ length: heads }, (_, h) => String(h + 1)), 'Layer 1', 'Layer 2']);
  }
  expect(widgetPage.v.problems).toEqual([]);
});
