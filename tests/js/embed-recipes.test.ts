// The embed page's recipes as functions of a view's hash: each carries the state the page shows,
// including the page's own defaults where the hash is silent. (tests/browser/embed.browser.test.ts
// runs the generated HTML in Chromium.)
import { describe, expect, test } from 'vitest';
import { iframeSnippet, mystBlock, notebookCell, quartoBlock, widgetMarkup } from '../../web/demo/embed-recipes';
import { decodePoints, encodePoints } from '../../web/demo/site/view-state';

const view = (s: string) => new URLSearchParams(s);

describe('widgetMarkup: a view as one widget, in its state', () => {
  test('pooling: kernel, bandwidth and the seeded sample; points placed by hand replace the sample', () => {
    expect(widgetMarkup('pooling.html', view('kernel=boxcar&h=0.250&n=12&seed=7')))
      .toBe('<attn-regression kernel="boxcar" bandwidth="0.25" n="12" seed="7"></attn-regression>');
    // What the page shows for values its controls cannot: their defaults.
    expect(widgetMarkup('pooling.html', view('kernel=cosine&h=9&n=150&seed=-1')))
      .toBe('<attn-regression kernel="gaussian" bandwidth="0.5" n="40" seed="0"></attn-regression>');
    expect(widgetMarkup('pooling.html', view('')))
      .toBe('<attn-regression kernel="gaussian" bandwidth="0.5" n="40"></attn-regression>');
    const pts = encodePoints([{ x: -1, y: 0.5 }, { x: 2.25, y: -0.75 }]);
    expect(widgetMarkup('pooling.html', view(`kernel=gaussian&h=0.3&n=12&seed=7&pts=${pts}`)))
      .toBe('<attn-regression kernel="gaussian" bandwidth="0.3" points="[[-1,0.5],[2.25,-0.75]]"></attn-regression>');
  });

  test('heads: the sentence, the part (encoder, decoder or cross), layer and heads counted from 1; the page default sentence', () => {
    expect(widgetMarkup('heads.html', view('src=il+pleut+.&kind=decoder&layer=1&heads=0.2')))
      .toBe('<attn-head-view model="fra-eng" text="il pleut ." part="decoder" layer="2" heads="1 3"></attn-head-view>\n'
        + '<attn-model-view model="fra-eng" text="il pleut ." part="decoder"></attn-model-view>');
    // The page's first layer where the hash names none, and where it names one its menu lacks:
    // the trained model has 2 layers, and #layer=5 (or 1.5) opened the page on its first, while
    // the recipe wrote layer="6", which the widget refuses.
    for (const hash of ['kind=cross', 'kind=cross&layer=5', 'kind=cross&layer=1.5', 'kind=cross&layer=-1']) {
      expect(widgetMarkup('heads.html', view(hash)))
        .toBe('<attn-head-view model="fra-eng" text="le chien est assis sur la chaise ." part="cross" layer="1"></attn-head-view>\n'
          + '<attn-model-view model="fra-eng" text="le chien est assis sur la chaise ." part="cross"></attn-model-view>');
    }
    // The untrained comparison has random weights: no widget shows it, the page is framed instead.
    expect(widgetMarkup('heads.html', view('model=untrained&kind=encoder'))).toBeNull();
  });

  test("translation: direction, model, beam and text; without text, the direction's first example", () => {
    expect(widgetMarkup('translation.html', view('dir=eng-fra&arch=gru&beam=3&text=We+are+late.')))
      .toBe('<attn-translate model="eng-fra" arch="gru" beam="3" value="We are late."></attn-translate>');
    // The beam width the page's slider shows: whole, 1 to 8.
    expect(widgetMarkup('translation.html', view('dir=xx&arch=lstm&beam=2.5')))
      .toBe('<attn-translate model="fra-eng" arch="transformer" beam="3" value="je suis étudiant ."></attn-translate>');
    expect(widgetMarkup('translation.html', view('beam=12')))
      .toBe('<attn-translate model="fra-eng" arch="transformer" beam="1" value="je suis étudiant ."></attn-translate>');
    expect(widgetMarkup('translation.html', view('dir=eng-fra')))
      .toBe('<attn-translate model="eng-fra" arch="transformer" value="i am a student ."></attn-translate>');
    expect(widgetMarkup('translation.html', view('')))
      .toBe('<attn-translate model="fra-eng" arch="transformer" value="je suis étudiant ."></attn-translate>');
  });

  test('attribute values are escaped; views of several figures have no widget', () => {
    expect(widgetMarkup('translation.html', view(`text=${encodeURIComponent('a "b" <c> & d')}`)))
      .toContain('value="a &quot;b&quot; &lt;c> &amp; d"');
    for (const page of ['scoring.html', 'positional.html', 'efficient.html', 'performance.html']) expect(widgetMarkup(page, view('x=1'))).toBeNull();
  });
});

describe('the wrappers', () => {
  test('notebook cell, MyST and Quarto blocks hold the HTML unchanged; the iframe keeps its hash', () => {
    const html = '<attn-translate value="l\'été « chaud »\n\\"></attn-translate>';
    const cell = notebookCell(html);
    expect(cell.split('\n')[0]).toBe('from IPython.display import HTML');
    // A Python string literal: JSON's escapes mean the same in Python for these characters.
    expect(JSON.parse(cell.slice(cell.indexOf('HTML(') + 5, -1))).toBe(html);
    expect(mystBlock(html)).toBe('```{raw} html\n' + html + '\n```');
    expect(quartoBlock(html)).toBe('```{=html}\n' + html + '\n```');
    expect(iframeSnippet('https://x.example/a/scoring.html#logd=9&causal=1&embed=1', 'attnlab: Scoring'))
      .toBe('<iframe src="https://x.example/a/scoring.html#logd=9&amp;causal=1&amp;embed=1" title="attnlab: Scoring" width="100%" height="640" style="border: 0" frameborder="0"\n'
        + '  loading="lazy" allow="clipboard-write; cross-origin-isolated"></iframe>');
  });

  test('the points codec round-trips and refuses what is not a list of pairs', () => {
    expect(decodePoints(encodePoints([{ x: 1.234, y: -2 }]))).toEqual([{ x: 1.23, y: -2 }]);
    expect(decodePoints('1_2~x_3')).toBeUndefined();
    expect(decodePoints('1_2_3')).toBeUndefined();
  });
});
