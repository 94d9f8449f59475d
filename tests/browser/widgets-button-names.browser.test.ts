// The widgets' SVG/PNG buttons as a screen reader names them when the author gave no `label`: after
// the widget's own name for its picture ("Download Attention head view as SVG"), the one its SVG
// title carries, not after its tag ("Download attn-head-view as SVG").
import { expect, test } from 'vitest';
import { useWidgetPage } from './widget-page';

const widgetPage = useWidgetPage();

const WIDGETS = `
  <attn-heatmap data="[[0.9,0.1],[0.3,0.7]]"></attn-heatmap>
  <attn-head-view tokens="the cat" data="[[[0.8,0.2],[0.3,0.7]]]"></attn-head-view>
  <attn-model-view tokens="a b" data="[[[[1,0],[0.5,0.5]]]]"></attn-model-view>
  <attn-beam-tree data='[{"tokens":["i","am"],"score":-1},{"tokens":["i","was"],"score":-2}]'></attn-beam-tree>
  <attn-regression points="[[1,1],[2,3],[4,2]]"></attn-regression>
  <attn-translate value="je suis"></attn-translate>
  <attn-heatmap label="Weights" data="[[1]]"></attn-heatmap>`;

test('without a label, each widget\'s buttons are named after its picture\'s title; a label still names both', async () => {
  const { page, problems } = widgetPage.v;
  await widgetPage.stage(WIDGETS);
  // The translator, a test double with the documented API, gives attn-translate a picture to export.
  await page.evaluate(() => {
    (document.querySelector('attn-translate') as unknown as { translator: unknown }).translator = {
      translate: async () => ({ text: 'i am', sourceTokens: ['je', 'suis'], targetTokens: ['i', 'am'], attention: { data: new Float32Array([0.9, 0.1, 0.2, 0.8]), shape: [2, 2] } }),
    };
    (document.querySelector('attn-translate') as HTMLElement).shadowRoot!.querySelector<HTMLButtonElement>('button[type=submit]')!.click();
  });
  // Each widget's buttons' names, and whether its picture's name (its SVG's <title> or aria-label,
  // possibly followed by a description) starts with the same name.
  const read = () => page.evaluate(() => [...document.getElementById('stage')!.children].map((w) => {
    const root = w.shadowRoot!;
    const buttons = [...root.querySelectorAll('.bar button')].map((b) => b.getAttribute('aria-label') ?? '');
    const name = buttons[0]?.replace(/^Download (.*) as SVG$/, '$1') ?? '';
    const svg = [...root.querySelectorAll('svg')].find((e) => e.querySelector(':scope > title') || e.hasAttribute('aria-label'));
    const title = svg ? svg.querySelector(':scope > title')?.textContent ?? svg.getAttribute('aria-label') : null;
    return { tag: w.localName, buttons, titled: w.localName === 'attn-translate' ? null : title === null ? 'not drawn' : title.startsWith(name) };
  }));
  await expect.poll(async () => (await read()).every((w) => w.titled !== 'not drawn' && w.buttons.length === 2)).toBe(true);
  const button = (name: string) => [`Download ${name} as SVG`, `Download ${name} as PNG`];
  expect(await read()).toEqual([
    { tag: 'attn-heatmap', buttons: button('Attention weights'), titled: true },
    { tag: 'attn-head-view', buttons: button('Attention head view'), titled: true },
    { tag: 'attn-model-view', buttons: button('Attention by layer and head'), titled: true },
    { tag: 'attn-beam-tree', buttons: button('Beam search hypotheses'), titled: true },
    { tag: 'attn-regression', buttons: button('Nadaraya-Watson regression'), titled: true },
    // Its buttons export the alignment heatmap; its label attribute names its text box.
    { tag: 'attn-translate', buttons: button('Alignment'), titled: null },
    { tag: 'attn-heatmap', buttons: button('Weights'), titled: true },
  ]);
  expect(problems).toEqual([]);
});
