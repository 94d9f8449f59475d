// The demo site's service worker: once a page has loaded, the whole site works offline.
// vite.config.ts emits this file as sw.js with PRECACHE (every page, script, stylesheet and
// WebAssembly build of this build) and VERSION (a hash of that list) filled in.
//   - install: the precache list (a few MB; the translation models are not in it);
//   - fetch: pages network-first (a new deploy shows at once), everything else cache-first, and
//     what is fetched on the way (models, API reference) is kept for next time;
//   - activate: caches of older builds are deleted.
const VERSION = __VERSION__;
const PRECACHE = __PRECACHE__;
const CACHE = `attnlab-site-${VERSION}`;

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((c) => c.addAll(PRECACHE)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) if (key !== CACHE) await caches.delete(key);
    await self.clients.claim();
  })());
});

async function keep(request, response) {
  // Only whole, same-origin successes: never a 404, a partial range or an opaque response.
  if (response.ok && response.status === 200 && response.type === 'basic') {
    const cache = await caches.open(CACHE);
    await cache.put(request, response.clone());
  }
  return response;
}

self.addEventListener('fetch', (event) => {
  const { request } = event;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== location.origin) return;
  if (request.mode === 'navigate') {
    event.respondWith(fetch(request).then((r) => keep(request, r)).catch(async () =>
      (await caches.match(request, { ignoreSearch: true })) ?? (await caches.match('./index.html')) ?? Response.error()));
    return;
  }
  event.respondWith(caches.match(request, { ignoreSearch: true }).then((hit) => hit ?? fetch(request).then((r) => keep(request, r))));
});
