// The "Real models" page of the built site (web/demo/models.ts) in Chromium: a tiny committed
// checkpoint opened through the file input runs in a Worker, its heads drawn in the head view and
// the model view with a summary of each head; generate streams tokens with their attention;
// BERT's [MASK] is filled; a URL load shows the size first and is cancelled mid-download; keyboard
// only; no console errors and no serious axe findings, light and dark.
import { fileURLToPath } from 'node:url';
import type { Page, Route } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { axe, ready, screenshot, visit } from './helpers';
import { useSite } from './site-server';

const fixture = (name: string, file: string) => fileURLToPath(new URL(`../pretrained/fixtures/${name}/${file}`, import.meta.url));

const site = useSite('models');

/** Evaluates `fn` on the element with this id (a string expression: the site's CSP forbids `new Function`). */
function on<T>(page: Page, id: string, fn: (el: any) => T): Promise<T> {
  return page.evaluate(`(${fn.toString()})(document.getElementById(${JSON.stringify(id)}))`) as Promise<T>;
}

const status = (page: Page) => page.evaluate(() => document.getElementById('status')!.dataset.state);

describe('Real models page', () => {
  test('a checkpoint from the file input: heads drawn, head summary, generation streamed, keyboard only', async () => {
    const v = await visit(site.browser, `${site.isolated.url}models.html`);
    await ready(v);
    const { page } = v;
    expect(await page.textContent('#tiny-note')).toContain('tiny random-weight checkpoints');
    expect(await page.isHidden('#model-panel')).toBe(true);
    await page.setInputFiles('#files', ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'].map((f) => fixture('gpt2-f32', f)));
    await page.waitForFunction(() => document.getElementById('status')!.dataset.state === 'ready' && document.querySelectorAll('#tokens li').length > 0);
    expect(await page.textContent('#summary')).toContain('GPT2LMHeadModel');
    expect(await page.textContent('#summary')).toContain('a Worker');
    expect(page.workers().length).toBeGreaterThan(0);
    const tokens = await page.$$eval('#tokens li', (li) => li.length);
    expect(await on(page, 'head-view', (el) => el.lineCount)).toBeGreaterThan(0);
    expect(await on(page, 'head-view', (el) => el.data.length)).toBe(4);
    expect(await on(page, 'model-view', (el) => el.data.map((l: number[][][]) => l.length))).toEqual([4, 4]);  // 2 layers of 4 heads
    // The summary table: one row per head (2 layers x 4 heads), each number a fraction.
    expect(await page.$$eval('#head-summary tr', (tr) => tr.length)).toBe(1 + 8);
    // Layer 2 redraws the head view with that layer's maps.
    const before = await on(page, 'head-view', (el) => JSON.stringify(el.data));
    await page.selectOption('#layer', { value: '1' });
    await page.waitForFunction(() => location.hash.includes('layer=1'));
    expect(await on(page, 'head-view', (el) => JSON.stringify(el.data))).not.toBe(before);
    // Generate by keyboard: focus the Generate button, press Enter; 12 tokens arrive one by one.
    await page.focus('#generate');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.getElementById('generated')!.dataset.count === '12', undefined, { timeout: 30_000 });
    expect(await page.$$eval('#generated .new', (s) => s.length)).toBe(12);
    // The head view follows the newest token: one query row over the prompt and the 11 tokens before it.
    const gen = await on(page, 'gen-head-view', (el) => ({ heads: el.data.length, rows: el.data[0].length, cols: el.data[0][0].length, lines: el.lineCount }));
    expect(gen).toEqual({ heads: 4, rows: 1, cols: tokens + 11, lines: expect.any(Number) });
    expect(gen.lines).toBeGreaterThan(0);
    // A new text by keyboard: type, Enter submits the form.
    await page.fill('#text', 'a b a b a b');
    await page.focus('#text');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('#tokens li').length === 11);
    await screenshot(page, 'models-light');
    expect(await axe(page)).toEqual([]);
    await page.close();
    expect(v.problems).toEqual([]);
  });

  test('the tiny BERT from the offline choices fills [MASK]; dark mode', async () => {
    const v = await visit(site.browser, `${site.isolated.url}models.html`, { colorScheme: 'dark' });
    await ready(v);
    const { page } = v;
    await page.selectOption('#tiny', 'bert');
    await page.click('#open-tiny');
    await page.waitForFunction(() => document.getElementById('status')!.dataset.state === 'ready' && document.querySelectorAll('#tokens li').length > 0);
    expect(await page.isHidden('#gen-panel')).toBe(true);
    expect(await page.isVisible('#mask-panel')).toBe(true);
    await page.fill('#mask-text', 'the cat sat on the [MASK] .');
    await page.click('#mask-form button');
    await page.waitForSelector('#mask-results li');
    expect(await page.textContent('#mask-results li')).toMatch(/^\[MASK\] at token 6 \(counting from 0\): .+ \(\d+\.\d%\)/);
    expect(await on(page, 'head-view', (el) => el.lineCount)).toBeGreaterThan(0);
    expect(await page.evaluate(() => location.hash)).toContain('tiny=bert');
    await screenshot(page, 'models-dark');
    expect(await axe(page)).toEqual([]);
    await page.close();
    expect(v.problems).toEqual([]);
  });

  test('files dropped on the drop zone open a checkpoint (GPT-Neo with tokenizer.json)', async () => {
    const v = await visit(site.browser, `${site.isolated.url}models.html`);
    await ready(v);
    const { page } = v;
    const { readFileSync } = await import('node:fs');
    const files = ['config.json', 'model.safetensors', 'tokenizer.json'].map((name) => ({ name, bytes: readFileSync(fixture('gpt-neo-f32', name)).toString('base64') }));
    await page.evaluate((list) => {
      const dt = new DataTransfer();
      for (const f of list) dt.items.add(new File([Uint8Array.from(atob(f.bytes), (c) => c.charCodeAt(0))], f.name));
      document.getElementById('drop')!.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, files);
    await page.waitForFunction(() => document.getElementById('status')!.dataset.state === 'ready' && document.querySelectorAll('#tokens li').length > 0);
    expect(await page.textContent('#summary')).toContain('GPTNeoForCausalLM');
    expect(await on(page, 'head-view', (el) => el.lineCount)).toBeGreaterThan(0);
    await page.close();
    expect(v.problems).toEqual([]);
  });

  test('a URL: the size is shown before the download, and Cancel stops the download', async () => {
    // No service worker: requests it answered would bypass the route below.
    const page = await site.browser.newPage({ serviceWorkers: 'block' });
    const problems: string[] = [];
    page.on('console', (m) => { if (m.type() === 'error' && !m.location().url.endsWith('/tokenizer.json')) problems.push(m.text()); });
    page.on('pageerror', (e) => problems.push(e.message));
    const weights = await import('node:fs').then((fs) => fs.readFileSync(fixture('gpt2-f32', 'model.safetensors')));
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    let downloads = 0;
    // A checkpoint folder on the site's origin (the CSP's connect-src allows it); the weights'
    // GET never answers until the test ends, as a slow network would.
    await page.route('**/remote/**', async (route: Route) => {
      const url = route.request().url();
      for (const f of ['config.json', 'vocab.json', 'merges.txt']) if (url.endsWith(f)) return route.fulfill({ path: fixture('gpt2-f32', f) });
      if (url.endsWith('model.safetensors') && route.request().method() === 'HEAD')
        return route.fulfill({ status: 200, headers: { 'content-length': String(weights.length) }, body: '' });
      if (url.endsWith('model.safetensors')) {
        downloads++;
        await held;
        return route.abort().catch(() => undefined);
      }
      return route.fulfill({ status: 404, body: 'not found' });
    });
    await page.goto(`${site.isolated.url}models.html`);
    await page.waitForSelector('body[data-result="ok"]');
    // Nothing typed: a prompt, not a request for the page's own folder.
    await page.click('#check-url');
    expect(await page.textContent('#status')).toMatch(/^Type a checkpoint folder's URL first/);
    await page.fill('#url', 'not a url');
    await page.click('#check-url');
    expect(await page.textContent('#status')).toBe('Not an http(s) URL: not a url');
    await page.fill('#url', `${site.isolated.url}remote/`);
    expect(await page.isDisabled('#open-url')).toBe(true);
    await page.click('#check-url');
    await page.waitForFunction(() => document.getElementById('status')!.dataset.state === 'checked');
    expect(downloads).toBe(0);  // nothing downloaded before the learner asks
    expect(await page.textContent('#open-url')).toBe(`Download ${(weights.length / 1e6).toFixed(2)} MB and open`);
    await page.click('#open-url');
    await expect.poll(() => downloads).toBe(1);
    expect(await status(page)).toBe('loading');
    await page.click('#cancel');
    await page.waitForFunction(() => document.getElementById('status')!.dataset.state === 'cancelled');
    expect(await page.isHidden('#model-panel')).toBe(true);
    release();
    // The page still opens a model afterwards.
    await page.click('#open-tiny');
    await page.waitForFunction(() => document.getElementById('status')!.dataset.state === 'ready');
    await page.close();
    expect(problems).toEqual([]);
  });

  test('a checkpoint opened from a URL is kept: the next visit opens it without downloading', async () => {
    const context = await site.browser.newContext({ serviceWorkers: 'block' });
    const page = await context.newPage();
    const problems: string[] = [];
    // The tiny BERT answers tokenizer.json with 404 and has vocab.txt (the page then asks for it).
    page.on('console', (m) => { if (m.type() === 'error' && !m.location().url.endsWith('/tokenizer.json')) problems.push(m.text()); });
    page.on('pageerror', (e) => problems.push(e.message));
    const gets: string[] = [];
    await context.route('**/kept/**', async (route: Route) => {
      const name = new URL(route.request().url()).pathname.split('/').pop()!;
      if (route.request().method() === 'GET') gets.push(name);
      if (!['config.json', 'vocab.txt', 'model.safetensors'].includes(name)) return route.fulfill({ status: 404, body: 'not found' });
      const { statSync } = await import('node:fs');
      return route.fulfill({ path: fixture('bert-mlm-bf16', name), headers: { 'content-length': String(statSync(fixture('bert-mlm-bf16', name)).size) } });
    });
    const openIt = async () => {
      await page.goto(`${site.isolated.url}models.html`);
      await page.waitForSelector('body[data-result="ok"]');
      await page.fill('#url', `${site.isolated.url}kept/`);
      await page.click('#check-url');
      await page.waitForFunction(() => document.getElementById('status')!.dataset.state === 'checked');
      const label = await page.textContent('#open-url');
      await page.click('#open-url');
      await page.waitForFunction(() => document.getElementById('status')!.dataset.state === 'ready' && document.querySelectorAll('#tokens li').length > 0);
      expect(await page.textContent('#summary')).toContain('BertForMaskedLM');
      return label;
    };
    expect(await openIt()).toMatch(/^Download 0\.05 MB and open$/);
    expect(gets.filter((g) => g === 'model.safetensors')).toHaveLength(1);
    // The cache is written as the download streams: wait until it holds the weights.
    await page.waitForFunction(async () => !!(await (await caches.open('attnlab-checkpoints')).match(`${location.origin}/kept/model.safetensors`)));
    expect(await openIt()).toBe('Open (kept from an earlier visit, 0.05 MB)');
    expect(gets.filter((g) => g === 'model.safetensors')).toHaveLength(1);
    await context.close();
    expect(problems).toEqual([]);
  });
});
