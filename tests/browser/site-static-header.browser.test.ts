// The site header is in every page's HTML (web/demo/site/static-header.ts, at build time), so it
// paints with the page's title and lead text; it used to be built by the page's script, 0.3-0.6 s
// after the first paint, pushing that text down. The pages' module scripts are held back here
// until the checks that need them not to have run yet are done (state, not timing).
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { PAGES } from '../../web/demo/site/pages';
import { pageProblems } from './helpers';
import { useSite } from './site-server';

const site = useSite('site-static-header');

const FILES = ['index.html', ...PAGES.map((p) => p.file)];
const LINKS = PAGES.filter((p) => p.ready).map((p) => ({ href: `./${p.file}`, text: p.short }));

/** A page whose module scripts (and so the site's shell) wait for release(); the classic first-paint script does not. */
async function heldPage(ctx: BrowserContext): Promise<{ page: Page; release: () => void; problems: string[] }> {
  let release!: () => void;
  const held = new Promise<void>((r) => { release = r; });
  await ctx.route('**/assets/*.js', async (route) => {
    if (!/\/first-paint-\w+\.js$/.test(route.request().url())) await held;
    await route.continue();
  });
  const page = await ctx.newPage();
  return { page, release, problems: pageProblems(page) };
}

/** Runs `body` in a fresh context without the service worker; its routes stop (requests still in them, the library and Workers, would throw) and it closes after. */
async function inContext(viewport: { width: number; height: number }, body: (ctx: BrowserContext) => Promise<void>): Promise<void> {
  const ctx = await site.browser.newContext({ viewport, serviceWorkers: 'block' });
  try {
    await body(ctx);
  } finally {
    await ctx.unrouteAll({ behavior: 'ignoreErrors' });
    await ctx.close();
  }
}

/** Parsed, the stylesheet applied, the module scripts not yet run (they run after readyState turns 'interactive'). */
const parsedAndStyled = (page: Page) => page.waitForFunction(() => document.readyState !== 'loading' && Boolean(document.querySelector<HTMLLinkElement>('link[rel="stylesheet"]')?.sheet), undefined, { timeout: 30_000 });

describe('static site header', () => {
  test('every page\'s HTML holds the skip link, the header, the path (its own page current) and the theme switch; once the script runs there is one header', async () => {
    await inContext({ width: 1280, height: 900 }, async (ctx) => {
      const { page, release, problems } = await heldPage(ctx);
      await page.goto(`${site.isolated.url}index.html`, { waitUntil: 'commit' });
      await parsedAndStyled(page);
      // The HTML as served, parsed without running anything (DOMParser runs no scripts).
      const served = await page.evaluate((files) => Promise.all(files.map(async (file) => {
        const doc = new DOMParser().parseFromString(await (await fetch(`./${file}`)).text(), 'text/html');
        const header = doc.querySelector('header.site');
        const menu = doc.getElementById('site-menu');
        return {
          file,
          headers: doc.querySelectorAll('header').length,
          // first-paint.js (which hides the header in an embedded view), the skip link, the header, the page.
          body: [...doc.body.children].map((e) => (e.matches('script:not([type])') ? 'classic script' : e.matches('main#main') ? 'main' : e.outerHTML)).slice(0, 3),
          main: doc.body.children[3]?.matches('main#main'),
          brand: header?.querySelector('a.brand')?.outerHTML,
          links: [...(header?.querySelectorAll('nav[aria-label="Guided path"] li a') ?? [])].map((a) => ({ href: a.getAttribute('href'), text: a.textContent })),
          current: [...(header?.querySelectorAll('[aria-current]') ?? [])].map((a) => `${a.getAttribute('href')} ${a.getAttribute('aria-current')}`),
          toggle: header?.querySelector('button.menu-toggle')?.outerHTML,
          menuHolds: menu ? [...menu.children].map((c) => c.tagName) : null,
          theme: [...doc.querySelectorAll('#theme-select option')].map((o) => (o as HTMLOptionElement).value),
        };
      })), FILES);
      expect(served).toEqual(FILES.map((file) => ({
        file,
        headers: 1,
        body: ['classic script', '<a class="skip" href="#main">Skip to content</a>', expect.stringMatching(/^<header class="site">/)],
        main: true,
        brand: `<a href="./index.html" class="brand"${file === 'index.html' ? ' aria-current="page"' : ''}>attnlab</a>`,
        links: LINKS,
        current: [`./${file} page`],
        toggle: '<button type="button" class="menu-toggle" aria-expanded="false" aria-controls="site-menu">Menu</button>',
        menuHolds: ['NAV', 'SELECT'],
        theme: ['auto', 'light', 'dark'],
      })));
      // On the screen before any module script has run.
      expect(await page.evaluate(() => [...document.querySelectorAll('header.site nav a')].filter((a) => a.checkVisibility()).length)).toBe(LINKS.length);
      release();
      // The shell has run once the footer it adds is there: the header found and wired, not built again.
      await page.waitForSelector('footer.site', { timeout: 30_000 });
      expect(await page.evaluate(() => ({ headers: document.querySelectorAll('header').length, skip: document.querySelectorAll('a.skip').length, theme: document.querySelectorAll('#theme-select').length })))
        .toEqual({ headers: 1, skip: 1, theme: 1 });
      await page.selectOption('#theme-select', 'dark');
      await expect.poll(() => page.getAttribute('html', 'data-theme')).toBe('dark');
      expect(problems).toEqual([]);
    });
  }, 60_000);

  test('an embedded view (#embed=1) hides the header from its first paint, before its module scripts run, and then removes it', async () => {
    await inContext({ width: 800, height: 600 }, async (ctx) => {
      const { page, release, problems } = await heldPage(ctx);
      await page.goto(`${site.isolated.url}pooling.html#embed=1`, { waitUntil: 'commit' });
      await parsedAndStyled(page);
      expect(await page.evaluate(() => ({
        embed: document.documentElement.classList.contains('embed'),
        shown: [...document.querySelectorAll('header.site, a.skip')].map((e) => `${e.tagName} ${e.checkVisibility()}`),
      }))).toEqual({ embed: true, shown: ['A false', 'HEADER false'] });
      release();
      await page.waitForFunction(() => !document.querySelector('header, a.skip'), undefined, { timeout: 30_000 });
      expect(problems).toEqual([]);
    });
  }, 60_000);

  test('a chosen theme is in force from the first paint, before the module scripts run: the kept choice, or the hash\'s', async () => {
    await inContext({ width: 800, height: 600 }, async (ctx) => {
      // The visitor chose dark on an earlier visit; the system's theme is light.
      await ctx.addInitScript(() => localStorage.setItem('attnlab-theme', 'dark'));
      const { page, release, problems } = await heldPage(ctx);
      const hashed = await ctx.newPage();
      await page.goto(`${site.isolated.url}scoring.html`, { waitUntil: 'commit' });
      await hashed.goto(`${site.isolated.url}scoring.html#theme=light`, { waitUntil: 'commit' });
      await parsedAndStyled(page);
      await parsedAndStyled(hashed);
      const theme = (p: Page) => p.evaluate(() => document.documentElement.dataset.theme ?? 'auto');
      expect([await theme(page), await theme(hashed)]).toEqual(['dark', 'light']);
      release();
      await page.waitForSelector('footer.site', { timeout: 30_000 });
      expect([await theme(page), await page.inputValue('#theme-select')]).toEqual(['dark', 'dark']);
      expect(problems).toEqual([]);
    });
  }, 60_000);
});
