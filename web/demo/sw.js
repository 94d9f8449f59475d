// The demo site's service worker: a fast first visit, and offline once loaded.
// vite.config.ts emits this file as sw.js with VERSION (a hash of this build's file list), SHELL
// and ON_DEMAND filled in.
//   - install: SHELL only, what every page needs to render (the pages, the stylesheet and the
//     pages' own scripts, a few hundred kB); not ON_DEMAND, the content-hashed files a page
//     fetches as it is used (WebAssembly builds and their loaders, Workers, the tiny
//     checkpoints: megabytes, most of them never needed on one device);
//   - fetch: pages network-first (a new deploy shows at once); the rest cache-first, each from
//     its own build's cache, and an ON_DEMAND file is kept when first fetched. What a first visit
//     fetched before this worker took control is collected from the browser's HTTP cache with
//     no download (keepUsed), so that page works offline too. The translation models (.atl) pass
//     by: the pages keep them in a cache of their own (site/models.ts);
//   - message { type: 'attnlab:keep-used' }: keepUsed again. A Worker started before this worker
//     controlled its page fetches past it, perhaps after the install looked (a slow machine), so
//     the pages ask once it controls them, once ready and when hidden (site/shell.ts);
//   - activate: older builds' caches are deleted, so a page never mixes two builds' files; the
//     new build's install has already copied (same hash) or downloaded (new hash) the ON_DEMAND
//     files the learner used, so those pages stay offline across a deploy.
const VERSION = __VERSION__;
const SHELL = __SHELL__;
const ON_DEMAND = new Set(__ON_DEMAND__);
const SHELL_CACHE = `attnlab-site-${VERSION}`;
const RUNTIME_CACHE = `attnlab-runtime-${VERSION}`;
const OURS = /^attnlab-(site|runtime)-/;

/** './assets/x-Ab12Cd34.wasm' for a URL in scope (the lists' form), else null. */
function local(url) {
  const scope = self.registration.scope;
  return url.startsWith(scope) ? `./${url.slice(scope.length).split(/[?#]/)[0]}` : null;
}

/** A content-hashed file's name without its hash (Vite's name-[hash].ext): the same file of another build. */
const family = (path) => path.replace(/-[\w-]{8}(\.[^./]+)$/, '$1');

async function keep(cache, request, response) {
  // Only whole, same-origin successes: never a 404, a partial range or an opaque response.
  if (response.ok && response.status === 200 && response.type === 'basic') await cache.put(request, response.clone());
  return response;
}

/** The browser's HTTP-cached copy of a same-origin URL (no network), or null. */
function fromHttpCache(url) {
  return fetch(url, { cache: 'only-if-cached', mode: 'same-origin' }).then((r) => (r.ok ? r : null), () => null);
}

/**
 * ON_DEMAND files the browser already downloaded (or is downloading: Chromium answers when that
 * download ends), into the runtime cache: a page's first visit fetches its build and Workers
 * before this worker controls it (it registers on load), and a Worker started then never passes
 * through it.
 */
async function keepUsed() {
  const cache = await caches.open(RUNTIME_CACHE);
  await Promise.all([...ON_DEMAND].map(async (path) => {
    if (await cache.match(path)) return;
    const r = await fromHttpCache(path);
    if (r) await keep(cache, new Request(path), r);
  }));
}

/** Older builds' ON_DEMAND files in this build: copied when unchanged, else this build's version downloaded. */
async function carryOver() {
  const cache = await caches.open(RUNTIME_CACHE);
  const wanted = new Set();
  for (const key of await caches.keys()) {
    if (!key.startsWith('attnlab-runtime-') || key === RUNTIME_CACHE) continue;
    const old = await caches.open(key);
    for (const request of await old.keys()) {
      const path = local(request.url);
      if (path === null) continue;
      if (ON_DEMAND.has(path)) {
        if (!(await cache.match(path))) await cache.put(path, await old.match(request));
      } else {
        for (const p of ON_DEMAND) if (family(p) === family(path)) wanted.add(p);
      }
    }
  }
  // A failed download fails the install: the old build stays, whole, until the next try.
  await Promise.all([...wanted].map(async (p) => (await cache.match(p)) ?? cache.add(new Request(p, { cache: 'no-cache' }))));
}

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const shell = await caches.open(SHELL_CACHE);
    // 'no-cache': the pages' URLs carry no hash, and an HTTP-cached copy may be the last build's.
    await shell.addAll(SHELL.map((p) => new Request(p, { cache: family(p) === p ? 'no-cache' : 'default' })));
    await carryOver();
    await keepUsed();
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    // Not 'attnlab-models' or 'attnlab-checkpoints', which the pages fill and prune themselves.
    for (const key of await caches.keys()) if (OURS.test(key) && key !== SHELL_CACHE && key !== RUNTIME_CACHE) await caches.delete(key);
    await self.clients.claim();
  })());
});

self.addEventListener('message', (event) => {
  // Only this site's pages ask (a Client in this worker's scope); cheap, as keepUsed skips what it has.
  if (event.data?.type !== 'attnlab:keep-used' || !event.source?.url?.startsWith(self.registration.scope)) return;
  event.waitUntil(keepUsed());
});

// A page never saved (the API reference before a visit): say so, rather than show another
// page's HTML at this address, whose relative links then fail.
function offlinePage() {
  const home = new URL('./index.html', self.registration.scope).href;
  return new Response(`<!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Offline: attnlab</title><link rel="icon" href="data:,"><p>This page has not been saved for offline use. Reconnect to open it, or go back to
<a href="${home}">the attnlab home page</a>, which works offline.</p>`, { status: 503, headers: { 'Content-Type': 'text/html; charset=utf-8' } });
}

async function onDemand(request, path) {
  const cache = await caches.open(RUNTIME_CACHE);
  const hit = await cache.match(path);
  return hit ?? keep(cache, new Request(path), await fetch(request));
}

self.addEventListener('fetch', (event) => {
  const { request } = event;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== location.origin || url.pathname.endsWith('.atl')) return;
  const path = local(request.url);
  if (request.mode === 'navigate') {
    event.respondWith(caches.open(SHELL_CACHE).then((cache) => fetch(request).then((r) => keep(cache, request, r)).catch(async () =>
      (await cache.match(request, { ignoreSearch: true })) ?? offlinePage())));
  } else if (path !== null && ON_DEMAND.has(path)) {
    event.respondWith(onDemand(request, path));
  } else {
    // The shell, and anything else of this site (the API reference) kept as it is fetched.
    event.respondWith(caches.open(SHELL_CACHE).then(async (cache) =>
      (await cache.match(request, { ignoreSearch: true })) ?? fetch(request).then((r) => keep(cache, request, r))));
  }
});
