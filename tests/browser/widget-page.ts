// The widget fixture page (fixtures/widget-faults.html: every widget defined, an empty #stage)
// served from the repository, one page for a whole test file: each test puts its own widgets on
// the stage, which is emptied, with the recorded problems, before the next.
import type { Browser } from 'playwright-core';
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
