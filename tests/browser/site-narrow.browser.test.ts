// Every page of the built site on the narrowest screens: 320 px at 16 px text, and 180 px at 32 px
// text (a reader's large-text setting). No sideways page scroll, and no word broken mid-word
// unless it is wider than its column (titles count at the body text size they shrink to). On a
// phone, a formula wider than its column shows that it scrolls and takes the keyboard.
import { describe, expect, test } from 'vitest';
import { eachTwoAtATime, pageProblems, settled } from './helpers';
import { useSite } from './site-server';

const PAGES = ['index', 'pooling', 'scoring', 'positional', 'heads', 'efficient', 'translation', 'models', 'performance', 'embed'];

const site = useSite('site-narrow');

/**
 * Words split over two lines though they would fit their column: each as 'tag "word" width in
 * column'. A word's width counts at the body text size (a title may not break what the text
 * around it would not); breaks after a hyphen or dash are allowed.
 */
function brokenWords(): string[] {
  const out: string[] = [];
  const root = parseFloat(getComputedStyle(document.documentElement).fontSize);
  const walk = (top: Node) => {
    const tw = document.createTreeWalker(top, NodeFilter.SHOW_TEXT);
    for (let n = tw.nextNode() as Text | null; n; n = tw.nextNode() as Text | null) {
      const text = n;
      const el = text.parentElement;
      if (!el || !el.checkVisibility() || el.closest('.visually-hidden, .sr, .skip, svg, math, pre, script, style')) continue;
      let block: Element = el;
      while (getComputedStyle(block).display.startsWith('inline') && block.parentElement) block = block.parentElement;
      const bs = getComputedStyle(block);
      const column = block.clientWidth - parseFloat(bs.paddingLeft) - parseFloat(bs.paddingRight);
      const scale = root / parseFloat(getComputedStyle(el).fontSize);
      const lines = (from: number, to: number) => {
        const r = document.createRange();
        r.setStart(text, from);
        r.setEnd(text, to);
        const rects = [...r.getClientRects()].filter((q) => q.width > 0);
        return { n: new Set(rects.map((q) => Math.round(q.top))).size, w: rects.reduce((s, q) => s + q.width, 0) };
      };
      for (const m of text.data.matchAll(/\S+/g)) {
        const word = lines(m.index!, m.index! + m[0].length);
        if (word.n < 2 || word.w * scale > column - 1) continue;
        for (const s of m[0].matchAll(/[^-\u2010\u2013\u2014]+/g)) {
          if (lines(m.index! + s.index!, m.index! + s.index! + s[0].length).n > 1) {
            out.push(`${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''} "${m[0]}" ${Math.round(word.w)} px in ${Math.round(column)}`);
            break;
          }
        }
      }
    }
    (top as ParentNode).querySelectorAll('*').forEach((e) => { if (e.shadowRoot) walk(e.shadowRoot); });
  };
  walk(document.body);
  return out;
}

