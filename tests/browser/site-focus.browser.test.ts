// The built demo site's long computations by keyboard alone: a Run button disables itself while its
// work runs and its Cancel (or Stop) disables itself when the work ends. A focused button that
// becomes disabled drops focus to the page; a keyboard or screen-reader user then has lost their
// place and cannot reach Cancel with Enter. Focus must move between the two instead.
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { pageProblems } from './helpers';
import { useSite } from './site-server';

const site = useSite('site-focus');

/** The focused element's id, '(page)' when focus fell to the body. */
const focused = (page: Page) => page.evaluate(() => (document.activeElement && document.activeElement !== document.body ? document.activeElement.id : '(page)'));

async function open(path: string): Promise<{ page: Page; problems: string[]; close(): Promise<void> }> {
  const ctx = await site.browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: 'block' });
  const page = await ctx.newPage();
  const problems = pageProblems(page);
  await page.goto(`${site.isolated.url}${path}`);
  await page.waitForSelector('body[data-result="ok"]', { timeout: 60_000 });
  return { page, problems, close: () => ctx.close() };
}

// page, its Run button, its Cancel button, its status line, the status's text once cancelled.
const LONG: [string, string, string, string, RegExp][] = [
  ['pooling', 'train', 'cancel', 'train-status', /^Cancelled after step/],
  ['efficient', 'run-cost', 'cancel-cost', 'cost-status', /^Cancelled\.$/],
  ['performance', 'run', 'cancel', 'bench-status', /^Cancelled (after|before)/],
];

describe('site long work by keyboard', () => {
  for (const [file, run, cancel, status, cancelled] of LONG) {
    test(`${file}: Enter on Run moves focus to Cancel; Enter on Cancel stops the work and moves focus back to Run`, async () => {
      const p = await open(`${file}.html`);
      try {
        await p.page.focus(`#${run}`);
        await p.page.keyboard.press('Enter');
        await p.page.waitForFunction((id) => (document.getElementById(id) as HTMLButtonElement).disabled, run);
        expect(await focused(p.page)).toBe(cancel);
        await p.page.keyboard.press('Enter');
        await p.page.waitForFunction((id) => !(document.getElementById(id) as HTMLButtonElement).disabled, run);
        expect(await p.page.textContent(`#${status}`)).toMatch(cancelled);
        expect(await focused(p.page)).toBe(run);
        expect(p.problems).toEqual([]);
      } finally {
        await p.close();
      }
    });
  }

  test('pooling: when training ends on its own, focus goes from Cancel back to Train', async () => {
    const p = await open('pooling.html');
    try {
      await p.page.focus('#train');
      await p.page.keyboard.press('Enter');
      await p.page.waitForSelector('#train-status[data-done]', { timeout: 30_000 });
      expect(await focused(p.page)).toBe('train');
      expect(p.problems).toEqual([]);
    } finally {
      await p.close();
    }
  });

  test('heads: loading the trained model by keyboard, focus goes to Cancel; cancelled, back to the load button; loaded, to the button that switches back', async () => {
    const p = await open('heads.html#model=untrained');
    try {
      // Held until released: there is time to cancel.
      let release = () => {};
      const released = new Promise<void>((r) => { release = r; });
      await p.page.context().route('**/*.atl', async (route) => {
        await released;
        await route.continue().catch(() => undefined); // the cancelled load's request may be gone
      });
      await p.page.focus('#use-trained');
      await p.page.keyboard.press('Enter');
      await p.page.waitForSelector('#load-status[data-state="loading"]');
      expect(await focused(p.page)).toBe('cancel-load');
      await p.page.keyboard.press('Enter');
      await p.page.waitForSelector('#load-status[data-state="cancelled"]');
      expect(await focused(p.page)).toBe('use-trained');
      release();
      await p.page.keyboard.press('Enter');
      expect(await focused(p.page)).toBe('cancel-load');
      await p.page.waitForSelector('#load-status[data-state="ready"]', { timeout: 60_000 });
      expect(await focused(p.page)).toBe('use-untrained');
      expect(p.problems).toEqual([]);
    } finally {
      await p.close();
    }
  });

  test('models: generating by keyboard, focus goes to Stop and, as the text ends, back to Generate', async () => {
    const p = await open('models.html');
    try {
      await p.page.click('#open-tiny');
      await p.page.waitForFunction(() => document.getElementById('status')!.dataset.state === 'ready' && document.querySelectorAll('#tokens li').length > 0, undefined, { timeout: 30_000 });
      // Where focus is while the tokens arrive, and after.
      await p.page.evaluate(() => {
        const seen: string[] = [];
        (window as unknown as { seen: string[] }).seen = seen;
        new MutationObserver(() => seen.push(document.activeElement?.id || '(page)')).observe(document.getElementById('generated')!, { childList: true });
      });
      await p.page.focus('#generate');
      await p.page.keyboard.press('Enter');
      await p.page.waitForFunction(() => document.getElementById('generated')!.dataset.count === '12', undefined, { timeout: 30_000 });
      await p.page.waitForFunction(() => !(document.getElementById('generate') as HTMLButtonElement).disabled);
      const seen = await p.page.evaluate(() => (window as unknown as { seen: string[] }).seen);
      expect(seen.length).toBeGreaterThanOrEqual(12);
      expect(seen.filter((id) => id !== 'stop')).toEqual([]);
      expect(await focused(p.page)).toBe('generate');
      expect(p.problems).toEqual([]);
    } finally {
      await p.close();
    }
  });
});
