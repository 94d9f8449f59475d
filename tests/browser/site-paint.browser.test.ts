// The site's pages draw before the library: each page builds its header and content from its own
// small modules and imports attnlab (165 kB, 54 kB gzipped) as it starts, without waiting for it
// (tests/bench/site_paint.mjs measures what that gains on a slow network). Held back here until
// the page has shown itself, the library must not be what the page waits for.
import { describe, expect, test } from 'vitest';
import { eachTwoAtATime, pageProblems } from './helpers';
import { useSite } from './site-server';

const site = useSite('site-paint');

const PAGES = ['index', 'pooling', 'scoring', 'heads', 'translation', 'models', 'positional', 'efficient', 'performance', 'embed'];
// Only attnlab's loader names its WebAssembly builds' files: the page chunk holding it has this.
const LIBRARY = 'attnlab-simd-';

describe('first paint', () => {
  test('every page shows its header and content while the library is held back, then works once it comes', async () => {
    await eachTwoAtATime(PAGES, async (file) => {
      const ctx = await site.browser.newContext({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
      try {
        let release!: () => void;
        const held = new Promise<void>((r) => { release = r; });
        const library: string[] = [];
        await ctx.route('**/assets/*.js', async (route) => {
          const response = await route.fetch();
          const body = await response.body();
          // The Workers (*.worker-*.js) bundle the library too; they start only once a page runs.
          if (body.includes(LIBRARY) && !route.request().url().includes('.worker-')) {
            // Each file once: a clean-clone CI run counted 2 (not reproduced here; the run did not
            // say which). A second file still fails, and the message now names the page.
            const path = new URL(route.request().url()).pathname;
            if (!library.includes(path)) library.push(path);
            await held;
          }
          await route.fulfill({ response, body });
        });
        const page = await ctx.newPage();
        const problems = pageProblems(page);
        await page.goto(`${site.isolated.url}${file}.html`, { waitUntil: 'commit' });
        await page.locator('header.site a.brand').waitFor({ timeout: 30_000 });
        await page.waitForFunction(() => document.getElementById('app')!.childElementCount > 0, undefined, { timeout: 30_000 });
        // Asked for as the page starts (the Real models page needs it only with a checkpoint),
        // and still held: what is on the screen was drawn without it.
        if (file !== 'models') await expect.poll(() => library, { timeout: 30_000, message: file }).toHaveLength(1);
        expect(await page.locator('header.site nav a').count(), file).toBeGreaterThan(5);
        release();
        await page.waitForSelector('body[data-result="ok"]', { timeout: 90_000 });
        if (file === 'models') expect(library).toEqual([]);
        expect(problems, file).toEqual([]);
      } finally {
        // A chunk the page asks for late (worker-error-*.js) may still be in route.fetch(): closing
        // under it rejected in the handler, an unhandled rejection that failed the clean-clone CI
        // at f984096 although every test passed.
        await ctx.unrouteAll({ behavior: 'ignoreErrors' });
        await ctx.close();
      }
    });
  }, 300_000);
});
