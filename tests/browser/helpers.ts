// Shared by the site's browser tests: Chromium launch, page visits that collect console errors,
// axe-core, screenshots.
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './chromium';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
export const screenshotDir = fileURLToPath(new URL('../../build/screenshots/', import.meta.url));

export function launch(): Promise<Browser> {
  return launchChromium();
}

export interface Visit {
  page: Page;
  problems: string[];
}

/** The page's console errors and uncaught exceptions from now on, as they come. */
export function pageProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  return problems;
}

/**
 * Opens `url` in a new page of `browser`, waits (up to 100 s) for the JSON its script leaves in
 * body[data-result], and returns it (null if none came) with the page's uncaught errors.
 */
export async function pageResult<T = any>(browser: Browser, url: string): Promise<{ result: T; errors: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    await page.goto(url);
    await page.waitForFunction(() => document.body.dataset.result || null, null, { timeout: 100_000 }).catch(() => {});
    return { result: JSON.parse((await page.evaluate(() => document.body.dataset.result)) ?? 'null') as T, errors };
  } finally {
    await page.close();
  }
}

/**
 * Runs `fn` on each item, two at a time, and waits for all of them: for a test's loop over pages,
 * each in a context of its own, so that one page loads while another sits out its fixed wait
 * (Chromium renders and runs animation frames in every page at once). Throws the first error, once
 * every call has ended (none is left running into the next test).
 */
export async function eachTwoAtATime<T>(items: readonly T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const errors: unknown[] = [];
  const lane = async () => {
    while (next < items.length) await fn(items[next++]).catch((e: unknown) => { errors.push(e); });
  };
  await Promise.all([lane(), lane()]);
  if (errors.length) throw errors[0];
}

/** Opens `url` and records console errors, uncaught exceptions, failed requests and HTTP errors. */
export async function visit(browser: Browser, url: string, opts: { colorScheme?: 'light' | 'dark'; width?: number } = {}): Promise<Visit> {
  const page = await browser.newPage({ viewport: { width: opts.width ?? 1280, height: 900 }, colorScheme: opts.colorScheme ?? 'light' });
  const problems = pageProblems(page);
  page.on('requestfailed', (r) => {
    // An iframe navigated away mid-load, or a download we started, is not a failure.
    if (r.failure()?.errorText === 'net::ERR_ABORTED') return;
    problems.push(`request failed: ${r.url()} (${r.failure()?.errorText})`);
  });
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
  // Anything the site's Content-Security-Policy refuses, named (Chromium's own message is terse).
  await page.addInitScript(() => document.addEventListener('securitypolicyviolation', (e) =>
    console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline code'}`)));
  await page.goto(url);
  return { page, problems };
}

/** Waits for the page's own "ready" signal (body[data-result]) and checks it says ok. */
export async function ready(v: Visit, timeout = 45_000): Promise<void> {
  await v.page.waitForSelector('body[data-result]', { timeout }).catch((e: Error) => {
    throw new Error(`${e.message}\n${v.problems.join('\n')}`);
  });
  const result = await v.page.evaluate(() => document.body.dataset.result);
  if (result !== 'ok') {
    const err = await v.page.evaluate(() => document.getElementById('page-error')?.textContent ?? document.getElementById('error')?.textContent ?? '');
    throw new Error(`page reported ${result}: ${err}\n${v.problems.join('\n')}`);
  }
}

/**
 * Waits until a ready demo page has settled, instead of sleeping a fixed time that a loaded
 * machine outlasts: no model still loading or translating (the pages' data-state, a translator
 * widget without its first result), its fonts loaded, and then nothing in it (its DOM and its
 * widgets' shadow DOM) changed for 3 animation frames running, so the widgets' queued redraws and
 * the results that land just after ready (a chart computed in slices) are in.
 */
export async function settled(page: Page, timeout = 60_000): Promise<void> {
  await page.waitForFunction(() => document.fonts.status === 'loaded'
    && !document.querySelector('[data-state="loading"], [data-state="translating"], [data-state="checking"]')
    && [...document.querySelectorAll('attn-translate')].every((t) => {
      const w = t as unknown as { translator: unknown; result: unknown };
      return !w.translator || w.result !== null;
    }), undefined, { timeout });
  await page.evaluate((timeout) => new Promise<void>((resolve, reject) => {
    let changed = true, quiet = 0;
    const seen = new MutationObserver(() => { changed = true; });
    const watch = (root: Document | ShadowRoot) => {
      seen.observe(root, { subtree: true, childList: true, attributes: true, characterData: true });
      root.querySelectorAll('*').forEach((e) => { if (e.shadowRoot) watch(e.shadowRoot); });
    };
    watch(document);
    const give = setTimeout(() => { seen.disconnect(); reject(new Error(`settled: the page still changed every few frames after ${timeout} ms`)); }, timeout);
    const frame = () => {
      quiet = changed ? 0 : quiet + 1;
      changed = false;
      if (quiet < 3) requestAnimationFrame(frame);
      else {
        clearTimeout(give);
        seen.disconnect();
        resolve();
      }
    };
    requestAnimationFrame(frame);
  }), timeout);
}

const axeSource = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** axe-core on the page; returns the serious and critical violations. */
export async function axe(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol, which the site's CSP does not govern (an inline
  // <script> tag would be refused, as it should be).
  await page.evaluate(await axeSource);
  const all = await page.evaluate(async () => {
    const a = (window as unknown as { axe: { run: (ctx: Document, o: object) => Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] }> } }).axe;
    const r = await a.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => JSON.stringify(n.target)) }));
  });
  return all.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(screenshotDir, { recursive: true });
  await page.screenshot({ path: `${screenshotDir}${name}.png`, fullPage: true });
}
