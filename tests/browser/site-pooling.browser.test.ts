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
