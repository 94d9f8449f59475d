// The widgets on a course page as its author and its readers meet them: the author's stylesheet
// restyling them (--attn-… custom properties), a reader on a touch screen, a reader using the
// keyboard or a screen reader (reading order, focus).
import { describe, expect, test } from 'vitest';
import { touchScreen, useWidgetPage } from './widget-page';

const widgetPage = useWidgetPage();
const { v, stage } = widgetPage;

describe("an author's CSS custom properties", () => {
  test('restyle what the widgets draw (SVG, heatmap pixels, exports), in either theme; a value that is no colour is ignored', async () => {
    const cells = JSON.stringify(Array.from({ length: 20 }, (_, i) => Array.from({ length: 20 }, (_, j) => ((i + j) % 5) / 5)));
    const mask = JSON.stringify(Array.from({ length: 20 }, (_, i) => Array.from({ length: 20 }, (_, j) => j > i)));
    await stage(`<style>
        attn-heatmap { --attn-line: oklch(55% 0.2 30); --attn-masked: rebeccapurple; }
        attn-heatmap[theme=dark] { --attn-bg: #101020; }
        #wrap { --attn-fg: rgb(0 128 0); }
        #bad { --attn-line: 12px; --attn-bg: nonsense; --attn-fg: 12px; }
      </style>
      <attn-heatmap id="big" data='${cells}' mask='${mask}'></attn-heatmap>
      <attn-heatmap id="dark" theme="dark" data="[[0.5,0.2],[0.1,0.9]]"></attn-heatmap>
      <div id="wrap"><attn-heatmap id="inherits" row-labels="a b" data="[[0.5,0.2],[0.1,0.9]]"></attn-heatmap></div>
      <attn-heatmap id="bad" data="[[0.5]]"></attn-heatmap>`);
    const r = await v.page.evaluate(async () => {
      const get = (id: string) => document.getElementById(id) as HTMLElement & { renderNow(): void; toSVG(): string };
      const out: Record<string, unknown> = {};
      for (const id of ['big', 'dark', 'inherits', 'bad']) get(id).renderNow();
      // The large heatmap is one image: a masked cell's pixel (row 0, column 19).
      const href = get('big').shadowRoot!.querySelector('svg image')!.getAttribute('href')!;
      const img = new Image();
      img.src = href;
      await img.decode();
      const ctx = Object.assign(document.createElement('canvas'), { width: img.width, height: img.height }).getContext('2d')!;
      ctx.drawImage(img, 0, 0);
      out.maskedPixel = [...ctx.getImageData(19, 0, 1, 1).data.slice(0, 3)];
      const frame = (id: string) => get(id).shadowRoot!.querySelector('svg > rect[fill="none"]')!.getAttribute('stroke');
      out.line = frame('big');
      out.badLine = frame('bad');
      // The fill the labels inherit (they sit in a group per language, inside the one that sets it).
      out.labels = get('inherits').shadowRoot!.querySelector('svg text[data-row]')!.closest('g[fill]')!.getAttribute('fill');
      const svg = new DOMParser().parseFromString(get('dark').toSVG(), 'image/svg+xml');
      out.darkExportBg = svg.querySelector('svg > rect')!.getAttribute('fill');
      out.darkHostBg = getComputedStyle(get('dark')).backgroundColor;
      // No colour in the widget's HTML either (it was transparent, its text and borders the page's).
      out.lightHostBg = getComputedStyle(get('bad')).backgroundColor;
      out.badText = getComputedStyle(get('bad')).color;
      out.badButtonBorder = getComputedStyle(get('bad').shadowRoot!.querySelector('button')!).borderTopColor;
      // Corrected, the author's colour is used.
      get('bad').style.setProperty('--attn-bg', '#ffeeee');
      get('bad').renderNow();
      out.fixedHostBg = getComputedStyle(get('bad')).backgroundColor;
      return out;
    });
    expect(r).toEqual({
      maskedPixel: [102, 51, 153], // rebeccapurple, painted into the picture
      line: expect.stringMatching(/^#[0-9a-f]{6}$/), // oklch(…) made a plain sRGB value for the SVG
      badLine: '#c9cad6', // the light theme's line: 12px is no colour
      labels: '#008000', // inherited from an ancestor
      darkExportBg: '#101020',
      darkHostBg: 'rgb(16, 16, 32)',
      lightHostBg: 'rgb(255, 255, 255)',
      badText: 'rgb(29, 29, 36)',
      badButtonBorder: 'rgb(201, 202, 214)',
      fixedHostBg: 'rgb(255, 238, 238)',
    });
    expect(r.line).not.toBe('#c9cad6');
    expect(v.problems).toEqual([]);
  });

  test('a rule that starts applying restyles the widget at its next redraw; the theme attribute still switches the defaults', async () => {
    await stage(`<style>.brand { --attn-accent: #ff00aa; }</style>
      <attn-beam-tree id="bt" data='[{"tokens":["a","b"],"score":-1},{"tokens":["a","c"],"score":-2}]'></attn-beam-tree>`);
    const accentIn = () => v.page.evaluate(() => {
      const el = document.getElementById('bt') as HTMLElement & { renderNow(): void; toSVG(): string };
      el.renderNow();
      return { pink: el.toSVG().includes('#ff00aa'), darkBg: el.toSVG().includes('#1c1d24') };
    });
    expect(await accentIn()).toEqual({ pink: false, darkBg: false });
    await v.page.evaluate(() => document.getElementById('bt')!.classList.add('brand'));
    expect(await accentIn()).toEqual({ pink: true, darkBg: false });
    await v.page.evaluate(() => document.getElementById('bt')!.setAttribute('theme', 'dark'));
    expect(await accentIn()).toEqual({ pink: true, darkBg: true });
  });
});

describe('the regression plot on a touch screen', () => {
  test('a swipe scrolls the page and adds no point; a tap adds one; a finger drags a point; the mouse still clicks and drags', async () => {
    const ctx = await widgetPage.browser.newContext({ hasTouch: true, isMobile: true, viewport: { width: 400, height: 700 } });
    const page = await ctx.newPage();
    try {
      await page.goto(widgetPage.url);
      await page.evaluate(() => {
        document.getElementById('stage')!.innerHTML = `<div style="height: 300px"></div>
          <attn-regression id="r" points="[[1,1],[2,3],[4,2]]"></attn-regression><div style="height: 2000px"></div>`;
      });
      await page.waitForFunction(() => (document.getElementById('r') as unknown as { result: unknown }).result !== null, undefined, { timeout: 45_000 });
      const cdp = await ctx.newCDPSession(page);
      /** A finger down at the first point, through the others, and up: the input the browser gets from a touch screen. */
      const finger = async (path: [number, number][]) => {
        await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x: path[0][0], y: path[0][1] }] });
        for (const [x, y] of path.slice(1)) {
          await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [{ x, y }] });
          await page.waitForTimeout(16);
        }
        await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      };
      const state = () => page.evaluate(() => ({ points: (document.getElementById('r') as unknown as { points: { x: number; y: number }[] }).points, scrollY }));
      const box = (await page.locator('#r svg').boundingBox())!;
      const x = box.x + box.width * 0.7, y = box.y + box.height * 0.3;

      await finger([[x, y + 150], [x, y + 110], [x, y + 70], [x, y + 30], [x, y]]);
      const swiped = await state();
      expect(swiped.points).toHaveLength(3);
      expect(swiped.scrollY).toBeGreaterThan(50);

      // The swipe's fling can still be scrolling (a CI run once found the page 19 px down after the
      // tap): back to the top once the page has stood still for 10 frames.
      const settled = () => page.evaluate(() => new Promise<number>((resolve) => {
        let last = scrollY, still = 0;
        const frame = () => {
          if (scrollY !== last) [last, still] = [scrollY, 0];
          else if (++still >= 10) return resolve(scrollY);
          requestAnimationFrame(frame);
        };
        requestAnimationFrame(frame);
      }));
      await settled();
      await page.evaluate(() => scrollTo(0, 0));
      expect(await settled()).toBe(0);
      await finger([[x, y]]);
      const tapped = await state();
      expect(tapped.points).toHaveLength(4);
      expect(tapped.scrollY).toBe(0);

      const c = await page.evaluate(() => {
        const r = document.getElementById('r')!.shadowRoot!.querySelector('circle[data-index="0"]')!.getBoundingClientRect();
        return [r.x + r.width / 2, r.y + r.height / 2];
      });
      await finger([[c[0], c[1]], [c[0], c[1] - 10], [c[0], c[1] - 30], [c[0], c[1] - 60]]);
      const dragged = await state();
      expect(dragged.points).toHaveLength(4);
      expect(dragged.points[0].y).toBeGreaterThan(tapped.points[0].y + 1);
      expect(dragged.scrollY).toBe(0);

      await page.mouse.click(x, y + 20);
      const clicked = await state();
      expect(clicked.points).toHaveLength(5);
      const m = await page.evaluate(() => {
        const r = document.getElementById('r')!.shadowRoot!.querySelector('circle[data-index="1"]')!.getBoundingClientRect();
        return [r.x + r.width / 2, r.y + r.height / 2];
      });
      await page.mouse.move(m[0], m[1]);
      await page.mouse.down();
      await page.mouse.move(m[0] + 40, m[1], { steps: 4 });
      await page.mouse.up();
      const moved = await state();
      expect(moved.points).toHaveLength(5);
      expect(moved.points[1].x).toBeGreaterThan(clicked.points[1].x + 0.2);
    } finally {
      await ctx.close();
    }
  });

  test('a double tap 6 px off a point removes it; a single tap, or two slow ones, there add and remove nothing; a pen double tap and a mouse double-click remove one point', async () => {
    const { ctx, page, cdp, frames, tap } = await touchScreen(widgetPage, '<attn-regression id="r" points="[[1,1],[2,3],[3,2],[4,2]]"></attn-regression>');
    try {
      const xs = () => page.evaluate(() => (document.getElementById('r') as unknown as { points: { x: number }[] }).points.map((p) => p.x));
      const centre = (i: number) => page.evaluate((i) => {
        const r = document.getElementById('r')!.shadowRoot!.querySelector(`circle[data-index="${i}"]`)!.getBoundingClientRect();
        return [r.x + r.width / 2, r.y + r.height / 2, r.width];
      }, i);
      const [cx, cy, across] = await centre(1);
      // Off the circle itself: the finger is near the point, not on it.
      expect(across / 2).toBeLessThan(6);

      await tap(cx + 6, cy);
      await frames();
      expect(await xs()).toEqual([1, 2, 3, 4]);
      // Two taps 600 ms apart are two single taps.
      await page.waitForTimeout(600);
      await tap(cx + 6, cy);
      await frames();
      expect(await xs()).toEqual([1, 2, 3, 4]);

      await page.waitForTimeout(600);
      await tap(cx + 6, cy);
      await tap(cx + 6, cy, 80);
      await frames();
      expect(await xs()).toEqual([1, 3, 4]);
      await page.waitForTimeout(400);
      expect(await xs()).toEqual([1, 3, 4]);

      // A pen double tap on the circle: the double tap removes the point, and the dblclick that
      // follows it (still over the old circle, not yet redrawn) must not remove the next one.
      await page.waitForTimeout(600);
      const [px, py] = await centre(1);
      for (const clickCount of [1, 2]) {
        for (const type of ['mousePressed', 'mouseReleased']) {
          await cdp.send('Input.dispatchMouseEvent', { type, x: px, y: py, button: 'left', clickCount, pointerType: 'pen' });
        }
      }
      await frames();
      expect(await xs()).toEqual([1, 4]);

      const [mx, my] = await centre(1);
      await page.mouse.dblclick(mx, my);
      await frames();
      expect(await xs()).toEqual([1]);
    } finally {
      await ctx.close();
    }
  });
});

