// The built site's translation page when its model does not arrive: a download that fails (a
// dropped connection) or one the learner cancels. The page says so once, in the model's status
// line, and offers Load again, which loads the same model without reloading the page; by keyboard,
// focus goes from Cancel to Load again and from Load again to Cancel.
import type { Page } from 'playwright-core';
import { expect, test } from 'vitest';
import { useSite } from './site-server';

const site = useSite('site-translation-retry');

/** The translation page with its model downloads failing (`'fail'`) or held (`'hold'`) until `let()`. */
async function page(first: 'fail' | 'hold'): Promise<{ page: Page; problems: string[]; requests: () => number; let(): void; close(): Promise<void> }> {
  const ctx = await site.browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: 'block' });
  let blocked = true;
  let requests = 0;
  let release = () => {};
  const released = new Promise<void>((r) => { release = r; });
  await ctx.route('**/*.atl', async (route) => {
    requests++;
    if (blocked && first === 'fail') return route.abort('internetdisconnected');
    if (blocked) await released;
    await route.continue().catch(() => undefined); // a cancelled download's Worker may be gone
  });
  const p = await ctx.newPage();
  const problems: string[] = [];
  // The aborted download's own line in the console is the browser's, not the page's.
  p.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console error: ${m.text()}`); });
  p.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  await p.goto(`${site.isolated.url}translation.html`);
  return { page: p, problems, requests: () => requests, let: () => { blocked = false; release(); }, close: () => ctx.close() };
}

const focused = (p: Page) => p.evaluate(() => document.activeElement?.id ?? null);
const translated = (p: Page) => p.waitForFunction(() => (document.getElementById('translate') as unknown as { result: unknown }).result !== null, undefined, { timeout: 60_000 });

test('translation: a failed model download is said once, by the status, with Load again, which loads it', async () => {
  const t = await page('fail');
  try {
    await t.page.waitForSelector('#retry-load:not([hidden])', { timeout: 45_000 });
    expect(await t.page.textContent('#model-status')).toMatch(/^The model failed to load: .*\. Choose Load again to retry\.$/);
    // In the site's error colour, and no page-wide alert repeating it.
    expect(await t.page.evaluate(() => {
      const ref = document.body.appendChild(Object.assign(document.createElement('p'), { className: 'error' }));
      const same = getComputedStyle(document.getElementById('model-status')!).color === getComputedStyle(ref).color;
      ref.remove();
      return same;
    })).toBe(true);
    expect(await t.page.$('#page-error')).toBeNull();
    t.let();
    await t.page.focus('#retry-load');
    await t.page.keyboard.press('Enter');
    expect(await focused(t.page)).toBe('cancel-load');
    await translated(t.page);
    expect(await t.page.textContent('#model-status')).toMatch(/^Model ready/);
    expect(await t.page.isHidden('#retry-load')).toBe(true);
    expect(await t.page.evaluate(() => document.body.dataset.result)).toBe('ok');
    expect(t.problems).toEqual([]);
  } finally {
    await t.close();
  }
}, 120_000);

test('translation: Cancel by keyboard puts focus on Load again, which loads the same model', async () => {
  const t = await page('hold');
  try {
    await expect.poll(t.requests, { timeout: 45_000 }).toBeGreaterThan(0);
    await t.page.focus('#cancel-load');
    await t.page.keyboard.press('Enter');
    expect(await t.page.textContent('#model-status')).toContain('Loading cancelled');
    expect(await focused(t.page)).toBe('retry-load');
    t.let();
    await t.page.keyboard.press('Enter');
    await translated(t.page);
    expect(await t.page.evaluate(() => (document.getElementById('arch') as HTMLSelectElement).value)).toBe('transformer');
    expect(t.problems).toEqual([]);
  } finally {
    await t.close();
  }
}, 120_000);
