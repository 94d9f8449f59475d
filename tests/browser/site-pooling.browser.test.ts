// The built site's pooling page: the bandwidth beside the slider is the one the <attn-regression>
// legend draws, written the same way, from a URL's h, after the slider moves and after training.
import type { Page } from 'playwright-core';
import { expect, test } from 'vitest';
import { pageProblems } from './helpers';
import { useSite } from './site-server';

const site = useSite('site-pooling');

/** The slider's readout, its spoken value, and the 'h = …' of the widget's legend. */
function shown(page: Page): Promise<{ out: string; spoken: string; legend: string }> {
  return page.evaluate(() => {
    const svgText = [...document.getElementById('regression')!.shadowRoot!.querySelectorAll('text')].map((t) => t.textContent).join(' ');
    return {
      out: document.getElementById('bandwidth-value')!.textContent!,
      spoken: document.getElementById('bandwidth')!.getAttribute('aria-valuetext')!,
      legend: /h = \S+?(?=\))/.exec(svgText)?.[0] ?? `no 'h = ' in the legend: ${svgText}`,
    };
  });
}

test('pooling: the bandwidth reads the same beside the slider as in the widget\'s legend, "h = 0.500"', async () => {
  const page = await site.browser.newPage({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
  const problems = pageProblems(page);
  const same = async (h: string) => expect(await shown(page)).toEqual({ out: `h = ${h}`, spoken: `h = ${h}`, legend: `h = ${h}` });

  // The default, h = 0.5: the slider's nearest position is 0.495.
  await page.goto(`${site.isolated.url}pooling.html`);
  await page.waitForSelector('body[data-result="ok"]', { timeout: 90_000 });
  await same('0.500');
  await page.goto(`${site.isolated.url}pooling.html#h=0.4`);
  await page.reload();
  await page.waitForSelector('body[data-result="ok"]', { timeout: 90_000 });
  await same('0.400');

  await page.focus('#bandwidth');
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => location.hash.includes('h=0.42'));
  const slid = (await shown(page)).out;
  expect(slid).toMatch(/^h = 0\.42\d$/);
  await same(slid.slice(4));

  await page.click('#train');
  await page.waitForSelector('#train-status[data-done="1"]', { timeout: 60_000 });
  const trained = (await shown(page)).out;
  expect(trained).not.toBe(slid);
  expect(await page.textContent('#train-status')).toContain(`Done: ${trained} (from`);
  await same(trained.slice(4));
  expect(problems).toEqual([]);
  await page.close();
}, 120_000);

test('pooling: training keeps h in the slider\'s range (0.05 to 3), so the trained view\'s link reopens on it', async () => {
  const page = await site.browser.newPage({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
  const problems = pageProblems(page);
  // y alternates 0, 2 every 0.5 along x: a point's neighbours have the other value, so the
  // leave-one-out loss falls as h grows (the mean of the rest); unbounded, training went to h = 4.8.
  const pts = Array.from({ length: 10 }, (_, i) => `${(0.25 + 0.5 * i).toFixed(2)}_${i % 2 ? '2.00' : '0.00'}`).join('~');
  await page.goto(`${site.isolated.url}pooling.html#pts=${pts}`);
  await page.waitForSelector('body[data-result="ok"]', { timeout: 90_000 });
  await page.click('#train');
  await page.waitForSelector('#train-status[data-done="1"]', { timeout: 60_000 });
  const trained = (await shown(page)).out;
  expect(trained).toBe('h = 3.000');
  // The hash is written 60 ms after a change (site/state.ts); the page reads h back only within
  // the slider's range, so an h past it reopened at the default 0.5.
  await page.waitForFunction(() => new URLSearchParams(location.hash.slice(1)).get('h') === '3.000');
  await page.reload();
  await page.waitForSelector('body[data-result="ok"]', { timeout: 90_000 });
  expect(await shown(page)).toEqual({ out: trained, spoken: trained, legend: trained });
  expect(problems).toEqual([]);
  await page.close();
}, 120_000);

test('pooling: a URL\'s n= outside the Points slider (5 to 100) is not taken, so the slider says how many points there are', async () => {
  const page = await site.browser.newPage({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
  const problems = pageProblems(page);
  const count = () => page.evaluate(() => ({
    slider: (document.getElementById('npoints') as HTMLInputElement).value,
    points: (document.getElementById('regression') as unknown as { points: unknown[] }).points.length,
  }));
  for (const [n, expected] of [['150', 40], ['3', 40], ['100', 100]] as const) {
    await page.goto(`${site.isolated.url}pooling.html#n=${n}`);
    await page.reload();
    await page.waitForSelector('body[data-result="ok"]', { timeout: 90_000 });
    // n=150 drew 150 points beside a slider that read 100 (n=3: 3 points, slider 5).
    expect(await count(), `#n=${n}`).toEqual({ slider: String(expected), points: expected });
  }
  expect(problems).toEqual([]);
  await page.close();
}, 120_000);
