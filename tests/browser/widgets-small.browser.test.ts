// Small layout promises of single widgets: <attn-translate>'s export buttons sit by the picture
// they export, in the same order on the screen, in the DOM and for Tab.
import { describe, expect, test } from 'vitest';
import { useWidgetPage } from './widget-page';

const widgetPage = useWidgetPage();
const { v, stage } = widgetPage;

describe('<attn-translate> export buttons', () => {
  test('lie just under the alignment heatmap they export; Tab goes text box, Translate, …, heatmap, SVG, PNG, as they are drawn', async () => {
    const { page } = v;
    await stage('<attn-translate id="tr" value="je suis"></attn-translate>');
    await page.evaluate(() => {
      const el = document.getElementById('tr') as unknown as { translator: unknown };
      // A test double with the documented API (the real translators live in the library).
      el.translator = {
        translate: () => ({
          text: 'i am',
          sourceTokens: ['je', 'suis'],
          targetTokens: ['i', 'am'],
          attention: [[0.9, 0.1], [0.2, 0.8]],
        }),
      };
    });
    await page.waitForFunction(() => {
      const r = document.getElementById('tr')!.shadowRoot!;
      return !(r.querySelector('.bar') as HTMLElement).hidden && r.querySelector('attn-heatmap')!.shadowRoot!.querySelector('svg') !== null;
    });
    const boxes = await page.evaluate(() => {
      const r = document.getElementById('tr')!.shadowRoot!;
      const box = (e: Element) => {
        const b = e.getBoundingClientRect();
        return { top: b.top, bottom: b.bottom, left: b.left, right: b.right };
      };
      return { heatmap: box(r.querySelector('attn-heatmap')!), buttons: [...r.querySelectorAll('.bar button')].map(box), form: box(r.querySelector('form')!) };
    });
    expect(boxes.buttons).toHaveLength(2);
    for (const b of boxes.buttons) {
      // Within 12 px above or below the heatmap's box, and over its width.
      const under = b.top >= boxes.heatmap.bottom - 0.5 && b.top - boxes.heatmap.bottom <= 12;
      const over = b.bottom <= boxes.heatmap.top + 0.5 && boxes.heatmap.top - b.bottom <= 12;
      expect({ under, over, within: b.left >= boxes.heatmap.left - 0.5 && b.right <= boxes.heatmap.right + 0.5 }).toEqual({ under: true, over: false, within: true });
      expect(b.top).toBeGreaterThan(boxes.form.bottom);
    }
    // SVG left of PNG, as Tab reaches them.
    expect(boxes.buttons[0].right).toBeLessThanOrEqual(boxes.buttons[1].left);

    // What Tab reaches, in order, from the text box: a button's text, else the element's name.
    await page.locator('#tr input[type=text]').focus();
    const order: string[] = [];
    for (let i = 0; i < 12; i++) {
      const name = await page.evaluate(() => {
        // Focus anywhere inside the widget (its heatmap's shadow root too) makes it the page's.
        if (document.activeElement !== document.getElementById('tr')) return 'outside';
        let a = document.activeElement!;
        while (a.shadowRoot?.activeElement) a = a.shadowRoot.activeElement;
        return a.localName === 'button' ? a.textContent! : a.localName === 'input' ? `input ${(a as HTMLInputElement).type}` : `${a.localName}.${a.className}`;
      });
      order.push(name);
      if (name === 'outside') break;
      await page.keyboard.press('Tab');
    }
    expect(order).toEqual(['input text', 'Translate', '◀', 'Play', '▶', 'input range', 'div.plot', 'SVG', 'PNG', 'outside']);
    expect(v.problems).toEqual([]);
  });
});
