// The tokens' languages where a screen reader meets them: the labels drawn, the read-outs, and the
// live regions that announce a key's or a pin's outcome (a copy of the read-out, which read French
// tokens in the page's English voice when it was copied as text).
import { describe, expect, test } from 'vitest';
import { useWidgetPage } from './widget-page';

const { v, stage } = useWidgetPage();

/** The widget's live region (the polite one every widget has) as `text[lang]` pieces, its text pieces bare. */
const live = (sel: string) => v.page.evaluate((s) => {
  const region = document.querySelector(s)!.shadowRoot!.querySelector('.sr[aria-live]')!;
  return [...region.childNodes].map((n) => (n instanceof Element ? `${n.textContent}[${n.getAttribute('lang')}]` : n.textContent)).join('');
}, sel);

/** Each language (fr, en, none) the texts `q` in the widget `sel`'s shadow root are in, as the browser resolves it. */
const langsOf = (sel: string, q: string) => v.page.evaluate(([s, query]) => {
  let root: ShadowRoot = document.querySelector(s.split(' ')[0])!.shadowRoot!;
  if (s.includes(' ')) root = root.querySelector(s.split(' ')[1])!.shadowRoot!;
  const lang = (el: Element) => (['fr', 'en'].find((l) => el.matches(`:lang(${l})`)) ?? 'none');
  return [...new Set([...root.querySelectorAll(query)].map(lang))].join(',');
}, [sel, q] as const);

const fault = (sel: string) => v.page.evaluate((s) => document.querySelector(s)!.shadowRoot!.querySelector('.fault')!.textContent, sel);

