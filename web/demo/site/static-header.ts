// The site header, written into every page's HTML by Vite (the build and the dev server alike)
// from the page list the site uses (pages.ts): the header paints with the page's title and lead
// text instead of after the page's script has run, which pushed that text down (layout shift).
// shell.ts finds it and wires it up (theme, Menu button, skip link) or, in an embedded view,
// removes it; before that, first-paint.js has hidden it there (site.css).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { Plugin } from 'vite';
import { PAGES } from './pages';

const THEMES = [['auto', 'Theme: system'], ['light', 'Theme: light'], ['dark', 'Theme: dark']] as const;

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function tag(name: string, attrs: Record<string, string | undefined>, inner = ''): string {
  const a = Object.entries(attrs).filter(([, v]) => v !== undefined).map(([k, v]) => ` ${k}="${escape(v!)}"`).join('');
  return `<${name}${a}>${inner}</${name}>`;
}

/**
 * The header's markup for the page `file` ('pooling.html'), the link to it marked as the current
 * page. No white space between elements, as in the header the script used to build.
 */
export function headerHtml(file: string): string {
  const current = (f: string) => (f === file ? 'page' : undefined);
  const links = PAGES.filter((p) => p.ready).map((p) => tag('li', {}, tag('a', { href: `./${p.file}`, 'aria-current': current(p.file) }, escape(p.short))));
  const theme = tag('select', { id: 'theme-select', 'aria-label': 'Colour theme' }, THEMES.map(([v, label]) => tag('option', { value: v }, label)).join(''));
  return tag('div', { class: 'wrap' }, [
    tag('a', { href: './index.html', class: 'brand', 'aria-current': current('index.html') }, 'attnlab'),
    // Folded (site.css) from the first paint on a narrow screen, as the script would leave it:
    // unfolded first, the path's five rows would push the page down once the script ran.
    tag('button', { type: 'button', class: 'menu-toggle', 'aria-expanded': 'false', 'aria-controls': 'site-menu' }, 'Menu'),
    tag('div', { id: 'site-menu', class: 'menu' }, tag('nav', { 'aria-label': 'Guided path' }, tag('ol', {}, links.join(''))) + theme),
  ].join(''));
}

// Its comments stay out of the built file: it is fetched before the first paint.
const firstPaintSource = readFileSync(new URL('./first-paint.js', import.meta.url), 'utf8').replace(/^\/\/.*\n/gm, '');
/** first-paint.js in the built site: content-hashed as Vite names its assets, so cached for good. */
export const FIRST_PAINT_FILE = `assets/first-paint-${createHash('sha256').update(firstPaintSource).digest('hex').slice(0, 8)}.js`;

// The stylesheets Vite's build adds at the end of a page's <head> (the dev server injects them from script).
const STYLESHEET = /\s*<link rel="stylesheet"[^>]*>/g;

/**
 * Every page gets its stylesheet and a preload of first-paint.js at the top of its <head>, and
 * first-paint.js (parser-blocking), the skip link and the header as the first things in its
 * <body>. Measured in tests/bench/site_paint.mjs (tests/bench/results/site-paint-header-2026-11-30.md),
 * each for a reason:
 *   - the stylesheet first: the first paint waits for it, and behind the page's modules (2-6
 *     files, 20-35 kB gzipped, all at once on a slow network) it came last; with the script in
 *     front of it, that cost 150-300 ms of first paint;
 *   - the script in <body>, not <head>: while the parser waits in <head>, Chromium holds back
 *     the page's modules, and the page was ready 150-190 ms later;
 *   - preloaded: found only in <body>, it queued behind the modules, 25-130 ms of first paint.
 * Listed before the CSP plugin in vite.config.ts: each plugin's head-prepend goes first, so the
 * policy's <meta>, prepended later, stays ahead of what it governs.
 */
export function staticHeader(): Plugin {
  let built = false;
  return {
    name: 'attnlab-static-header',
    configResolved(config) {
      built = config.command === 'build';
    },
    buildStart() {
      if (built) this.emitFile({ type: 'asset', fileName: FIRST_PAINT_FILE, source: firstPaintSource });
    },
    transformIndexHtml(html, ctx) {
      const sheets = (html.match(STYLESHEET) ?? []).map((l) => l.trim());
      // The dev server serves the source file itself (with its headers, as any module).
      const src = built ? `./${FIRST_PAINT_FILE}` : './site/first-paint.js';
      return {
        html: html.replace(STYLESHEET, '').replace(/<head>/, (head) => [head, ...sheets, `<link rel="preload" as="script" href="${src}">`].join('\n    ')),
        tags: [
          { tag: 'script', attrs: { src }, injectTo: 'body-prepend' },
          { tag: 'a', attrs: { class: 'skip', href: '#main' }, children: 'Skip to content', injectTo: 'body-prepend' },
          { tag: 'header', attrs: { class: 'site' }, children: headerHtml(basename(ctx.filename)), injectTo: 'body-prepend' },
        ],
      };
    },
  };
}
