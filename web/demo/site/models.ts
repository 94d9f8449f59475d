// The shipped translation models' bytes, for lib.loadTranslator(bytes, { worker: true }): the URL
// from the attnlab-models package (Vite ships the .atl files), read through a cache of the site's
// own, so translation works offline from the first visit: the first visit's page is not yet
// controlled by the service worker (it registers on load), which lets .atl files pass by anyway.
// Entries for model files this build does not ship (an older deploy's) are dropped.
import { models } from 'attnlab-models';

const MODEL_CACHE = 'attnlab-models';

async function modelCache(): Promise<Cache | null> {
  try {
    const cache = await caches.open(MODEL_CACHE);
    const current = new Set(Object.values(models).flatMap((m) => Object.values(m).map((u) => new URL(u, location.href).href)));
    for (const r of await cache.keys()) if (!current.has(r.url)) await cache.delete(r);
    return cache;
  } catch {
    return null;  // a sandboxed frame or blocked storage: fetched every time, nothing else changes
  }
}

/** A download's progress for a status line: `1234 KiB of 6059 KiB`, or without a total. */
export const downloaded = (loaded: number, total: number): string =>
  `${(loaded / 1024).toFixed(0)} KiB${total ? ` of ${(total / 1024).toFixed(0)} KiB` : ''}`;

/**
 * The model file's bytes: from the cache, else downloaded (reporting progress) and kept.
 * `signal` stops the download (the promise rejects with its reason).
 */
export async function modelBytes(name: string, arch: 'gru' | 'transformer', onProgress: (loaded: number, total: number) => void,
  signal: AbortSignal): Promise<Uint8Array> {
  const src = models[name as keyof typeof models]?.[arch];
  if (!src) throw new Error(`no model ${name} (${arch})`);
  const url = new URL(src, location.href).href;
  const cache = await modelCache();
  signal.throwIfAborted();
  const hit = await cache?.match(url);
  const res = hit ?? await fetch(url, { signal }).catch((e: unknown) => {
    signal.throwIfAborted();
    throw new Error(`downloading ${url} failed: ${e instanceof Error ? e.message : String(e)}`);
  });
  if (!res.ok || !res.body) throw new Error(`${url} answered HTTP ${res.status}`);
  const total = Number(res.headers.get('content-length') ?? 0);
  const parts: Uint8Array[] = [];
  let loaded = 0;
  for (const reader = res.body.getReader(); ;) {
    const { done, value } = await reader.read().catch((e: unknown) => {
      signal.throwIfAborted();
      throw e;
    });
    if (done) break;
    parts.push(value);
    loaded += value.byteLength;
    onProgress(loaded, Math.max(total, loaded));
  }
  signal.throwIfAborted();
  const bytes = new Uint8Array(loaded);
  for (let at = 0, i = 0; i < parts.length; at += parts[i++].byteLength) bytes.set(parts[i], at);
  if (!hit) await cache?.put(url, new Response(bytes, { headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': String(loaded) } })).catch(() => {});
  return bytes;
}
