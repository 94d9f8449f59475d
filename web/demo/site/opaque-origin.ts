// A page framed with sandbox="allow-scripts" (no allow-same-origin) has an opaque origin: its URL
// is still the site's, but it is same-origin with nothing, so `new Worker('./assets/x.js')` throws
// a SecurityError. There the site's Workers start from a blob: script (same origin as the page by
// construction) that imports the real one, which loads because the site sends CORS headers (the
// hosting requirement stated in the README). Elsewhere nothing changes. Called by shell.ts as it
// loads, before any page starts a Worker (a call, not a side-effect import: package.json's
// "sideEffects" list lets the bundler drop side-effect-only imports of the site's modules).

/**
 * A classic worker from a blob: in an opaque-origin frame Chromium starts no module Worker from a
 * blob (nor from the site), but a classic one runs, and may import() a module. Messages that
 * arrive while the module loads are held and replayed once it listens.
 */
function sameOriginScript(url: string | URL, options?: WorkerOptions): string {
  const href = new URL(String(url), document.baseURI).href;
  if (/^(blob|data):/.test(href)) return href;
  const load = options?.type === 'module' ? `import(${JSON.stringify(href)})` : `Promise.resolve().then(() => importScripts(${JSON.stringify(href)}))`;
  const source = `const held = [];
const hold = (e) => held.push(e);
self.addEventListener('message', hold);
${load}.then(() => {
  self.removeEventListener('message', hold);
  for (const e of held) self.dispatchEvent(new MessageEvent('message', { data: e.data, ports: [...e.ports] }));
}, (e) => setTimeout(() => { throw e; }));
`;
  return URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
}

export function workersFromBlobsInOpaqueOrigins(): void {
  if (self.origin !== 'null') return;
  const NativeWorker = window.Worker;
  window.Worker = class extends NativeWorker {
    constructor(url: string | URL, options?: WorkerOptions) {
      super(sameOriginScript(url, options), { ...options, type: 'classic' });
    }
  };
}