describe('reading and focus order', () => {
  test('the export buttons come after the picture in the DOM and the Tab order, drawn above it', async () => {
    await stage(`<attn-beam-tree id="bt" data='[{"tokens":["a","b"],"score":-1}]'></attn-beam-tree>`);
    await v.page.evaluate(() => (document.getElementById('bt') as HTMLElement & { renderNow(): void }).renderNow());
    const r = await v.page.evaluate(() => {
      const root = document.getElementById('bt')!.shadowRoot!;
      const bar = root.querySelector('.bar')!, plot = root.querySelector('.plot')!;
      return {
        barAfter: !!(plot.compareDocumentPosition(bar) & Node.DOCUMENT_POSITION_FOLLOWING),
        barAbove: bar.getBoundingClientRect().bottom <= plot.getBoundingClientRect().top,
      };
    });
    expect(r).toEqual({ barAfter: true, barAbove: true });
    await v.page.locator('#bt .plot').focus();
    await v.page.keyboard.press('Tab');
    expect(await v.page.evaluate(() => document.getElementById('bt')!.shadowRoot!.activeElement?.textContent)).toBe('SVG');
  });

  test('regression, beam tree and head view announce the readout a key left, once; a redraw without a key says nothing', async () => {
    await stage(`<attn-regression id="reg" points="[[1,1],[2,3]]"></attn-regression>
      <attn-beam-tree id="bt" data='[{"tokens":["a","b"],"score":-1},{"tokens":["a","c"],"score":-2}]'></attn-beam-tree>
      <attn-head-view id="hv" tokens="x y" data="[[[0.8,0.2],[0.3,0.7]]]"></attn-head-view>`);
    const { page } = v;
    await page.waitForFunction(() => (document.getElementById('reg') as unknown as { result: unknown }).result !== null, undefined, { timeout: 45_000 });
    const said = () => page.evaluate(() => ['reg', 'bt', 'hv'].map((id) => {
      const r = document.getElementById(id)!.shadowRoot!;
      return [r.querySelector('.frame > .sr[aria-live]')!.textContent, r.querySelector('.plot ~ .readout')!.textContent];
    }));
    const redraw = () => page.evaluate(() => ['reg', 'bt', 'hv'].forEach((id) => (document.getElementById(id) as HTMLElement & { renderNow(): void }).renderNow()));
    await redraw();
    expect((await said()).map(([live]) => live)).toEqual(['', '', '']);
    for (const [id, key] of [['reg', 'PageDown'], ['bt', 'ArrowDown'], ['hv', 'ArrowDown']]) {
      await page.locator(`#${id} .plot`).focus();
      await page.keyboard.press(key);
    }
    await redraw();
    const keyed = await said();
    expect(keyed.map(([live]) => live)).toEqual([expect.stringMatching(/^point 1 of 2/), expect.stringMatching(/^hypothesis 1/), expect.stringMatching(/^query “x”/)]);
    for (const [live, readout] of keyed) expect(live).toBe(readout);
    // Changed from code, not by a key: the readout changes, the live region does not.
    await page.evaluate(() => { (document.getElementById('reg') as unknown as { points: unknown }).points = [{ x: 1, y: 1 }]; });
    await redraw();
    expect((await said())[0]).toEqual([keyed[0][0], expect.stringMatching(/^point 1 of 1/)]);
  });

  test('model view: opening a head moves focus into it; Escape (after the heatmap\'s own) and Close bring it back to that thumbnail', async () => {
    await stage(`<attn-model-view id="mv" tokens="a b"
      data="[[[[1,0],[0.5,0.5]],[[0,1],[0.2,0.8]]],[[[0.6,0.4],[0.4,0.6]],[[0.9,0.1],[0.1,0.9]]]]"></attn-model-view>`);
    const { page } = v;
    await page.waitForSelector('#mv g[data-layer="1"][data-head="1"]');
    /** Where focus is inside the widget: a thumbnail's layer/head, or its class. */
    const focus = () => page.evaluate(() => {
      const a = document.getElementById('mv')!.shadowRoot!.activeElement;
      return !a ? 'none' : a.getAttribute('data-layer') !== null ? `${a.getAttribute('data-layer')}/${a.getAttribute('data-head')}` : a.localName === 'div' ? a.className : a.localName;
    });
    const selected = () => page.evaluate(() => (document.getElementById('mv') as unknown as { selected: unknown }).selected);
    await page.focus('#mv g[data-layer="1"][data-head="1"]');
    await page.keyboard.press('Enter');
    expect(await focus()).toBe('detail');
    expect(await page.evaluate(() => {
      const d = document.getElementById('mv')!.shadowRoot!.querySelector('.detail')!;
      return `${d.getAttribute('role')}: ${d.querySelector(`#${d.getAttribute('aria-labelledby')}`)!.textContent}`;
    })).toBe('region: Layer 2, head 2');
    // Into the heatmap, pin a cell: the first Escape is the heatmap's (unpin), the second closes.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await focus()).toBe('attn-heatmap');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Escape');
    expect(await selected()).toEqual({ layer: 1, head: 1 });
    await page.keyboard.press('Escape');
    expect(await selected()).toBe(null);
    expect(await focus()).toBe('1/1');
    // A click opens it too; Close comes back to the thumbnail clicked.
    await page.click('#mv g[data-layer="0"][data-head="1"]');
    expect(await focus()).toBe('detail');
    await page.click('#mv .detail button');
    expect(await selected()).toBe(null);
    expect(await focus()).toBe('0/1');
    expect(v.problems).toEqual([]);
  });
});
