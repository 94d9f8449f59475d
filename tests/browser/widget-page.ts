// The widget fixture page (fixtures/widget-faults.html: every widget defined, an empty #stage)
// served from the repository, one page for a whole test file: each test puts its own widgets on
// the stage, which is emptied, with the recorded problems, before the next.
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { launch, repoRoot, visit, type Visit } from './helpers';
import { serveStatic, type StaticServer } from './static-server';

const WIDGET_PAGE = 'tests/browser/fixtures/widget-faults.html';

export interface WidgetPage {
  /** Filled in before the first test: the page and what went wrong on it. */
  readonly v: Visit;
  readonly browser: Browser;
  /** The fixture page's URL, for another page (a touch screen's) to open. */
  readonly url: string;
  /** Puts `html` on the stage. */
  stage(html: string): Promise<void>;
}

/** Registers the test file's hooks that open, empty and close the widget page; call at the top level. */
export function useWidgetPage(): WidgetPage {
  // One object throughout, so a test file can keep `v` from the start.
  const v = {} as Visit;
  let browser: Browser | undefined;
  let server: StaticServer | undefined;
  beforeAll(async () => {
    [browser, server] = await Promise.all([launch(), serveStatic(repoRoot, false)]);
    Object.assign(v, await visit(browser, `${server.url}${WIDGET_PAGE}`));
    await v.page.waitForFunction(() => customElements.get('attn-translate') !== undefined);
  });
  afterAll(async () => {
    await v.page?.close();
    await browser?.close();
    await server?.close();
  });
  beforeEach(async () => {
    await v.page.evaluate(() => document.getElementById('stage')!.replaceChildren());
    v.problems.length = 0;
  });
  return {
    v,
    get browser() { return browser!; },
    get url() { return `${server!.url}${WIDGET_PAGE}`; },
    stage: (html) => v.page.evaluate((x) => { document.getElementById('stage')!.innerHTML = x; }, html),
  };
}

/** A phone-sized touch screen showing the fixture page with `html` on its stage (see touchScreen). */
export interface TouchScreen {
  ctx: BrowserContext;
  page: Page;
  cdp: CDPSession;
  /** Two animation frames: the widgets' redraw after an input. */
  frames(): Promise<unknown>;
  /**
   * A finger down and up (50 ms) at (x, y), no movement: a tap. Its events carry times of their
   * own (the widget reads event.timeStamp), so a busy machine cannot stretch quick taps into slow
   * ones (a CI run at high load once did): `gap` ms after the last tap's end, or by default at
   * least 600 ms after it (a separate tap: past any double-tap window) and not before now.
   */
  tap(x: number, y: number, gap?: number): Promise<void>;
}

/**
 * Opens the widget page on a 400 x 700 touch screen with `html` on the stage, once the
 * <attn-regression id="r"> in it has a result. Close `ctx` when done.
 */
export async function touchScreen(widgetPage: WidgetPage, html: string): Promise<TouchScreen> {
  const ctx = await widgetPage.browser.newContext({ hasTouch: true, isMobile: true, viewport: { width: 400, height: 700 } });
  const page = await ctx.newPage();
  await page.goto(widgetPage.url);
  await page.evaluate((x) => { document.getElementById('stage')!.innerHTML = x; }, html);
  await page.waitForFunction(() => (document.getElementById('r') as unknown as { result: unknown }).result !== null, undefined, { timeout: 45_000 });
  const cdp = await ctx.newCDPSession(page);
  let last = 0;  // the last tap's end, in seconds since the epoch (CDP's timestamp)
  return {
    ctx, page, cdp,
    frames: () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))),
    tap: async (x, y, gap) => {
      const start = gap === undefined ? Math.max(Date.now() / 1000, last + 0.6) : last + gap / 1000;
      last = start + 0.05;
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x, y }], timestamp: start });
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [], timestamp: last });
    },
  };
}
