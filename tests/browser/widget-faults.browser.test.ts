// The widgets given what course authors get wrong: attribute typos, bad data, a widget whose
// drawing fails. Each widget must say what is wrong in itself, keep the others drawing, and leave
// nothing uncaught and no NaN in its SVG.
import { describe, expect, test } from 'vitest';
import { useWidgetPage } from './widget-page';

const { v, stage } = useWidgetPage();

/** What a widget shows: whether it drew an SVG, its fault line, its readout, its export bar. */
const look = (selector: string) => v.page.evaluate((sel) => {
  const el = document.querySelector(sel)!;
  const r = el.shadowRoot!;
  const fault = r.querySelector('.fault') as HTMLElement;
  const svg = r.querySelector('svg');
  return {
    svg: !!svg,
    nan: !!svg && /NaN/.test(svg.outerHTML),
    fault: fault.hidden ? '' : fault.textContent,
    readout: r.querySelector('.readout')?.textContent ?? '',
    bar: !(r.querySelector('.bar') as HTMLElement).hidden,
  };
}, selector);

describe('widgets with faults', () => {
  test('a widget whose drawing throws shows its error; the widgets queued after it still draw', async () => {
    await v.page.evaluate(() => {
      const Heatmap = customElements.get('attn-heatmap')!;
      customElements.define('attn-boom', class extends Heatmap {
        render(): void {
          throw new Error('boom');
        }
      });
    });
    await stage(`<attn-boom data="[[1]]"></attn-boom>
      <attn-heatmap id="good" data="[[0.5,0.2]]"></attn-heatmap>
      <attn-beam-tree id="beams" data='[{"tokens":["a"],"score":1}]'></attn-beam-tree>`);
    await expect.poll(() => look('#beams').then((x) => x.svg)).toBe(true);
    expect(await look('#good')).toMatchObject({ svg: true, fault: '', bar: true });
    expect(await look('attn-boom')).toMatchObject({ svg: false, fault: '<attn-boom>: boom', bar: false });
    // The queue goes on afterwards too.
    await v.page.evaluate(() => document.getElementById('good')!.setAttribute('data', '[[0.1,0.2,0.3]]'));
    await expect.poll(() => v.page.evaluate(() => document.getElementById('good')!.shadowRoot!.querySelectorAll('rect[fill^="rgb"]').length)).toBe(3);
    expect(v.problems).toEqual([]);
  });

  test('heatmap: bad attributes are named in the widget, which draws with the fallback; no NaN', async () => {
    await stage(`<attn-heatmap id="digits" show-values digits="200" data="[[0.5]]"></attn-heatmap>
      <attn-heatmap id="bounds" min="abc" max="1" scale="magma" data="[[0.5,2]]"></attn-heatmap>
      <attn-heatmap id="flat" data="[1,2,3]"></attn-heatmap>
      <attn-heatmap id="ragged" data="[[1,2],[3]]"></attn-heatmap>
      <attn-heatmap id="json" data="[[1,2],[3"></attn-heatmap>
      <attn-heatmap id="holes" data='[[0.5,"a"],[0.2,0.3]]'></attn-heatmap>
      <attn-heatmap id="empty"></attn-heatmap>`);
    await expect.poll(() => look('#empty').then((x) => x.readout)).not.toBe('');
    expect(await look('#digits')).toMatchObject({ svg: true, nan: false, fault: "<attn-heatmap>: digits: expected an integer from 0 to 100, got '200'; using 2" });
    expect(await v.page.evaluate(() => document.getElementById('digits')!.shadowRoot!.querySelector('svg text[fill]')!.textContent)).toBe('0.50');
    expect(await look('#bounds')).toMatchObject({ svg: true, nan: false,
      fault: "<attn-heatmap>: min: expected a number, got 'abc'; using the data's range\n<attn-heatmap>: scale: expected 'viridis', 'blues', 'diverging', got 'magma'; using 'viridis'" });
    expect(await look('#flat')).toMatchObject({ svg: false, bar: false, fault: '<attn-heatmap>: data: expected a 2-D array (a list of rows of numbers)' });
    expect(await look('#ragged')).toMatchObject({ svg: false, bar: false, fault: '<attn-heatmap>: data: expected rows of equal length, got lengths 2, 1' });
    expect(await look('#json')).toMatchObject({ svg: false, bar: false, fault: '<attn-heatmap>: data: not valid JSON' });
    // A value that is no number is hatched like a masked cell, not coloured like the minimum.
    expect(await look('#holes')).toMatchObject({ svg: true, nan: false, fault: '<attn-heatmap>: data: 1 value is not a finite number; hatched like masked cells' });
    expect(await v.page.evaluate(() => document.getElementById('holes')!.shadowRoot!.querySelectorAll('rect[data-masked]').length)).toBe(1);
    // Nothing to export: no buttons (the SVG one downloaded a 0-byte file, the PNG one threw).
    expect(await look('#empty')).toMatchObject({ svg: false, bar: false, fault: '', readout: 'No data' });
    await expect(v.page.evaluate(() => (document.getElementById('empty') as unknown as { download(k: string): Promise<void> }).download('svg'))).rejects.toThrow('nothing to export yet');
    // Corrected, the widget draws and the note goes.
    await v.page.evaluate(() => document.getElementById('json')!.setAttribute('data', '[[1,2],[3,4]]'));
    await expect.poll(() => look('#json')).toMatchObject({ svg: true, fault: '', bar: true });
    expect(v.problems).toEqual([]);
  });

  test('regression: attribute typos fall back and say so; nothing stays on "loading attnlab…"', async () => {
    const cases: [string, string, string][] = [
      ['samples', 'abc', "samples: expected a whole number from 2 to 400, got 'abc'; using 60"],
      ['noise', 'abc', "noise: expected a number, 0 or more, got 'abc'; using 0.5"],
      ['n', '-1', "n: expected a whole number from 0 to 10000, got '-1'; using 40"],
      ['seed', 'x', "seed: expected an integer, got 'x'; using 0"],
      ['kernel', 'gauss', "kernel: expected 'gaussian', 'boxcar', 'epanechnikov', 'triangular', got 'gauss'; using 'gaussian'"],
      ['bandwidth', '-1', "bandwidth: expected a number above 0, got '-1'; using 0.5"],
      ['points', '[[1,"a"],[2,3]]', 'points: expected finite x and y, 1 of 2 is not; left out'],
      ['points', '[{"x":1}]', 'points: expected finite x and y, 1 of 1 is not; left out'],
      ['points', '[[1,2],[2,3', 'points: not valid JSON'],
      ['points', '{"x":1}', 'points: expected a list of [x, y] pairs or {"x", "y"} objects'],
    ];
    await stage(cases.map(([a, val], i) => `<attn-regression id="r${i}" ${a === 'n' ? '' : 'n="10"'} ${a}='${val}'></attn-regression>`).join('\n'));
    for (let i = 0; i < cases.length; i++) {
      await expect.poll(() => look(`#r${i}`).then((x) => x.readout), { timeout: 30_000 }).toMatch(/training point/);
      expect(await look(`#r${i}`), cases[i].join('=')).toMatchObject({ svg: true, nan: false, fault: `<attn-regression>: ${cases[i][2]}` });
    }
    // Removing `points` goes back to the n/seed points (the last points given stayed).
    await v.page.evaluate(() => document.getElementById('r6')!.removeAttribute('points'));
    await expect.poll(() => look('#r6')).toMatchObject({ fault: '', readout: expect.stringMatching(/^10 training points/) });
    expect(v.problems).toEqual([]);
  });

  test('translate: a new value, beam or max-length translates again, once; bad settings are named', async () => {
    await stage('<attn-translate id="t" value="je suis"></attn-translate>');
    const calls = () => v.page.evaluate(() => (window as unknown as { calls: unknown[] }).calls);
    await v.page.evaluate(() => {
      const w = window as unknown as { calls: unknown[] };
      w.calls = [];
      // A test double with the documented translator API.
      (document.getElementById('t') as unknown as { translator: unknown }).translator = {
        translate: async (text: string, opts: { beam: number; maxLength: number }) => {
          w.calls.push([text, opts.beam, opts.maxLength]);
          const words = text.split(' ');
          return { text: text.toUpperCase(), sourceTokens: words, targetTokens: words, attention: words.map((_, i) => words.map((__, j) => (i === j ? 1 : 0))) };
        },
      };
    });
    // Setting the translator on a widget with a value translates it.
    await expect.poll(calls).toEqual([['je suis', 1, 40]]);
    await v.page.evaluate(() => {
      const t = document.getElementById('t')!;
      t.setAttribute('value', 'il fait beau');
      t.setAttribute('beam', '4');
      t.setAttribute('max-length', '10');
    });
    await expect.poll(() => v.page.evaluate(() => (document.getElementById('t') as unknown as { result: { text: string } }).result.text)).toBe('IL FAIT BEAU');
    expect(await calls()).toEqual([['je suis', 1, 40], ['il fait beau', 4, 10]]);
    await v.page.evaluate(() => document.getElementById('t')!.setAttribute('beam', 'abc'));
    await expect.poll(calls).toHaveLength(3);
    expect((await calls())[2]).toEqual(['il fait beau', 1, 10]);
    await expect.poll(() => look('#t').then((x) => x.fault)).toBe("<attn-translate>: beam: expected a whole number, 1 or more, got 'abc'; using 1");
    expect(v.problems).toEqual([]);
  });

  test('translate: a translation cut at max-length says so by the output and in the live status; the default does not', async () => {
    await stage('<attn-translate id="t" src="/web/models/fra-eng-gru.atl" value="Je suis fatigué. Il fait beau aujourd’hui." max-length="4"></attn-translate>');
    const shown = () => v.page.evaluate(() => {
      const r = document.getElementById('t')!.shadowRoot!;
      const cut = r.querySelector('.cut') as HTMLElement;
      // The note follows the translation in the results (read with it), not hidden from anyone.
      return { cut: cut.hidden ? null : cut.textContent, afterText: cut.previousElementSibling?.className, ariaHidden: cut.closest('[aria-hidden]') !== null,
        status: r.querySelector('.readout[aria-live]')!.textContent };
    });
    // 'Je suis fatigué.' ends in 3 pieces; 'Il fait beau aujourd’hui.' needs 5.
    await expect.poll(shown, { timeout: 30_000 }).toEqual({ cut: '1 of 2 sentences cut at 4 pieces: raise max-length for the rest.', afterText: 'text', ariaHidden: false,
      status: '9 output tokens, greedy. Cut at max-length.' });
    await v.page.evaluate(() => document.getElementById('t')!.setAttribute('value', 'Il fait beau aujourd’hui.'));
    await expect.poll(shown).toMatchObject({ cut: 'Cut at 4 pieces: raise max-length for the rest.', status: '5 output tokens, greedy. Cut at max-length.' });
    await v.page.evaluate(() => document.getElementById('t')!.removeAttribute('max-length'));
    await expect.poll(shown).toMatchObject({ cut: null, status: '6 output tokens, greedy.' });
    expect(v.problems).toEqual([]);
  });

  test("translate: max-length above the translator's limit (maxTargetTokens) is named and the limit used; the default never exceeds it", async () => {
    await stage('<attn-translate id="t" src="/web/models/fra-eng-gru.atl" value="Il fait beau aujourd’hui." max-length="100"></attn-translate>');
    // The shipped models' limit is 47: 100 was silently translated as 47.
    await expect.poll(() => look('#t'), { timeout: 30_000 }).toMatchObject({
      readout: '6 output tokens, greedy.', fault: "<attn-translate>: max-length: expected a whole number from 1 to 47 (this model's limit), got '100'; using 47" });
    await stage('<attn-translate id="d" value="je suis"></attn-translate>');
    const calls = () => v.page.evaluate(() => (window as unknown as { calls: unknown[] }).calls);
    await v.page.evaluate(() => {
      const w = window as unknown as { calls: unknown[] };
      w.calls = [];
      // A test double whose model writes at most 30 pieces; it reports a cut at 30.
      (document.getElementById('d') as unknown as { translator: unknown }).translator = {
        maxTargetTokens: 30,
        translate: async (text: string, opts: { maxLength: number }) => {
          w.calls.push(opts.maxLength);
          const words = text.split(' ');
          return { text, sourceTokens: words, targetTokens: words, attention: words.map(() => words.map(() => 1 / words.length)), cutAtMaxLength: opts.maxLength === 30 };
        },
      };
    });
    // The default, 40, would be above this model's limit: the limit it is.
    await expect.poll(calls).toEqual([30]);
    const cut = () => v.page.evaluate(() => document.getElementById('d')!.shadowRoot!.querySelector('.cut')!.textContent);
    await expect.poll(cut).toBe("Cut at 30 pieces, this model's limit.");
    expect((await look('#d')).fault).toBe('');
    await v.page.evaluate(() => document.getElementById('d')!.setAttribute('max-length', '31'));
    await expect.poll(calls).toEqual([30, 30]);
    await expect.poll(() => look('#d').then((x) => x.fault)).toBe("<attn-translate>: max-length: expected a whole number from 1 to 30 (this model's limit), got '31'; using 30");
    await v.page.evaluate(() => document.getElementById('d')!.setAttribute('max-length', '12'));
    await expect.poll(calls).toEqual([30, 30, 12]);
    await expect.poll(() => look('#d').then((x) => x.fault)).toBe('');
    expect(v.problems).toEqual([]);
  });

  test('model and text attributes set together load one model and translate once', async () => {
    const before = await v.page.evaluate(() => performance.getEntriesByType('resource').length);
    const loaded = await v.page.evaluate(() => new Promise<string[]>((done) => {
      const hv = document.createElement('attn-head-view');
      const tr = document.createElement('attn-translate');
      // The first src of each is replaced before the task ends: it must never be fetched.
      hv.setAttribute('text', 'Il fait beau.');
      hv.setAttribute('src', '/web/models/fra-eng-gru.atl');
      hv.setAttribute('src', '/web/models/fra-eng-transformer.atl');
      tr.setAttribute('value', 'Il fait beau.');
      tr.setAttribute('src', '/web/models/eng-fra-transformer.atl');
      tr.setAttribute('src', '/web/models/fra-eng-transformer.atl');
      tr.setAttribute('arch', 'transformer');
      let n = 0;
      const out: string[] = [];
      for (const el of [hv, tr]) el.addEventListener(el === hv ? 'attn-loaded' : 'attn-translated', () => { out.push(el.localName); if (++n === 2) done(out); });
      document.getElementById('stage')!.append(hv, tr);
    }));
    expect(loaded.sort()).toEqual(['attn-head-view', 'attn-translate']);
    const atl = await v.page.evaluate((n) => performance.getEntriesByType('resource').slice(n).map((e) => new URL(e.name).pathname).filter((p) => p.endsWith('.atl')), before);
    expect(atl).toEqual(['/web/models/fra-eng-transformer.atl']);
    expect(v.problems).toEqual([]);
  });

  test('head view: a model error stays through later renders; loading says so; a stale pick is dropped; bad threshold and layer are named', async () => {
    await stage(`<attn-head-view id="hv" tokens="the cat sat" data="[[[0.8,0.1,0.1],[0.2,0.7,0.1],[0.3,0.3,0.4]]]"></attn-head-view>
      <attn-model-view id="mv" src="/web/models/eng-fra-transformer.atl" text="It is fine."></attn-model-view>`);
    // Loading: the model view says so at once (it was an empty 64 x 20 box).
    expect(await v.page.evaluate(() => {
      const st = document.getElementById('mv')!.shadowRoot!.querySelector('.readout') as HTMLElement;
      return st.hidden ? '' : st.textContent;
    })).toBe('Loading the model…');
    const readout = () => v.page.evaluate(() => document.getElementById('hv')!.shadowRoot!.querySelector('.plot + .readout')!.textContent);
    await expect.poll(readout).toMatch(/^1 of 1 heads shown/);
    // A pick, then fewer tokens: no "undefined" or NaN.
    await v.page.locator('#hv .plot').focus();
    await v.page.keyboard.press('End');
    await expect.poll(readout).toMatch(/^query “sat”/);
    await v.page.keyboard.press('ArrowRight');
    await expect.poll(readout).toMatch(/^key “sat” — strongest query per head: head 1: sat \(0\.40\)/);
    await v.page.evaluate(() => {
      const hv = document.getElementById('hv')!;
      hv.setAttribute('data', '[[[0.9,0.1],[0.3,0.7]]]');
      hv.setAttribute('tokens', 'a b');
    });
    await expect.poll(readout).toMatch(/^1 of 1 heads shown/);
    expect(await readout()).not.toMatch(/undefined|NaN/);
    await v.page.evaluate(() => document.getElementById('hv')!.setAttribute('threshold', 'abc'));
    await expect.poll(() => look('#hv')).toMatchObject({ fault: "<attn-head-view>: threshold: expected a number from 0 to 1, got 'abc'; using 0.01", readout: expect.stringMatching(/above 0\.01\./) });
    // A model name that is none is the attribute's fault, named under the widget like the others.
    expect(await v.page.evaluate(() => {
      const hv = document.getElementById('hv') as unknown as HTMLElement & { renderNow(): void };
      hv.setAttribute('model', 'fra-en');
      hv.setAttribute('text', 'Il fait beau.');
      hv.renderNow();
      return hv.shadowRoot!.querySelector('.readout')!.textContent;
    })).toBe('Loading the model…');
    await expect.poll(() => look('#hv'), { timeout: 30_000 }).toMatchObject({
      fault: "<attn-head-view>: model: expected 'fra-eng' or 'eng-fra' (a model file goes in src), got 'fra-en'; no model loaded\n<attn-head-view>: threshold: expected a number from 0 to 1, got 'abc'; using 0.01",
      readout: expect.stringMatching(/^1 of 1 heads shown/) });
    // A model that cannot load: the message stays in the readout after a redraw (a theme change here).
    await v.page.evaluate(() => document.getElementById('hv')!.setAttribute('src', '/web/models/LICENSE'));
    await expect.poll(readout, { timeout: 30_000 }).toMatch(/LICENSE/);
    const failed = await readout();
    expect(failed).not.toMatch(/^Loading/);
    expect((await look('#hv')).fault).toBe("<attn-head-view>: threshold: expected a number from 0 to 1, got 'abc'; using 0.01");
    await v.page.evaluate(() => document.getElementById('hv')!.setAttribute('theme', 'dark'));
    await v.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    expect(await readout()).toBe(failed);
    // The model view loaded meanwhile; a layer that is no layer is named in the head view.
    await expect.poll(() => v.page.evaluate(() => (document.getElementById('mv') as unknown as { data: unknown[] }).data.length), { timeout: 30_000 }).toBeGreaterThan(0);
    await v.page.evaluate(() => {
      const hv = document.getElementById('hv')!;
      hv.setAttribute('src', '/web/models/fra-eng-transformer.atl');
      hv.removeAttribute('model');
      hv.setAttribute('layer', '99');
    });
    await expect.poll(() => look('#hv').then((x) => x.fault), { timeout: 30_000 }).toMatch(/^<attn-head-view>: layer: expected a layer number from 1 to \d, got '99'; using \d\n/);
    await v.page.evaluate(() => document.getElementById('hv')!.setAttribute('text', ''));
    await expect.poll(() => look('#hv').then((x) => x.fault)).toContain("<attn-head-view>: text: expected a sentence, got ''; nothing translated\n");
    expect(await readout()).not.toMatch(/text|Loading/);
    // part and arch that are none: named, and the defaults used (the encoder, the Transformer; this
    // page cannot resolve model names, which the readout says, as any load that fails).
    await v.page.evaluate(() => {
      const hv = document.getElementById('hv')!;
      hv.removeAttribute('threshold');
      hv.removeAttribute('layer');
      hv.removeAttribute('src');
      hv.setAttribute('model', 'fra-eng');
      hv.setAttribute('arch', 'gru');
      hv.setAttribute('part', 'sideways');
      hv.setAttribute('text', 'Il pleut.');
    });
    await expect.poll(() => look('#hv').then((x) => x.fault), { timeout: 30_000 }).toBe("<attn-head-view>: part: expected 'encoder', 'decoder' or 'cross', got 'sideways'; using 'encoder'\n"
      + "<attn-head-view>: arch: expected 'transformer' (this view shows a Transformer's heads; a GRU has none), got 'gru'; using 'transformer'");
    await expect.poll(readout, { timeout: 30_000 }).toMatch(/^loadTranslator: model 'fra-eng' \(transformer\)/);
    // With src the file says what the model is: arch is not used, part still is.
    await v.page.evaluate(() => document.getElementById('hv')!.setAttribute('src', '/web/models/fra-eng-transformer.atl'));
    await expect.poll(() => v.page.evaluate(() => (document.getElementById('hv') as unknown as { leftTokens: string[] }).leftTokens.join(' ')), { timeout: 30_000 }).toMatch(/pl/);
    // Polled: read at once, the clean-clone CI found arch's line still there once the tokens had come.
    await expect.poll(() => look('#hv').then((x) => x.fault), { timeout: 30_000 }).toBe("<attn-head-view>: part: expected 'encoder', 'decoder' or 'cross', got 'sideways'; using 'encoder'");
    // A GRU's file: named as src's fault; corrected, every line goes.
    await v.page.evaluate(() => document.getElementById('hv')!.setAttribute('src', '/web/models/fra-eng-gru.atl'));
    await expect.poll(() => look('#hv').then((x) => x.fault), { timeout: 30_000 }).toContain("\n<attn-head-view>: src: expected a Transformer's model file (this view shows heads; a GRU has none), got a GRU's; nothing shown from it");
    await v.page.evaluate(() => {
      const hv = document.getElementById('hv')!;
      for (const a of ['src', 'arch', 'part']) hv.removeAttribute(a);
    });
    await expect.poll(() => look('#hv').then((x) => x.fault), { timeout: 30_000 }).toBe('');
    expect(v.problems).toEqual([]);
  });

  test('translate and model view: model, arch, text and part they cannot use are named under them, as other attributes; a failed load stays in the status', async () => {
    await stage(`<attn-translate id="t1" model="fra-en"></attn-translate><attn-translate id="t2" model="fra-eng" arch="lstm"></attn-translate>
      <attn-model-view id="m1" src="/web/models/fra-eng-transformer.atl" text="" part="x"></attn-model-view>
      <attn-model-view id="m2" src="/web/models/fra-eng-gru.atl" text="Il pleut." part="cross"></attn-model-view>`);
    const status = (id: string) => v.page.evaluate((i) => document.getElementById(i)!.shadowRoot!.querySelector<HTMLElement>('.readout:not([hidden])')?.textContent ?? '', id);
    await expect.poll(() => look('#t1').then((x) => x.fault), { timeout: 30_000 }).toBe("<attn-translate>: model: expected 'fra-eng' or 'eng-fra' (a model file goes in src), got 'fra-en'; no model loaded");
    expect(await status('t1')).toBe('');
    expect((await look('#t2')).fault).toBe("<attn-translate>: arch: expected 'gru' or 'transformer', got 'lstm'; using 'transformer'");
    // This page cannot resolve model names: the Transformer it tried did not load, which the status says.
    await expect.poll(() => status('t2'), { timeout: 30_000 }).toMatch(/^The model did not load: loadTranslator: model 'fra-eng' \(transformer\)/);
    expect((await look('#m1')).fault).toBe("<attn-model-view>: text: expected a sentence, got ''; nothing translated");
    expect(await status('m1')).toBe('');
    await expect.poll(() => look('#m2').then((x) => x.fault), { timeout: 30_000 }).toBe("<attn-model-view>: src: expected a Transformer's model file (this view shows heads; a GRU has none), got a GRU's; nothing shown from it");
    expect(await status('m2')).toBe('');
    // Corrected, the lines go and the model view draws (part x: the encoder instead, said so).
    await v.page.evaluate(() => {
      document.getElementById('t1')!.removeAttribute('model');
      document.getElementById('m1')!.setAttribute('text', 'Il pleut.');
      document.getElementById('m2')!.setAttribute('src', '/web/models/fra-eng-transformer.atl');
    });
    await expect.poll(() => look('#m1').then((x) => x.fault), { timeout: 30_000 }).toBe("<attn-model-view>: part: expected 'encoder', 'decoder' or 'cross', got 'x'; using 'encoder'");
    await expect.poll(() => look('#m2'), { timeout: 30_000 }).toMatchObject({ fault: '', svg: true });
    expect((await look('#t1')).fault).toBe('');
    expect(v.problems).toEqual([]);
  });

  test('head view: heads that are no heads are named under it, with the heads shown instead; a hover does not hide that', async () => {
    await stage(`<attn-head-view id="hv" heads="0 2 9" tokens="a b" data='[[[0.7,0.3],[0.2,0.8]],[[0.5,0.5],[0.5,0.5]],[[0.9,0.1],[0.1,0.9]]]'></attn-head-view>`);
    const readout = () => v.page.evaluate(() => document.getElementById('hv')!.shadowRoot!.querySelector('.plot + .readout')!.textContent);
    await expect.poll(() => look('#hv').then((x) => x.fault)).toBe("<attn-head-view>: heads: expected head numbers from 1 to 3, got '0 9'; showing head 2");
    expect(await readout()).toBe('1 of 3 heads shown, 4 lines above 0.01.');
    await v.page.locator('#hv text[data-side="left"]').first().hover();
    await expect.poll(readout).toMatch(/^query “a”/);
    expect((await look('#hv')).fault).toBe("<attn-head-view>: heads: expected head numbers from 1 to 3, got '0 9'; showing head 2");
    await v.page.evaluate(() => document.getElementById('hv')!.setAttribute('heads', 'x'));
    await expect.poll(() => look('#hv').then((x) => x.fault)).toBe("<attn-head-view>: heads: expected head numbers from 1 to 3, got 'x'; showing every head");
    await v.page.evaluate(() => document.getElementById('hv')!.setAttribute('heads', '1 3'));
    await expect.poll(() => look('#hv').then((x) => x.fault)).toBe('');
    expect(v.problems).toEqual([]);
  });

  test('head view: heads and threshold are properties reflecting their attributes; what they cannot use is refused with an Error naming them', async () => {
    await stage(`<attn-head-view id="hv" tokens="a b" data='[[[0.7,0.3],[0.2,0.8]],[[0.5,0.5],[0.5,0.5]],[[0.9,0.1],[0.1,0.9]]]'></attn-head-view>`);
    const r = await v.page.evaluate(() => {
      const hv = document.getElementById('hv') as unknown as HTMLElement & { heads: unknown; threshold: unknown; activeHeads: number[]; lineCount: number; toggleHead(i: number): void; renderNow(): void };
      const attempt = (f: () => void) => {
        try {
          f();
          return 'ok';
        } catch (e) {
          return (e as Error).message;
        }
      };
      const state = () => {
        hv.renderNow();
        return { heads: hv.heads, active: hv.activeHeads, attr: hv.getAttribute('heads'), threshold: hv.threshold, tAttr: hv.getAttribute('threshold'), lines: hv.lineCount };
      };
      const before = state();
      hv.heads = [1, 3];
      hv.threshold = 0.5;
      const set = state();
      // Toggled since, the same heads set again are shown again.
      hv.toggleHead(0);
      hv.heads = [1, 3];
      const again = state();
      const said = [attempt(() => { hv.heads = [0]; }), attempt(() => { hv.heads = '1 3'; }), attempt(() => { hv.threshold = 2; }), attempt(() => { hv.threshold = '0.1'; })];
      const kept = state();
      hv.heads = null;
      hv.threshold = null;
      return { before, set, again, said, kept, reset: state() };
    });
    expect(r.before).toEqual({ heads: [1, 2, 3], active: [0, 1, 2], attr: null, threshold: 0.01, tAttr: null, lines: 12 });
    expect(r.set).toEqual({ heads: [1, 3], active: [0, 2], attr: '1 3', threshold: 0.5, tAttr: '0.5', lines: 4 });
    expect(r.again).toEqual(r.set);
    expect(r.said).toEqual([
      'attn-head-view.heads: expected null or an array of head numbers from 1 to 3 (1-based), got [0]',
      "attn-head-view.heads: expected null or an array of head numbers from 1 to 3 (1-based), got '1 3'",
      'attn-head-view.threshold: expected null or a number from 0 to 1, got 2',
      "attn-head-view.threshold: expected null or a number from 0 to 1, got '0.1'",
    ]);
    expect(r.kept).toEqual(r.set);
    expect(r.reset).toEqual(r.before);
    expect((await look('#hv')).fault).toBe('');
    expect(v.problems).toEqual([]);
  });

  test('head view, model view and heatmap: data of the wrong shape is named under the widget; nothing uncaught', async () => {
    await stage(`<attn-head-view id="hv1" data='[0.5,0.5]'></attn-head-view><attn-head-view id="hv2" data='{"heads":2}'></attn-head-view>
      <attn-head-view id="hv3" data='[[[0.1,0.9],[0.3]]]'></attn-head-view><attn-head-view id="hv4" data='[[[1]],[[0.5,0.5],[0.5,0.5]]]'></attn-head-view>
      <attn-model-view id="mv1" data='{"layers":1}'></attn-model-view><attn-model-view id="mv2" data='[[[0.5,0.5]]]'></attn-model-view>
      <attn-heatmap id="h1" data='{"rows":2}'></attn-heatmap>`);
    const faults = () => v.page.evaluate(() => [...document.querySelectorAll('#stage > *')].map((e) => `${e.id}: ${e.shadowRoot!.querySelector('.fault')!.textContent}`));
    const shape = 'expected [heads][queries][keys] arrays of numbers, or a tensor';
    await expect.poll(faults).toEqual([
      `hv1: <attn-head-view>: data: ${shape}`,
      `hv2: <attn-head-view>: data: ${shape}`,
      'hv3: <attn-head-view>: data: expected rows of equal length, got lengths 2, 1',
      'hv4: <attn-head-view>: data: expected heads of one size, got 1 x 1, 2 x 2',
      'mv1: <attn-model-view>: data: expected a list of layers, each [heads][queries][keys] or a tensor',
      `mv2: <attn-model-view>: data: layer 1: ${shape}`,
      'h1: <attn-heatmap>: data: expected a 2-D array (a list of rows of numbers)',
    ]);
    // Good data clears the line and draws.
    await v.page.evaluate(() => { (document.getElementById('mv2') as unknown as { data: unknown }).data = [[[[0.5, 0.5], [0.2, 0.8]]]]; });
    await expect.poll(() => look('#mv2')).toMatchObject({ fault: '', bar: true });
    expect(v.problems).toEqual([]);
  });

  test('heatmap: labels or a mask of another size than the data are named; the right sizes, set in any order, are not', async () => {
    await stage(`<attn-heatmap id="h1" data='[[1,2],[3,4]]' row-labels="a b c" col-labels="x"></attn-heatmap>
      <attn-heatmap id="h2" data='[[1,2],[3,4]]' mask='[true]'></attn-heatmap>
      <attn-heatmap id="h3" row-labels="a b" col-labels="x y" mask='[[true,false],[false,false]]' data='[[1,2],[3,4]]'></attn-heatmap>`);
    await expect.poll(() => look('#h1').then((x) => x.fault)).toBe('<attn-heatmap>: row-labels: expected 2 labels (one per row of data), got 3; the rest are not shown\n'
      + '<attn-heatmap>: col-labels: expected 2 labels (one per column of data), got 1; the columns without one are unlabelled');
    expect((await look('#h2')).fault).toBe('<attn-heatmap>: mask: expected 2 rows of 2 true or false (one per cell of data); cells without one are not masked');
    expect((await look('#h3')).fault).toBe('');
    // Labels for new data set with it, in one task, are not named in between.
    await v.page.evaluate(() => {
      const h = document.getElementById('h1') as unknown as { data: number[][]; rowLabels: string[]; colLabels: string[] };
      h.rowLabels = ['a', 'b', 'c'];
      h.colLabels = ['x'];
      h.data = [[1], [2], [3]];
    });
    await expect.poll(() => look('#h1').then((x) => x.fault)).toBe('');
    expect(v.problems).toEqual([]);
  });

  test('exports: a kind or scale that is no such thing is refused with an Error naming the call; the widget exports on', async () => {
    await stage(`<attn-heatmap id="h" data='[[1,2],[3,4]]'></attn-heatmap><attn-heatmap id="empty"></attn-heatmap>`);
    const attempt = (id: string, call: string) => v.page.evaluate(async ([i, c]) => {
      const el = document.getElementById(i) as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
      const [name, arg] = c.split(':');
      try {
        await el[name](JSON.parse(arg));
        return 'ok';
      } catch (e) {
        return (e as Error).message;
      }
    }, [id, call] as const);
    // 'jpg' downloaded PNG bytes as a .jpg; 0 and NaN failed as 'toBlob failed'; -2 gave a 1 x 1 PNG.
    expect(await attempt('h', 'download:"jpg"')).toBe("attn-heatmap.download: kind: expected 'svg' or 'png', got 'jpg'");
    expect(await attempt('h', 'toPNG:0')).toBe('attn-heatmap.toPNG: scale: expected a number above 0, got 0');
    expect(await attempt('h', 'toPNG:-2')).toBe('attn-heatmap.toPNG: scale: expected a number above 0, got -2');
    expect(await attempt('h', 'toPNG:"3"')).toBe("attn-heatmap.toPNG: scale: expected a number above 0, got '3'");
    expect(await attempt('h', 'toPNG:1000')).toMatch(/^attn-heatmap\.toPNG: the browser could not make a \d+ x \d+ px PNG \(scale 1000\); a smaller scale may do$/);
    expect(await attempt('empty', 'toPNG:2')).toBe('attn-heatmap.toPNG: nothing to export yet');
    expect(await attempt('empty', 'download:"svg"')).toBe('attn-heatmap.download: nothing to export yet');
    expect(await attempt('h', 'toPNG:2')).toBe('ok');
    expect(v.problems).toEqual([]);
  });

  test('properties and methods given what they cannot use throw an Error naming the call; the widget keeps what it had', async () => {
    await stage(`<attn-heatmap id="h" data='[[1,2],[3,4]]' row-labels="a b"></attn-heatmap>
      <attn-head-view id="hv" data='[[[0.7,0.3],[0.2,0.8]],[[0.5,0.5],[0.5,0.5]]]' tokens="a b"></attn-head-view>
      <attn-model-view id="mv" data='[[[[0.7,0.3],[0.2,0.8]]]]' tokens="a b"></attn-model-view>
      <attn-translate id="t"></attn-translate><attn-regression id="r" points="[[1,1],[2,3]]"></attn-regression>`);
    const r = await v.page.evaluate(() => {
      const attempt = (f: () => void) => {
        try {
          f();
          return 'ok';
        } catch (e) {
          return (e as Error).message;
        }
      };
      type Any = HTMLElement & Record<string, unknown> & { toggleHead(i: unknown): void; soloHead(i: unknown): void; select(s: unknown): void; setStep(t: unknown): void };
      const [h, hv, mv, t, reg] = ['h', 'hv', 'mv', 't', 'r'].map((id) => document.getElementById(id) as unknown as Any);
      h.pinned = { row: 1, col: 0 };
      return {
        said: [
          attempt(() => { h.pinned = { row: 99, col: 0 }; }),
          attempt(() => { h.min = 'abc'; }),
          attempt(() => { h.rowLabels = 'a b'; }),
          attempt(() => { hv.activeHeads = [0, 5]; }),
          attempt(() => hv.toggleHead(2)),
          attempt(() => hv.soloHead(-1)),
          attempt(() => { hv.tokens = 'a b'; }),
          attempt(() => mv.select({ layer: 1, head: 0 })),
          attempt(() => { mv.tokens = 7; }),
          attempt(() => { t.translator = { translation: () => null }; }),
          attempt(() => t.setStep(Number.NaN)),
          attempt(() => { reg.points = '[[1,1]]'; }),
          attempt(() => { reg.lib = {}; }),
          attempt(() => { reg.kernel = 'gauss'; }),
          attempt(() => { reg.bandwidth = 0; }),
          attempt(() => { reg.bandwidth = '0.3'; }),
        ],
        kept: [JSON.stringify(h.pinned), h.min, (h.rowLabels as string[]).join(' '), JSON.stringify(hv.activeHeads), mv.selected, t.translator, JSON.stringify(reg.points),
          reg.kernel, reg.bandwidth, reg.getAttribute('kernel'), reg.getAttribute('bandwidth'), reg.shadowRoot!.querySelector<HTMLElement>('.fault')!.hidden],
      };
    });
    expect(r.said).toEqual([
      'attn-heatmap.pinned: expected null or { row, col } with row from 0 to 1 and col from 0 to 1, got {"row":99,"col":0}',
      "attn-heatmap.min: expected null or a finite number, got 'abc'",
      "attn-heatmap.rowLabels: expected null or an array of strings, got 'a b'",
      'attn-head-view.activeHeads: expected an array of head indices from 0 to 1 (0-based), got [0,5]',
      'attn-head-view.toggleHead: expected a head index from 0 to 1 (0-based), got 2',
      'attn-head-view.soloHead: expected a head index from 0 to 1 (0-based), got -1',
      "attn-head-view.tokens: expected null or an array of strings, got 'a b'",
      'attn-model-view.select: expected null or { layer, head } with layer from 0 to 0 and head from 0 to 0 (0-based), got {"layer":1,"head":0}',
      'attn-model-view.tokens: expected null or an array of strings, got 7',
      'attn-translate.translator: expected null or an object with a translate(text, options) method, got {}',
      'attn-translate.setStep: expected a step number (0-based), got NaN',
      "attn-regression.points: expected null or an array of [x, y] pairs or { x, y } objects, got '[[1,1]]'",
      "attn-regression.lib: expected null or an attnlab instance (load()'s), got {}",
      "attn-regression.kernel: expected 'gaussian', 'boxcar', 'epanechnikov', 'triangular', got 'gauss'",
      'attn-regression.bandwidth: expected a number above 0, got 0',
      "attn-regression.bandwidth: expected a number above 0, got '0.3'",
    ]);
    expect(r.kept).toEqual(['{"row":1,"col":0,"value":3,"rowLabel":"b","colLabel":"0","masked":false}', null, 'a b', '[0,1]', null, null, '[{"x":1,"y":1},{"x":2,"y":3}]',
      'gaussian', 0.5, null, null, true]);
    // null points, as removing the attribute, give the d2l sample of n (40) points.
    expect(await v.page.evaluate(() => {
      const reg = document.getElementById('r') as unknown as { points: unknown[] | null };
      reg.points = null;
      return reg.points!.length;
    })).toBe(40);
    // Still working: a good value is taken.
    expect(await v.page.evaluate(() => {
      const hv = document.getElementById('hv') as unknown as { activeHeads: number[] };
      hv.activeHeads = [1];
      return hv.activeHeads;
    })).toEqual([1]);
    expect(v.problems).toEqual([]);
  });

  test('model view: tokens, row-labels or col-labels of another count than the data are named under it, not only in the enlarged head', async () => {
    const layer = JSON.stringify([[[[0.6, 0.4], [0.3, 0.7]]]]);
    await stage(`<attn-model-view id="m1" data='${layer}' tokens="a b c"></attn-model-view>
      <attn-model-view id="m2" data='${layer}' row-labels="a b" col-labels="x"></attn-model-view>
      <attn-model-view id="m3" tokens="a b" data='${layer}'></attn-model-view>`);
    await expect.poll(() => look('#m1').then((x) => x.svg)).toBe(true);
    expect((await look('#m1')).fault).toBe('<attn-model-view>: tokens: expected 2 labels (one per row of data), got 3; the rest are not shown');
    expect((await look('#m2')).fault).toBe('<attn-model-view>: col-labels: expected 2 labels (one per column of data), got 1; the columns without one are numbered');
    expect((await look('#m3')).fault).toBe('');
    // Enlarged, the head's heatmap draws the labels fitted to it, and does not name them again.
    const enlarged = await v.page.evaluate(async () => {
      const m = document.getElementById('m2') as unknown as HTMLElement & { select(s: { layer: number; head: number }): void; renderNow(): void };
      m.select({ layer: 0, head: 0 });
      m.renderNow();
      const hm = m.shadowRoot!.querySelector('attn-heatmap') as unknown as HTMLElement & { renderNow(): void; colLabels: string[] };
      hm.renderNow();
      return { cols: hm.colLabels, fault: (hm.shadowRoot!.querySelector('.fault') as HTMLElement).hidden };
    });
    expect(enlarged).toEqual({ cols: ['x', '1'], fault: true });
    // Corrected from code, the line goes.
    await v.page.evaluate(() => { (document.getElementById('m1') as unknown as { tokens: string[] }).tokens = ['a', 'b']; });
    await expect.poll(() => look('#m1').then((x) => x.fault)).toBe('');
    expect(v.problems).toEqual([]);
  });

  test('beam tree: bad hypotheses and chosen are named; nothing uncaught, no "undefined" or NaN', async () => {
    await stage(`<attn-beam-tree id="noTokens" data='[{"score":1}]'></attn-beam-tree>
      <attn-beam-tree id="object" data='{"tokens":["a"],"score":1}'></attn-beam-tree>
      <attn-beam-tree id="string" data='[{"tokens":"i am","score":-1},{"tokens":["i","was"]}]'></attn-beam-tree>
      <attn-beam-tree id="chosen" chosen="5" data='[{"tokens":["a"],"score":-2},{"tokens":["b"],"score":-1}]'></attn-beam-tree>`);
    await expect.poll(() => look('#chosen').then((x) => x.svg)).toBe(true);
    expect(await look('#noTokens')).toMatchObject({ bar: false, fault: '<attn-beam-tree>: data: expected each hypothesis to have tokens (a list) and a numeric score; 1 of 1 left out' });
    expect(await look('#object')).toMatchObject({ bar: false, fault: '<attn-beam-tree>: data: expected a list of {"tokens": [...], "score": number} hypotheses' });
    expect(await look('#string')).toMatchObject({ nan: false, readout: '1 hypothesis; chosen: “i am”', fault: '<attn-beam-tree>: data: expected each hypothesis to have tokens (a list) and a numeric score; 1 of 2 left out' });
    expect(await look('#chosen')).toMatchObject({ readout: '2 hypotheses; chosen: “b”',
      fault: "<attn-beam-tree>: chosen: expected a hypothesis number from 0 to 1 (0-based), got '5'; the best score is drawn as chosen" });
    expect(v.problems).toEqual([]);
  });
});
