// What every page shares: the header with the guided path and theme switch (in the page's HTML,
// static-header.ts; wired up here), embed mode (hash embed=1) with its height report to the parent
// window, the footer with the engine status line, and visible errors.
import type { Attnlab, LoadOptions } from 'attnlab';
import { setSharedLib } from '../../components/lib';
import { el } from './dom';
import { workersFromBlobsInOpaqueOrigins } from './opaque-origin';
import { readHash } from './state';
import './site.css';

workersFromBlobsInOpaqueOrigins();

type Theme = 'auto' | 'light' | 'dark';
const THEME_KEY = 'attnlab-theme';  // read before the first paint too, by first-paint.js

function applyTheme(theme: Theme): void {
  if (theme === 'auto') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
}

/** The theme: the hash's `theme` wins (embeds), then the visitor's choice, then the system. */
function initialTheme(): Theme {
  const h = readHash().get('theme');
  if (h === 'light' || h === 'dark') return h;
  try {
    const s = localStorage.getItem(THEME_KEY);
    if (s === 'light' || s === 'dark' || s === 'auto') return s;
  } catch { /* storage may be blocked in an iframe */ }
  return 'auto';
}

export const embedded = readHash().get('embed') === '1';

/** The element of the site header (in every page's HTML: static-header.ts) that `selector` names. */
function chrome<T extends Element>(file: string, selector: string): T {
  const e = document.querySelector<T>(selector);
  if (!e) throw new Error(`initPage('${file}'): the page has no ${selector}; every page's HTML gets the site header from web/demo/site/static-header.ts (its Vite plugin)`);
  return e;
}

/** The theme switch in the header: shows the theme in force and applies and keeps a new choice. */
function wireTheme(theme: HTMLSelectElement): void {
  theme.value = initialTheme();
  theme.addEventListener('change', () => {
    const v = theme.value as Theme;
    applyTheme(v);
    try { localStorage.setItem(THEME_KEY, v); } catch { /* ignore */ }
  });
}

/**
 * On a narrow screen the path and the theme switch fold behind this button (site.css; it is hidden
 * on a wide one): unfolded they took five rows, 188 px of a 740 px phone. The stylesheet folds the
 * menu only while the button says aria-expanded="false", so the list never hides without its button.
 */
function wireMenuToggle(button: HTMLButtonElement, menu: HTMLElement): void {
  const open = (yes: boolean) => button.setAttribute('aria-expanded', String(yes));
  button.addEventListener('click', () => open(button.getAttribute('aria-expanded') !== 'true'));
  // Escape from the button or anywhere in the open menu folds it and hands focus back to the
  // button; not on a wide screen, where nothing is folded and the button is hidden.
  const escape = (e: KeyboardEvent) => {
    if (e.key !== 'Escape' || button.getAttribute('aria-expanded') !== 'true' || getComputedStyle(button).display === 'none') return;
    open(false);
    button.focus();
  };
  button.addEventListener('keydown', escape);
  menu.addEventListener('keydown', escape);
}

function reportHeight(): void {
  if (window.parent === window) return;
  let last = 0;
  const send = () => {
    // The page's own height: scrollHeight never drops below the frame's, so a frame never shrank.
    const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (height === last) return;
    last = height;
    window.parent.postMessage({ type: 'attnlab:height', height, href: location.href }, '*');
  };
  new ResizeObserver(send).observe(document.body);
  window.addEventListener('load', send);
  send();
}