describe('the site on the narrowest screens', () => {
  test.each([[320, 16], [180, 32]])('every page at %i px, %i px text: no sideways scroll, no needless mid-word break', async (width, fontSize) => {
    const found: Record<string, unknown> = {};
    await eachTwoAtATime(PAGES, async (file) => {
      // Not isMobile: a mobile viewport widens to fit what overflows it, hiding the overflow.
      const ctx = await site.browser.newContext({ viewport: { width, height: 740 }, serviceWorkers: 'block' });
      const page = await ctx.newPage();
      if (fontSize !== 16) {
        const cdp = await ctx.newCDPSession(page);
        await cdp.send('Page.enable');
        await cdp.send('Page.setFontSizes', { fontSizes: { standard: fontSize, fixed: Math.round(fontSize * 13 / 16) } });
      }
      const problems = pageProblems(page);
      await page.goto(`${site.isolated.url}${file}.html`);
      await page.waitForSelector('body[data-result="ok"]', { timeout: 90_000 });
      await settled(page);  // widgets draw on an animation frame; first results land just after ready
      const r = await page.evaluate(() => ({ scrollWidth: document.scrollingElement!.scrollWidth, innerWidth, root: getComputedStyle(document.documentElement).fontSize }));
      const broken = await page.evaluate(brokenWords);
      const bad = {
        ...(r.scrollWidth > width || r.innerWidth !== width ? { scrollWidth: r.scrollWidth, innerWidth: r.innerWidth } : {}),
        ...(r.root !== `${fontSize}px` ? { root: r.root } : {}),
        ...(broken.length ? { broken } : {}),
        ...(problems.length ? { problems } : {}),
      };
      if (Object.keys(bad).length) found[file] = bad;
      await ctx.close();
    });
    expect(found).toEqual({});
  }, 300_000);

  test('a formula wider than its column at 360 px: a Tab stop with a name, a shadow at each edge with more past it; one that fits, as before', async () => {
    const scrolls: Record<string, number> = {};
    for (const [file, width] of [['index', 360], ['positional', 360], ['heads', 360], ['pooling', 360], ['heads', 1280]] as const) {
      const ctx = await site.browser.newContext({ viewport: { width, height: 740 }, serviceWorkers: 'block' });
      const page = await ctx.newPage();
      const problems = pageProblems(page);
      await page.goto(`${site.isolated.url}${file}.html`);
      await page.waitForSelector('body[data-result="ok"]', { timeout: 90_000 });
      // The shell marks the formulas that scroll at load and again 1.5 s later (for a layout that
      // changed meanwhile): until every formula's marks match its overflow, not a fixed 1.7 s.
      await settled(page);
      await page.waitForFunction(() => [...document.querySelectorAll('math[display=block]')].every((m) => {
        const over = m.scrollWidth - m.clientWidth;
        return (m.getAttribute('tabindex') === '0') === over > 1 && m.classList.contains('more-left') === (over > 1 && m.scrollLeft > 1)
          && m.classList.contains('more-right') === (over > 1 && m.scrollLeft < over - 1);
      }), undefined, { timeout: 10_000 });
      const formulas = await page.$$('math[display=block]');
      expect(formulas.length, file).toBeGreaterThan(1);
      const looks = (i: number) => formulas[i].evaluate((m) => ({
        tabindex: m.getAttribute('tabindex'), name: Boolean(m.getAttribute('aria-label')),
        class: m.getAttribute('class') && [...m.classList].sort().join(' '), shadow: getComputedStyle(m).boxShadow !== 'none',
      }));
      scrolls[`${file} ${width}`] = 0;
      for (let i = 0; i < formulas.length; i++) {
        const where = `${file} at ${width} px, formula ${i}`;
        if (!(await formulas[i].evaluate((m) => m.scrollWidth - m.clientWidth > 1))) {
          expect(await looks(i), where).toEqual({ tabindex: null, name: true, class: null, shadow: false });
          continue;
        }
        scrolls[`${file} ${width}`]++;
        const start = await looks(i);
        // By keyboard: focused, the arrow key scrolls it and the start edge gets its shadow.
        await formulas[i].focus();
        await page.keyboard.press('ArrowRight');
        await page.waitForFunction((m) => m.classList.contains('more-left'), formulas[i], { timeout: 2000 }).catch(() => {});
        // The key's scroll is animated: let it end before placing the formula by script.
        await formulas[i].evaluate((m) => new Promise<void>((done) => {
          let last = -1;
          const settle = () => (m.scrollLeft === last ? done() : ((last = m.scrollLeft), requestAnimationFrame(() => requestAnimationFrame(settle))));
          settle();
        }));
        const byKey = await formulas[i].evaluate((m) => m.scrollLeft > 1 && m.classList.contains('more-left'));
        // Part way along, a shadow at each edge. Not read after the key: one 40 px step takes a
        // formula that overflows by 11-16 px to its end, so 'both' was only seen mid-animation.
        await formulas[i].evaluate((m) => { m.scrollLeft = Math.floor((m.scrollWidth - m.clientWidth) / 2); });
        await page.waitForFunction((m) => m.classList.contains('more-right'), formulas[i], { timeout: 2000 }).catch(() => {});
        const scrolled = await looks(i);
        await formulas[i].evaluate((m) => { m.scrollLeft = m.scrollWidth; });
        await page.waitForFunction((m) => !m.classList.contains('more-right'), formulas[i], { timeout: 2000 }).catch(() => {});
        expect({ start, byKey, scrolled, end: (await looks(i)).class }, where).toEqual({
          start: { tabindex: '0', name: true, class: 'more-right', shadow: true },
          byKey: true,
          scrolled: { tabindex: '0', name: true, class: 'more-left more-right', shadow: true },
          end: 'more-left',
        });
      }
      expect(problems).toEqual([]);
      await ctx.close();
    }
    // Some scroll at 360 px on three pages (2, 2 and 3 here), so the checks above ran; none at 1280 px.
    expect(Object.entries(scrolls).map(([k, n]) => [k, n > 0])).toEqual([['index 360', true], ['positional 360', true], ['heads 360', true], ['pooling 360', false], ['heads 1280', false]]);
  }, 120_000);
});