describe('widgets: the languages of the tokens they read out', () => {
  test("heatmap: a key's announcement keeps the row and column tokens' languages", async () => {
    await stage(`<attn-heatmap id="h" row-lang="fr" col-lang="en" row-labels="je suis" col-labels="I am" data='[[0.9,0.1],[0.2,0.8]]'></attn-heatmap>`);
    await v.page.locator('#h .plot').focus();
    await v.page.keyboard.press('ArrowDown');
    expect(await live('#h')).toBe('suis[fr] → I[en]: 0.2000');
    await v.page.keyboard.press('Enter');
    expect(await live('#h')).toBe('suis[fr] → I[en]: 0.2000 (pinned)');
    expect(v.problems).toEqual([]);
  });

  test('head view: left-lang and right-lang give the labels, the read-out and its announcement their languages; the keys default to the queries', async () => {
    await stage(`<div lang="de"><attn-head-view id="hv" left-lang="fr" tokens="le chat" data='[[[0.7,0.3],[0.2,0.8]]]'></attn-head-view></div>`);
    await expect.poll(() => langsOf('#hv', 'text[data-side]')).toBe('fr');
    await v.page.locator('#hv .plot').focus();
    await v.page.keyboard.press('ArrowDown');
    await expect.poll(() => live('#hv')).toBe('query “le[fr]” — strongest key per head: head 1: le[fr] (0.70)');
    await v.page.evaluate(() => {
      const hv = document.getElementById('hv')!;
      hv.setAttribute('right-lang', 'en');
      hv.setAttribute('right-tokens', 'the cat');
    });
    await expect.poll(() => langsOf('#hv', 'text[data-side="right"]')).toBe('en');
    expect(await langsOf('#hv', 'text[data-side="left"]')).toBe('fr');
    await v.page.keyboard.press('ArrowRight');
    await expect.poll(() => live('#hv')).toBe('key “the[en]” — strongest query per head: head 1: le[fr] (0.70)');
    // The words around the tokens are the page's (de here).
    expect(await langsOf('#hv', '.plot + .readout')).toBe('none');
    await v.page.evaluate(() => document.getElementById('hv')!.setAttribute('left-lang', 'French!'));
    await expect.poll(() => fault('#hv')).toBe("<attn-head-view>: left-lang: expected a language tag such as 'fr' or 'en-GB', got 'French!'; using the page's");
    await expect.poll(() => langsOf('#hv', 'text[data-side="left"]')).toBe('none');
    expect(v.problems).toEqual([]);
  });

  test("head view and model view from a model's attributes: its languages, queries and keys as the part has them", async () => {
    await stage(`<attn-head-view id="hv" src="/web/models/fra-eng-transformer.atl" text="Il fait beau." part="cross"></attn-head-view>
      <attn-model-view id="mv" src="/web/models/fra-eng-transformer.atl" text="Il fait beau." part="cross"></attn-model-view>`);
    await expect.poll(() => langsOf('#hv', 'text[data-side="left"]'), { timeout: 60_000 }).toBe('en');
    expect(await langsOf('#hv', 'text[data-side="right"]')).toBe('fr');
    await expect.poll(() => v.page.evaluate(() => (document.getElementById('mv') as unknown as { data: unknown[] }).data.length), { timeout: 60_000 }).toBeGreaterThan(0);
    await v.page.evaluate(() => (document.getElementById('mv') as unknown as { select(s: unknown): void }).select({ layer: 0, head: 0 }));
    await expect.poll(() => langsOf('#mv attn-heatmap', 'text[data-row]')).toBe('en');
    expect(await langsOf('#mv attn-heatmap', 'text[data-col]')).toBe('fr');
    expect(v.problems).toEqual([]);
  });

  test("beam tree: token-lang gives the tokens drawn, the read-out's and the announcement's their language", async () => {
    await stage(`<div lang="de"><attn-beam-tree id="b" token-lang="fr" data='[{"tokens":["je","suis"],"score":-1},{"tokens":["je","sais"],"score":-2}]'></attn-beam-tree></div>`);
    await expect.poll(() => langsOf('#b', 'svg text:not([data-leaf])')).toBe('fr');
    expect(await langsOf('#b', 'svg text[data-leaf]')).toBe('none');
    await v.page.locator('#b .plot').focus();
    await v.page.keyboard.press('ArrowDown');
    await expect.poll(() => live('#b')).toBe('hypothesis 1: “je suis[fr]”, score -1.000 (chosen)');
    await v.page.evaluate(() => document.getElementById('b')!.setAttribute('token-lang', 'fr_FR'));
    await expect.poll(() => fault('#b')).toBe("<attn-beam-tree>: token-lang: expected a language tag such as 'fr' or 'en-GB', got 'fr_FR'; using the page's");
    expect(v.problems).toEqual([]);
  });

  test("translate: the beam tree's tokens are in the target language, the status's unknown words in the source's", async () => {
    await stage('<attn-translate id="t" beam="2" value="le chat ç"></attn-translate>');
    await v.page.evaluate(() => {
      (document.getElementById('t') as unknown as { translator: unknown }).translator = {
        srcLang: 'fr', tgtLang: 'en',
        translate: async () => ({
          text: 'the cat', sourceTokens: ['le', 'chat', '▁', '<0xC3>', '<0xA7>'], targetTokens: ['the', 'cat'],
          attention: [[0.5, 0.2, 0.1, 0.1, 0.1], [0.1, 0.6, 0.1, 0.1, 0.1]],
          beams: [{ tokens: ['the', 'cat'], score: -1 }, { tokens: ['a', 'cat'], score: -2 }],
        }),
      };
    });
    await expect.poll(() => langsOf('#t attn-beam-tree', 'svg text:not([data-leaf])')).toBe('en');
    expect(await v.page.evaluate(() => [...document.getElementById('t')!.shadowRoot!.querySelector('form + .readout')!.childNodes]
      .map((n) => (n instanceof Element ? `${n.textContent}[${n.getAttribute('lang')}]` : n.textContent)).join('')))
      .toBe('Unknown to the model: ç[fr] (spelled in raw bytes); marked with ?.');
    // The note a screen reader hears after the unknown word's pieces is in the page's language, not the source's.
    expect(await langsOf('#t', '.src .tok .sr')).toBe('en');
    expect(await langsOf('#t', '.src .tok')).toBe('fr');
    expect(v.problems).toEqual([]);
  });
});
