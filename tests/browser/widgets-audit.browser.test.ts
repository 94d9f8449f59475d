// The widgets as a keyboard user, a screen-reader user and a course author meet them: focus stays
// where an action left it, what a widget says matches what it lets one do.
import { describe, expect, test } from 'vitest';
import { useWidgetPage } from './widget-page';

const widgetPage = useWidgetPage();
const { v, stage } = widgetPage;

/** The focused element through the shadow roots: 'attn-translate>button:Translate'. */
const focused = () => v.page.evaluate(() => {
  let el = document.activeElement;
  const path: string[] = [];
  while (el?.shadowRoot?.activeElement) {
    path.push(el.localName);
    el = el.shadowRoot.activeElement;
  }
  return [...path, `${el?.localName}:${el?.getAttribute('aria-label') ?? el?.textContent ?? ''}`].join('>');
});

describe('widgets audit', () => {
  test('translate: Enter on Translate keeps focus on it while it translates and after; a second Enter meanwhile does nothing', async () => {
    await stage('<attn-translate id="t" value="le chat"></attn-translate>');
    await v.page.evaluate(() => {
      const w = window as unknown as { calls: number; release: () => void };
      w.calls = 0;
      (document.getElementById('t') as unknown as { translator: unknown }).translator = {
        translate: (text: string) => {
          w.calls++;
          const words = text.split(' ');
          const r = { text: 'the cat', sourceTokens: words, targetTokens: ['the', 'cat'], attention: [[0.9, 0.1], [0.2, 0.8]] };
          // The first call (setting the translator) answers at once; the keyboard's waits for release().
          return w.calls === 1 ? r : new Promise((ok) => { w.release = () => ok(r); });
        },
      };
    });
    const calls = () => v.page.evaluate(() => (window as unknown as { calls: number }).calls);
    await expect.poll(calls).toBe(1);
    const go = 'document.getElementById("t").shadowRoot.querySelector("form button")';
    await v.page.evaluate(`${go}.focus()`);
    await v.page.keyboard.press('Enter');
    await expect.poll(calls).toBe(2);
    expect(await focused()).toBe('attn-translate>button:Translate');
    expect(await v.page.evaluate(`${go}.getAttribute('aria-disabled')`)).toBe('true');
    await v.page.keyboard.press('Enter');
    await v.page.evaluate(() => (window as unknown as { release: () => void }).release());
    await expect.poll(() => v.page.evaluate(`${go}.getAttribute('aria-disabled')`)).toBe(null);
    expect(await focused()).toBe('attn-translate>button:Translate');
    expect(await calls()).toBe(2);
    expect(v.problems).toEqual([]);
  });

  test('head view: new data for the same heads (a generated token) keeps focus on the head button it was on; a new head count rebuilds them', async () => {
    await stage(`<attn-head-view id="v" data='[[[0.7,0.3],[0.2,0.8]],[[0.5,0.5],[0.9,0.1]]]' tokens="le chat"></attn-head-view>`);
    await expect.poll(() => v.page.evaluate(() => document.getElementById('v')!.shadowRoot!.querySelectorAll('button[data-head]').length)).toBe(2);
    await v.page.evaluate(() => document.getElementById('v')!.shadowRoot!.querySelector<HTMLElement>('button[data-head="1"]')!.focus());
    await v.page.keyboard.press('Space');
    await v.page.evaluate(() => { (document.getElementById('v') as unknown as { data: unknown }).data = [[[0.6, 0.4], [0.3, 0.7]], [[0.4, 0.6], [0.8, 0.2]]]; });
    await v.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    expect(await focused()).toBe('attn-head-view>button:Head 2');
    // The head hidden by Space stays hidden, and says so.
    expect(await v.page.evaluate(() => [...document.getElementById('v')!.shadowRoot!.querySelectorAll('button[data-head]')].map((b) => b.getAttribute('aria-pressed')))).toEqual(['true', 'false']);
    await v.page.evaluate(() => { (document.getElementById('v') as unknown as { data: unknown }).data = [[[1, 0], [0, 1]], [[1, 0], [0, 1]], [[0, 1], [1, 0]]]; });
    expect(await v.page.evaluate(() => [...document.getElementById('v')!.shadowRoot!.querySelectorAll('button[data-head]')].map((b) => b.getAttribute('aria-pressed')))).toEqual(['true', 'true', 'true']);
    expect(v.problems).toEqual([]);
  });

  test('regression: readonly offers no editing in its name, readout or pointer, and allows none; removed, editing is offered and works', async () => {
    await stage('<attn-regression id="r" n="5" readonly></attn-regression>');
    await v.page.waitForFunction(() => (document.getElementById('r') as unknown as { result: unknown }).result !== null, undefined, { timeout: 45_000 });
    const look = () => v.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))).then(() => v.page.evaluate(() => {
      const root = document.getElementById('r')!.shadowRoot!;
      return {
        name: root.querySelector('.plot')!.getAttribute('aria-label')!,
        readout: root.querySelector('.readout')!.textContent!,
        cursor: getComputedStyle(root.querySelector('circle.pt')!).cursor,
        points: (document.getElementById('r') as unknown as { points: unknown[] }).points.length,
      };
    }));
    const ro = await look();
    expect(ro.name).toMatch(/5 training points, read-only\. Left and right arrows move the query; Page Up and Page Down pick a point\.$/);
    expect(ro.readout).toBe('5 training points. Point at the plot to read the prediction there.');
    expect(ro.cursor).not.toBe('grab');
    await v.page.evaluate(() => document.getElementById('r')!.shadowRoot!.querySelector<HTMLElement>('.plot')!.focus());
    await v.page.keyboard.press('a');
    expect((await look()).points).toBe(5);
    await v.page.evaluate(() => document.getElementById('r')!.removeAttribute('readonly'));
    const rw = await look();
    expect(rw.name).toMatch(/5 training points\. .*A adds a point, Delete removes it\.$/);
    expect(rw.readout).toMatch(/^5 training points\. Drag a point/);
    expect(rw.cursor).toBe('grab');
    await v.page.keyboard.press('a');
    expect((await look()).points).toBe(6);
    expect(v.problems).toEqual([]);
  });

  test('forced colours: the head buttons keep their colour keys; translate still marks the current step and shades the source by attention', async () => {
    await stage(`<attn-head-view id="v" theme="light" data='[[[0.7,0.3],[0.2,0.8]],[[0.5,0.5],[0.9,0.1]]]' tokens="le chat"></attn-head-view>
      <attn-translate id="t" value="le chat noir"></attn-translate>`);
    await v.page.evaluate(() => {
      (document.getElementById('t') as unknown as { translator: unknown }).translator = {
        translate: async (text: string) => ({ text: 'the black cat', sourceTokens: text.split(' '), targetTokens: ['the', 'black', 'cat'],
          attention: [[0.9, 0.05, 0.05], [0.1, 0.2, 0.7], [0.1, 0.8, 0.1]] }),
      };
    });
    await expect.poll(() => v.page.evaluate(() => (document.getElementById('t') as unknown as { result: unknown }).result !== null)).toBe(true);
    await v.page.evaluate(() => (document.getElementById('t') as unknown as { setStep(i: number): void }).setStep(1));
    // The head buttons take their colours as the view draws: drawn now, not on a later frame.
    await v.page.evaluate(() => (document.getElementById('v') as unknown as { renderNow(): void }).renderNow());
    await v.page.emulateMedia({ forcedColors: 'active' });
    try {
      const seen = await v.page.evaluate(() => {
        const hv = document.getElementById('v')!.shadowRoot!;
        const tr = document.getElementById('t')!.shadowRoot!;
        const css = (el: Element) => getComputedStyle(el);
        const probe = document.body.appendChild(document.createElement('i'));
        probe.style.color = 'Canvas';
        const canvas = css(probe).color;
        probe.remove();
        return {
          swatches: [...hv.querySelectorAll('.sw')].map((e) => css(e).backgroundColor),
          canvas,
          out: [...tr.querySelectorAll('.out .tok')].map((e) => css(e).borderTopColor),
          src: [...tr.querySelectorAll('.src .tok')].map((e) => css(e).backgroundColor),
        };
      });
      // The light theme's first two head colours, as the lines are drawn.
      expect(seen.swatches).toEqual(['rgb(53, 89, 224)', 'rgb(217, 72, 15)']);
      // Step 1 of 3: its border alone shows, in another colour than the page's.
      expect(seen.out[1]).not.toBe(seen.out[0]);
      expect(seen.out[0]).toBe(seen.canvas);
      // noir (0.7) shaded most, le (0.1) least: three shades.
      expect(new Set(seen.src).size).toBe(3);
    } finally {
      await v.page.emulateMedia({ forcedColors: 'none' });
    }
    expect(v.problems).toEqual([]);
  });

  test('properties a page sets before the widgets are defined (their module loaded last) are used, as if set after', async () => {
    // The widgets' module at the end of the page, after a classic script that sets properties.
    const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>late</title><link rel="icon" href="data:,"></head><body>
      <attn-heatmap id="h"></attn-heatmap><attn-head-view id="v"></attn-head-view><attn-translate id="t"></attn-translate>
      <attn-beam-tree id="b"></attn-beam-tree><attn-regression id="r"></attn-regression>
      <script>
        document.getElementById('h').data = [[0.1, 0.9], [0.5, 0.5]];
        document.getElementById('h').rowLabels = ['first', 'second'];
        document.getElementById('v').data = [[[0.7, 0.3], [0.2, 0.8]], [[0.5, 0.5], [0.9, 0.1]]];
        document.getElementById('t').value = 'bonjour';
        document.getElementById('b').data = [{ tokens: ['a', 'b'], score: -1 }, { tokens: ['a', 'c'], score: -2 }];
        document.getElementById('r').points = [{ x: 1, y: 1 }, { x: 2, y: 3 }, { x: 3, y: 2 }];
      </script>
      <script type="module" src="/dist/components/index.js"></script></body></html>`;
    const page = await widgetPage.browser.newPage();
    try {
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));
      await page.route('**/late.html', (r) => r.fulfill({ contentType: 'text/html', body: html }));
      await page.goto(new URL('late.html', widgetPage.url).href);
      await page.waitForFunction(() => (document.getElementById('r') as unknown as { result: unknown }).result !== null, undefined, { timeout: 45_000 });
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const seen = await page.evaluate(() => {
        const root = (id: string) => document.getElementById(id)!.shadowRoot!;
        return {
          own: ['h', 'v', 't', 'b', 'r'].flatMap((id) => ['data', 'rowLabels', 'value', 'points'].filter((k) => Object.prototype.hasOwnProperty.call(document.getElementById(id), k)).map((k) => `${id}.${k}`)),
          heatmap: root('h').querySelector('svg')?.textContent ?? '',
          heads: root('v').querySelectorAll('button[data-head]').length,
          text: root('t').querySelector('input')!.value,
          beams: root('b').querySelector('.readout')?.textContent ?? '',
          points: (document.getElementById('r') as unknown as { points: unknown[] }).points.length,
        };
      });
      expect(seen.own).toEqual([]);
      expect(seen.heatmap).toContain('first');
      expect(seen.heads).toBe(2);
      expect(seen.text).toBe('bonjour');
      expect(seen.beams).toMatch(/^2 hypotheses/);
      expect(seen.points).toBe(3);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  test('translate: the Step slider reads out the step, its output token and the source word it attends to most, by keyboard too', async () => {
    await stage('<attn-translate id="t" value="le chat noir"></attn-translate>');
    await v.page.evaluate(() => {
      (document.getElementById('t') as unknown as { translator: unknown }).translator = {
        translate: async (text: string) => ({ text: 'the black cat', sourceTokens: text.split(' '), targetTokens: ['the', 'black', 'cat'],
          attention: [[0.9, 0.05, 0.05], [0.1, 0.2, 0.7], [0.1, 0.8, 0.1]] }),
      };
    });
    await expect.poll(() => v.page.evaluate(() => (document.getElementById('t') as unknown as { result: unknown }).result !== null)).toBe(true);
    const slider = 'document.getElementById("t").shadowRoot.querySelector("input[type=range]")';
    expect(await v.page.evaluate(`${slider}.getAttribute('aria-valuetext')`)).toBe('3 of 3: cat, attending most to chat');
    await v.page.evaluate(`${slider}.focus()`);
    await v.page.keyboard.press('ArrowLeft');
    expect(await v.page.evaluate(`${slider}.getAttribute('aria-valuetext')`)).toBe('2 of 3: black, attending most to noir');
    expect(await v.page.evaluate(() => (document.getElementById('t') as unknown as { step: number }).step)).toBe(1);
    expect(v.problems).toEqual([]);
  });

  test("every widget's exported SVG is titled with its label, and a new label retitles it", async () => {
    await stage(`<attn-heatmap data='[[0.1,0.9]]'></attn-heatmap>
      <attn-head-view data='[[[0.7,0.3],[0.2,0.8]]]' tokens="le chat"></attn-head-view>
      <attn-model-view data='[[[[0.7,0.3],[0.2,0.8]]]]' tokens="le chat"></attn-model-view>
      <attn-beam-tree data='[{"tokens":["a","b"],"score":-1}]'></attn-beam-tree>
      <attn-regression n="5"></attn-regression>`);
    await v.page.waitForFunction(() => (document.querySelector('attn-regression') as unknown as { result: unknown }).result !== null, undefined, { timeout: 45_000 });
    const titles = () => v.page.evaluate(() => [...document.getElementById('stage')!.children].map((e) =>
      /<title>([^<]*)<\/title>/.exec((e as unknown as { toSVG(): string }).toSVG())?.[1] ?? null));
    expect(await titles()).toEqual(['Attention weights', 'Attention head view', 'Attention by layer and head', 'Beam search hypotheses', 'Nadaraya-Watson regression']);
    await v.page.evaluate(() => [...document.getElementById('stage')!.children].forEach((e, i) => e.setAttribute('label', `Figure ${i + 1}`)));
    expect(await titles()).toEqual(['Figure 1', 'Figure 2', 'Figure 3', 'Figure 4', 'Figure 5']);
    // <attn-translate> exports its alignment, titled after the label as its buttons are named.
    await stage('<attn-translate id="t" value="le chat"></attn-translate>');
    await v.page.evaluate(() => {
      (document.getElementById('t') as unknown as { translator: unknown }).translator = {
        translate: async () => ({ text: 'the cat', sourceTokens: ['le', 'chat'], targetTokens: ['the', 'cat'], attention: [[0.9, 0.1], [0.2, 0.8]] }),
      };
    });
    await expect.poll(titles).toEqual(['Alignment: output words (rows) attending to source words (columns)']);
    await v.page.evaluate(() => document.getElementById('t')!.setAttribute('label', 'Exercise 3'));
    expect(await titles()).toEqual(['Exercise 3. Alignment: output words (rows) attending to source words (columns)']);
    expect(await v.page.evaluate(() => document.getElementById('t')!.shadowRoot!.querySelector('.bar button')!.getAttribute('aria-label'))).toBe('Download Exercise 3 as SVG');
    expect(v.problems).toEqual([]);
  });

  test('accessible names count one of a thing in the singular ("1 hypothesis", not "1 hypotheses")', async () => {
    await stage(`<attn-heatmap data='[[1]]'></attn-heatmap><attn-head-view data='[[[1]]]' tokens="a"></attn-head-view>
      <attn-model-view data='[[[[1]]]]' tokens="a"></attn-model-view><attn-beam-tree data='[{"tokens":["a"],"score":-1}]'></attn-beam-tree>`);
    await v.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    expect(await v.page.evaluate(() => [...document.getElementById('stage')!.children].map((e) =>
      e.shadowRoot!.querySelector('.plot, svg[role=group]')!.getAttribute('aria-label')!.split('.')[0]))).toEqual([
      'Attention weights: 1 row by 1 column',
      'Attention head view: 1 query token on the left, 1 key token on the right',
      'Attention by layer and head: 1 layer by 1 head',
      'Beam search hypotheses: 1 hypothesis',
    ]);
    expect(v.problems).toEqual([]);
  });

  test("translate: the unknown word's '?' has AA contrast (4.5:1) on the widget, light and dark", async () => {
    await stage('<attn-translate id="l" theme="light" value="le zorglub"></attn-translate><attn-translate id="d" theme="dark" value="le zorglub"></attn-translate>');
    await v.page.evaluate(() => {
      for (const id of ['l', 'd']) {
        (document.getElementById(id) as unknown as { translator: unknown }).translator = {
          translate: async () => ({ text: 'the <unk>', sourceTokens: ['le', '<unk>'], targetTokens: ['the', '<unk>'], attention: [[0.9, 0.1], [0.2, 0.8]] }),
        };
      }
    });
    await expect.poll(() => v.page.evaluate(() => ['l', 'd'].every((id) => document.getElementById(id)!.shadowRoot!.querySelector('.unk-end')))).toBe(true);
    await v.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const ratios = await v.page.evaluate(() => ['l', 'd'].map((id) => {
      const host = document.getElementById(id)!;
      const rgb = (c: string) => /rgba?\(([^)]+)\)/.exec(c)![1].split(/[\s,]+/).slice(0, 3).map(Number);
      const lum = (c: number[]) => c.reduce((s, x, i) => s + [0.2126, 0.7152, 0.0722][i] * ((x /= 255) <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4), 0);
      const mark = lum(rgb(getComputedStyle(host.shadowRoot!.querySelector('.unk-end')!, '::after').color));
      const bg = lum(rgb(getComputedStyle(host).backgroundColor));
      return (Math.max(mark, bg) + 0.05) / (Math.min(mark, bg) + 0.05);
    }));
    for (const r of ratios) expect(r).toBeGreaterThanOrEqual(4.5);
    expect(v.problems).toEqual([]);
  });

  test("a theme that is neither 'light' nor 'dark' is named under the widget, which follows the page; a valid one clears it", async () => {
    await stage(`<attn-heatmap id="h" theme="Dark" data='[[0.1,0.9]]'></attn-heatmap>
      <attn-model-view id="m" theme="night" data='[[[[0.7,0.3],[0.2,0.8]]]]' tokens="le chat"></attn-model-view>`);
    const fault = () => v.page.evaluate(() => {
      const f = document.getElementById('h')!.shadowRoot!.querySelector('.fault') as HTMLElement;
      return f.hidden ? '' : f.textContent;
    });
    await expect.poll(fault).toBe("<attn-heatmap>: theme: expected 'light' or 'dark', got 'Dark'; using the page's or system's theme");
    // The fixture page is light: the widget draws light meanwhile.
    expect(await v.page.evaluate(() => getComputedStyle(document.getElementById('h')!).backgroundColor)).toBe('rgb(255, 255, 255)');
    // Named once: the model view's enlarged heatmap does not repeat it.
    await v.page.evaluate(() => (document.getElementById('m') as unknown as { select(s: object): void }).select({ layer: 0, head: 0 }));
    await v.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const m = await v.page.evaluate(() => {
      const root = document.getElementById('m')!.shadowRoot!;
      return [...root.querySelectorAll('.fault'), ...root.querySelector('attn-heatmap')!.shadowRoot!.querySelectorAll('.fault')]
        .filter((f) => !(f as HTMLElement).hidden).map((f) => f.textContent);
    });
    expect(m).toEqual(["<attn-model-view>: theme: expected 'light' or 'dark', got 'night'; using the page's or system's theme"]);
    // So does translate's alignment heatmap and beam tree.
    await stage('<attn-translate id="t" theme="night" value="le chat"></attn-translate>');
    await v.page.evaluate(() => {
      (document.getElementById('t') as unknown as { translator: unknown }).translator = {
        translate: async () => ({ text: 'the cat', sourceTokens: ['le', 'chat'], targetTokens: ['the', 'cat'], attention: [[0.9, 0.1], [0.2, 0.8]],
          beams: [{ tokens: ['the', 'cat'], score: -1 }, { tokens: ['a', 'cat'], score: -2 }] }),
      };
    });
    await expect.poll(() => v.page.evaluate(() => (document.getElementById('t') as unknown as { result: unknown }).result !== null)).toBe(true);
    await v.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    expect(await v.page.evaluate(() => {
      const root = document.getElementById('t')!.shadowRoot!;
      return [root, ...[...root.querySelectorAll('attn-heatmap, attn-beam-tree')].map((e) => e.shadowRoot!)]
        .flatMap((r) => [...r.querySelectorAll('.fault')]).filter((f) => !(f as HTMLElement).hidden).map((f) => f.textContent);
    })).toEqual(["<attn-translate>: theme: expected 'light' or 'dark', got 'night'; using the page's or system's theme"]);
    await stage(`<attn-heatmap id="h" theme="Dark" data='[[0.1,0.9]]'></attn-heatmap>`);
    await v.page.evaluate(() => document.getElementById('h')!.setAttribute('theme', 'dark'));
    await expect.poll(fault).toBe('');
    expect(await v.page.evaluate(() => getComputedStyle(document.getElementById('h')!).backgroundColor)).toBe('rgb(28, 29, 36)');
    expect(v.problems).toEqual([]);
  });

  test("translate: the source and the translation carry the translator's languages, for a screen reader's voice", async () => {
    await stage('<attn-translate id="t" value="le chat"></attn-translate>');
    const langs = () => v.page.evaluate(() => {
      const root = document.getElementById('t')!.shadowRoot!;
      return ['input', '.tokens.src', '.text', '.tokens.out'].map((s) => root.querySelector(s)!.getAttribute('lang'));
    });
    const result = { text: 'the cat', sourceTokens: ['le', 'chat'], targetTokens: ['the', 'cat'], attention: [[0.9, 0.1], [0.2, 0.8]] };
    await v.page.evaluate((r) => {
      (document.getElementById('t') as unknown as { translator: unknown }).translator = { srcLang: 'fr', tgtLang: 'en', translate: async () => r };
    }, result);
    expect(await langs()).toEqual(['fr', 'fr', 'en', 'en']);
    // A translator that does not say (or says something that is no language tag) leaves the page's.
    await v.page.evaluate((r) => {
      (document.getElementById('t') as unknown as { translator: unknown }).translator = { srcLang: 'French!', translate: async () => r };
    }, result);
    expect(await langs()).toEqual([null, null, null, null]);
    expect(v.problems).toEqual([]);
  });

  test("heatmap: row-lang and col-lang give the tick labels and the read-out's tokens their languages; the translator's reach its alignment", async () => {
    // Each label text's language as the browser resolves it (':lang' follows the lang attributes
    // up the tree), the titles' too; and the read-out's tokens once the cursor is on a cell.
    const langsIn = (root: string) => v.page.evaluate((sel) => {
      let r: ShadowRoot = document.querySelector(sel.split(' ')[0])!.shadowRoot!;
      if (sel.includes(' ')) r = r.querySelector(sel.split(' ')[1])!.shadowRoot!;
      const lang = (el: Element) => (['fr', 'en'].find((l) => el.matches(`:lang(${l})`)) ?? 'none');
      const texts = (q: string) => [...new Set([...r.querySelectorAll(q)].map(lang))].join(',');
      return { rows: texts('text[data-row]'), cols: texts('text[data-col]'), titles: texts('svg text[fill]:not([data-row]):not([data-col])') };
    }, root);
    await stage(`<div lang="de"><attn-heatmap id="h" row-lang="fr" col-lang="en" row-title="sortie" col-title="source"
      row-labels="je suis" col-labels="I am" data='[[0.9,0.1],[0.2,0.8]]'></attn-heatmap></div>`);
    // The titles are the page's words: de here, which is neither.
    await expect.poll(() => langsIn('#h')).toEqual({ rows: 'fr', cols: 'en', titles: 'none' });
    await v.page.locator('#h .plot').focus();
    await v.page.keyboard.press('ArrowDown');
    expect(await v.page.evaluate(() => [...document.getElementById('h')!.shadowRoot!.querySelectorAll('.plot + .readout span')]
      .map((e) => `${e.textContent}:${e.getAttribute('lang')}`))).toEqual(['suis:fr', 'I:en']);
    // A malformed tag is named, and leaves the page's.
    await v.page.evaluate(() => document.getElementById('h')!.setAttribute('col-lang', 'English!'));
    await expect.poll(() => v.page.evaluate(() => document.getElementById('h')!.shadowRoot!.querySelector('.fault')!.textContent))
      .toBe("<attn-heatmap>: col-lang: expected a language tag such as 'fr' or 'en-GB', got 'English!'; using the page's");
    await expect.poll(() => langsIn('#h')).toEqual({ rows: 'fr', cols: 'none', titles: 'none' });

    await stage('<attn-translate id="t" value="le chat"></attn-translate>');
    const result = { text: 'the cat', sourceTokens: ['le', 'chat'], targetTokens: ['the', 'cat'], attention: [[0.9, 0.1], [0.2, 0.8]] };
    await v.page.evaluate((r) => {
      (document.getElementById('t') as unknown as { translator: unknown }).translator = { srcLang: 'fr', tgtLang: 'en', translate: async () => r };
    }, result);
    // Rows are the output (English), columns the source (French).
    await expect.poll(() => langsIn('#t attn-heatmap')).toEqual({ rows: 'en', cols: 'fr', titles: 'en' });
    await v.page.evaluate((r) => {
      (document.getElementById('t') as unknown as { translator: unknown }).translator = { translate: async () => r };
    }, result);
    await expect.poll(() => langsIn('#t attn-heatmap')).toEqual({ rows: 'en', cols: 'en', titles: 'en' });
    expect(v.problems).toEqual([]);
  });

  test('beam tree wider than the widget: the hypothesis a key picks is scrolled into view; Home and End pick the first and last', async () => {
    // 300 px: the tree (9 columns of at least 64 px) scrolls sideways, and the arrow keys pick
    // hypotheses, so they cannot scroll it.
    const long = ['the', 'cat', 'sat', 'on', 'the', 'mat', 'all', 'day', 'long'];
    await stage(`<div style="width: 300px"><attn-beam-tree id="b" data='${JSON.stringify([
      { tokens: ['a', 'cat'], score: -1 }, { tokens: long, score: -2 }, { tokens: ['one', 'cat'], score: -3 }])}'></attn-beam-tree></div>`);
    const b = v.page.locator('#b .plot');
    await v.page.waitForFunction(() => document.getElementById('b')!.shadowRoot!.querySelector('rect[data-leaf="1"]'));
    expect(await b.evaluate((p) => p.scrollWidth - p.clientWidth)).toBeGreaterThan(200);
    // Which hypothesis is picked, and whether its leaf (its last token and score) lies inside the plot's visible box.
    const seen = () => b.evaluate(async (p) => {
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      const view = p.getBoundingClientRect();
      const picked = /^hypothesis (\d+)/.exec(p.nextElementSibling!.textContent!)?.[1];
      const leaf = p.querySelector(`rect[data-leaf="${Number(picked) - 1}"]`)!.getBoundingClientRect();
      return `${picked} ${leaf.left >= view.left - 0.5 && leaf.right <= view.right + 0.5 ? 'in view' : 'hidden'}`;
    });
    await b.focus();
    const got: string[] = [];
    for (const key of ['ArrowDown', 'ArrowDown', 'ArrowUp', 'End', 'Home', 'ArrowUp']) {
      await v.page.keyboard.press(key);
      got.push(`${key}: ${await seen()}`);
    }
    expect(got).toEqual(['ArrowDown: 1 in view', 'ArrowDown: 2 in view', 'ArrowUp: 1 in view', 'End: 3 in view', 'Home: 1 in view', 'ArrowUp: 3 in view']);
    // Hovering picks too, but leaves the scroll where the reader put it.
    await b.evaluate((p) => { p.scrollLeft = p.scrollWidth; });
    const before = await b.evaluate((p) => p.scrollLeft);
    await v.page.locator('#b rect[data-leaf="1"]').hover({ force: true });
    expect(await b.evaluate(async (p) => {
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      return p.scrollLeft;
    })).toBe(before);
    expect(v.problems).toEqual([]);
  });

  test('beam tree: Escape clears a selected beam, and with none selected is left to the page (a dialog around it closes)', async () => {
    await stage(`<attn-beam-tree id="b" data='[{"tokens":["i","am"],"score":-1},{"tokens":["i","was"],"score":-2}]'></attn-beam-tree>`);
    // Whether the page saw Escape as handled, from a listener outside the widget (a dialog's).
    const escape = () => v.page.evaluate(() => {
      let handled: boolean | null = null;
      const seen = (e: KeyboardEvent) => { if (e.key === 'Escape') handled = e.defaultPrevented; };
      document.addEventListener('keydown', seen);
      const plot = document.getElementById('b')!.shadowRoot!.querySelector('.plot') as HTMLElement;
      plot.focus();
      plot.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, composed: true, cancelable: true }));
      document.removeEventListener('keydown', seen);
      return handled;
    });
    expect(await escape()).toBe(false);
    await v.page.evaluate(() => (document.getElementById('b')!.shadowRoot!.querySelector('.plot') as HTMLElement)
      .dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowDown', bubbles: true, composed: true, cancelable: true })));
    expect(await escape()).toBe(true);  // it cleared the selection
    expect(await escape()).toBe(false);  // nothing left to clear
    expect(v.problems).toEqual([]);
  });
});
