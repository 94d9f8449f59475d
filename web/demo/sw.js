// The demo site's service worker: once a page has loaded, the whole site works offline.
// vite.config.ts emits this file as sw.js with PRECACHE (every page, script, stylesheet and
// WebAssembly build of this build) and VERSION (a hash of that list) filled in.
//   - install: the precache list (a few MB; the translation models are not in it);
//   - fetch: pages network-first (a new deploy shows at once), everything else cache-first, and
//     what is fetched on the way (the API reference) is kept for next time; a page never saved
//     answers offline with a short note, not another page;
//   - activate: caches of older builds are deleted (not 'attnlab-models' or
//     'attnlab-checkpoints', which the pages fill themselves).
const VERSION = __VERSION__;
const PRECACHE = __PRECACHE__;
const CACHE = `attnlab-site-${VERSION}`;

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((c) => c.addAll(PRECACHE)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    // Only older builds' caches: the models' and checkpoints' caches outlive a deploy.
    for (const key of await caches.keys()) if (key.startsWith('attnlab-site-') && key !== CACHE) await caches.delete(key);
    await self.clients.claim();
  })());
});

async function keep(request, response) {
  // Only whole, same-origin successes: never a 404, a partial range or an opaque response; and
  // not the translation models, which the translator Worker keeps in a cache of its own.
  if (new URL(request.url).pathname.endsWith('.atl')) return response;
  if (response.ok && response.status === 200 && response.type === 'basic') {
    const cache = await caches.open(CACHE);
    await cache.put(request, response.clone());
  }
  return response;
}

// A page never saved (the API reference before a visit): say so, rather than show another
// page's HTML at this address, whose relative links then fail.
function offlinePage() {
  const home = new URL('./index.html', self.registration.scope).href;
  return new Response(`<!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Offline: attnlab</title><link rel="icon" href="data:,"><p>This page has not been saved for offline use. Reconnect to open it, or go back to
<a href="${home}">the attnlab home page</a>, which works offline.</p>`, { status: 503, headers: { 'Content-Type': 'text/html; charset=utf-8' } });
}

self.addEventListener('fetch', (event) => {
  const { request } = event;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== location.origin) return;
  if (request.mode === 'navigate') {
    event.respondWith(fetch(request).then((r) => keep(request, r)).catch(async () =>
      (await caches.match(request, { ignoreSearch: true })) ?? offlinePage()));
    return;
  }
  event.respondWith(caches.match(request, { ignoreSearch: true }).then((hit) => hit ?? fetch(request).then((r) => keep(request, r))));
});