/** "embed this view": the embed page, given this page and its current state (read when followed). */
function embedLink(file: string): HTMLAnchorElement {
  const a = el('a', { href: './embed.html', text: 'embed this view' });
  if (file === 'embed.html') return a;
  const follow = () => {
    const view = location.hash.replace(/^#/, '');
    a.href = `./embed.html#${new URLSearchParams({ page: file, ...(view ? { view } : {}) })}`;
  };
  a.addEventListener('click', follow);
  a.addEventListener('focus', follow);
  a.addEventListener('pointerenter', follow);
  return a;
}

let failed = false;
export function showError(err: unknown): void {
  const message = err instanceof Error || err instanceof ErrorEvent ? err.message : String(err);
  console.error(err);
  if (failed) return;
  failed = true;
  const box = document.getElementById('page-error') ?? el('p', { id: 'page-error', role: 'alert', class: 'error' });
  box.textContent = `Something went wrong: ${message}`;
  document.querySelector('main')?.prepend(box);
  document.body.dataset.result = document.body.dataset.result ?? 'error';
}

/**
 * A keyboard user's first Tab: past the header's stops (eleven on a wide screen), straight to the page. It moves
 * focus itself rather than follow #main: the pages keep their view's state in the URL's hash.
 */
function wireSkipLink(a: HTMLAnchorElement): void {
  a.addEventListener('click', (e) => {
    const main = document.getElementById('main');
    if (!main) return;
    e.preventDefault();
    main.tabIndex = -1;
    main.focus();
  });
}

let libraryModule: Promise<typeof import('attnlab')> | null = null;

/**
 * The attnlab module. Imported, not a static import: a page builds and paints itself from its own
 * small modules while the library (54 kB gzipped) downloads.
 */
export function attnlab(): Promise<typeof import('attnlab')> {
  libraryModule ??= import('attnlab');
  return libraryModule;
}

/**
 * Sets up the page chrome; `file` is this page's file name (for the footer's embed link). Unless the page
 * says it needs no library to start (`library: false`), the library starts downloading now, while
 * the page builds itself, rather than when it asks for it.
 */
export function initPage(file: string, { library = true } = {}): void {
  // Failures are reported by whoever awaits the module (getLib), not here as well.
  if (library) attnlab().catch(() => undefined);
  applyTheme(initialTheme());
  if (embedded) {
    // Hidden since the first paint (first-paint.js, site.css); gone, so not even its links are there.
    document.documentElement.classList.add('embed');
    document.querySelectorAll('header.site, a.skip').forEach((e) => e.remove());
  } else {
    wireSkipLink(chrome(file, 'a.skip'));
    wireTheme(chrome(file, '#theme-select'));
    wireMenuToggle(chrome(file, 'header.site .menu-toggle'), chrome(file, '#site-menu'));
  }
  const foot = el('footer', { class: 'site' }, el('div', { class: 'wrap' },
    el('span', { id: 'engine', text: 'attnlab: loading…' }), ' · ',
    el('a', { href: './index.html', text: 'attnlab home' }), ' · ',
    el('a', { href: './api/index.html', text: 'API reference' }), ' · ',
    embedLink(file)));
  if (!embedded) document.body.append(foot);
  window.addEventListener('error', (e) => showError(e.error ?? e.message));
  window.addEventListener('unhandledrejection', (e) => showError(e.reason));
  reportHeight();
  // A box that scrolls sideways (a wide equation, a code sample, a table) must be reachable by keyboard.
  // A formula also shows that it scrolls: classes more-left and more-right draw a shadow at each
  // edge with more of it past that edge (site.css); a formula that fits gets neither.
  const edges = (e: Element) => {
    const over = e.scrollWidth - e.clientWidth;
    e.classList.toggle('more-left', over > 1 && e.scrollLeft > 1);
    e.classList.toggle('more-right', over > 1 && e.scrollLeft < over - 1);
  };
  document.addEventListener('scroll', (e) => { if (e.target instanceof MathMLElement) edges(e.target); }, { capture: true, passive: true });
  const focusScrollers = () => document.querySelectorAll<HTMLElement>('.eq, pre, .step-eq, math, .table-scroll').forEach((e) => {
    if (e.tagName === 'math') edges(e);
    if (e.scrollWidth > e.clientWidth + 1) {
      e.tabIndex = 0;
      if (!e.hasAttribute('aria-label') && !e.hasAttribute('aria-labelledby')) e.setAttribute('aria-label', 'Scrollable content');
    } else if (e.tabIndex === 0 && e.tagName !== 'PRE') e.removeAttribute('tabindex');
  });
  window.addEventListener('load', () => requestAnimationFrame(focusScrollers));
  window.addEventListener('resize', focusScrollers);
  setTimeout(focusScrollers, 1500);
  // Offline once loaded (web/demo/sw.js). Built site only (no HMR): the dev server's modules change.
  if (!import.meta.hot) window.addEventListener('load', registerServiceWorker);
}

/**
 * Registers the offline copy where the page may have one. A frame sandboxed without
 * allow-same-origin throws on merely reading navigator.serviceWorker, and a frame whose storage
 * is blocked rejects the registration: the site then works online only, quietly.
 */
function registerServiceWorker(): void {
  let sw: ServiceWorkerContainer | undefined;
  try {
    sw = navigator.serviceWorker;
  } catch {
    return;
  }
  // A stubbed register() (Playwright's serviceWorkers: 'block') resolves with no registration.
  sw?.register('./sw.js').then((reg) => reg && askToKeepUsed(reg), () => { /* no offline copy here; nothing else changes */ });
}

/**
 * Asks the service worker to keep what this page's Workers fetched past it (sw.js, message
 * 'attnlab:keep-used'): a Worker started before the service worker controlled the page never
 * passes through it, and may download after the install collected the first visit's files. Asked
 * when it takes control, when the page's ready state changes (body[data-result], data-api) and when
 * the page is hidden or left; before it is active, the ask waits for its controllerchange.
 */
function askToKeepUsed(reg: ServiceWorkerRegistration): void {
  const ask = () => reg.active?.postMessage({ type: 'attnlab:keep-used' });
  navigator.serviceWorker.addEventListener('controllerchange', ask);
  // On a change of value only: pages set data-result = 'ok' after every redraw (a drag on the
  // pooling page, dozens a second), and each ask costs the worker a lookup of every ON_DEMAND file.
  new MutationObserver((records) => {
    if (records.some((r) => r.oldValue !== document.body.getAttribute(r.attributeName!))) ask();
  }).observe(document.body, { attributes: true, attributeOldValue: true, attributeFilter: ['data-result', 'data-api'] });
  document.addEventListener('visibilitychange', () => { if (document.visibilityState === 'hidden') ask(); });
  window.addEventListener('pagehide', ask);
  ask();
}

let libPromise: Promise<Attnlab> | null = null;

/**
 * The page's attnlab instance (shared with the widgets). The interactive pages compute small
 * things on every frame: one thread answers at once, where waking a pool costs more than the
 * work (and a busy pool blocks the main thread). Long work runs in Workers with their own.
 */
export function getLib(options: LoadOptions = { threads: 1 }): Promise<Attnlab> {
  libPromise ??= attnlab().then(({ load }) => load(options)).then((lib) => {
    setSharedLib(lib);
    const engine = document.getElementById('engine');
    if (engine) engine.textContent = `attnlab: ${lib.variant} build, ${lib.threads} thread${lib.threads > 1 ? 's' : ''}${globalThis.crossOriginIsolated ? '' : ' (page not cross-origin isolated)'}`;
    return lib;
  });
  return libPromise;
}
