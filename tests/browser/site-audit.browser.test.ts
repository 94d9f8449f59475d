// The built demo site where things go wrong for a learner: a Worker that cannot start (its script
// not reachable, as offline before the page ever ran it) must be said, and leave Run usable.
import { describe, expect, test } from 'vitest';
import { pageProblems } from './helpers';
import { useSite } from './site-server';

const site = useSite('site-audit');

// page, its Run button, its Cancel button, its status line, the Worker script's name.
const WORKERS: [string, string, string, string, string][] = [
  ['pooling', 'train', 'cancel', 'train-status', 'train'],
  ['efficient', 'run-cost', 'cancel-cost', 'cost-status', 'efficient'],
  ['performance', 'run', 'cancel', 'bench-status', 'bench'],
];

describe('site audit', () => {
  for (const [file, run, cancel, status, script] of WORKERS) {
    test(`${file}: a Worker that cannot start is said in the status and the page's error; Run is usable again, with focus`, async () => {
      const ctx = await site.browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: 'block' });
      try {
        await ctx.route(new RegExp(`/assets/${script}\\.worker-[^/]*\\.js$`), (r) => r.abort());
        const page = await ctx.newPage();
        const problems = pageProblems(page);
        await page.goto(`${site.isolated.url}${file}.html`);
        await page.waitForSelector('body[data-result="ok"]', { timeout: 60_000 });
        await page.focus(`#${run}`);
        await page.keyboard.press('Enter');
        await page.waitForFunction((id) => /failed/i.test(document.getElementById(id)!.textContent!), status, { timeout: 20_000 });
        expect(await page.textContent(`#${status}`)).toMatch(/failed to start/);
        expect(await page.evaluate(() => document.getElementById('page-error')?.textContent ?? '')).toMatch(/worker failed/);
        expect(await page.evaluate(([r, c]) => [(document.getElementById(r) as HTMLButtonElement).disabled, (document.getElementById(c) as HTMLButtonElement).disabled], [run, cancel])).toEqual([false, true]);
        expect(await page.evaluate(() => document.activeElement?.id)).toBe(run);
        // The aborted script and the page's own report of it are the failures expected.
        expect(problems.filter((p) => !/Failed to load resource|^console error: \w+ worker failed$/.test(p))).toEqual([]);
      } finally {
        await ctx.close();
      }
    });
  }
});
