// Loads a translator and translates in a Worker, so loading a model and beam search never block
// the page. Talks to the page through messages; the page cancels by terminating the worker.
// Uses `lib.loadTranslator(bytes)` when this attnlab build has it, with the model file's URL
// from the attnlab-models package (a bundled app's way: Vite ships the .atl files), read through
// a cache of its own (modelBytes).
import { load } from 'attnlab';
import { models } from 'attnlab-models';
import type { TranslationResult, Translator } from '../components/translate';

export type TranslatorRequest =
  | { type: 'load'; name: string; arch: 'gru' | 'transformer' }
  | { type: 'translate'; id: number; text: string; beam: number; maxLength: number };

export type TranslatorReply =
  | { type: 'missing' }
  | { type: 'progress'; loaded: number; total: number }
  // The model's limits (Translator's maxSourceTokens and maxTargetTokens): <attn-translate> checks
  // its max-length against maxTargetTokens, which the page's proxy must therefore have too.
  | { type: 'ready'; info: string; maxSourceTokens?: number; maxTargetTokens?: number }
  | { type: 'result'; id: number; result: TranslationResult }
  | { type: 'error'; id?: number; message: string };

type LoadTranslator = (source: string | URL | Uint8Array, options: { arch?: string; onProgress?: (p: { loaded: number; total: number }) => void }) => Promise<Translator & { dispose?(): void; info?: { parameters?: number }; maxSourceTokens?: number }>;

const post = (m: TranslatorReply) => (self as unknown as Worker).postMessage(m);

// The shipped models, kept in a cache of their own on first download, so translation works
// offline from the first visit: this Worker starts before the service worker controls the page
// (it registers on load), so its fetches would otherwise pass it by. Entries for model files
// this build does not ship (an older deploy's) are dropped.
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

/** The model file's bytes: from the cache, else downloaded (reporting progress) and kept. */
async function modelBytes(url: string, progress: (loaded: number, total: number) => void): Promise<Uint8Array> {
  const cache = await modelCache();
  const hit = await cache?.match(url);
  const res = hit ?? await fetch(url).catch((e: unknown) => {
    throw new Error(`downloading ${url} failed: ${e instanceof Error ? e.message : String(e)}`);
  });
  if (!res.ok || !res.body) throw new Error(`${url} answered HTTP ${res.status}`);
  const total = Number(res.headers.get('content-length') ?? 0);
  const parts: Uint8Array[] = [];
  let loaded = 0;
  for (const reader = res.body.getReader(); ;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    loaded += value.byteLength;
    progress(loaded, Math.max(total, loaded));
  }
  const bytes = new Uint8Array(loaded);
  for (let at = 0, i = 0; i < parts.length; at += parts[i++].byteLength) bytes.set(parts[i], at);
  if (!hit) await cache?.put(url, new Response(bytes, { headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': String(loaded) } })).catch(() => {});
  return bytes;
}
let translator: (Translator & { dispose?(): void }) | null = null;

self.onmessage = async (e: MessageEvent<TranslatorRequest>) => {
  const m = e.data;
  try {
    if (m.type === 'load') {
      // The page is cross-origin isolated, so load() takes a threaded build where it can: the
      // translators' int8 products run on its threads (beam 5 ~1.3-1.6x faster on 2 cores).
      const lib = await load().catch(() => load({ variant: 'simd' }));
      const loadTranslator = (lib as unknown as { loadTranslator?: LoadTranslator }).loadTranslator;
      if (typeof loadTranslator !== 'function') {
        post({ type: 'missing' });
        return;
      }
      translator?.dispose?.();
      const url = models[m.name as keyof typeof models]?.[m.arch];
      if (!url) throw new Error(`no model ${m.name} (${m.arch})`);
      const bytes = await modelBytes(String(url), (loaded, total) => post({ type: 'progress', loaded, total }));
      const tr = await loadTranslator.call(lib, bytes, {});
      translator = tr;
      const params = tr.info?.parameters;
      post({ type: 'ready', info: `${m.name} ${m.arch}${params ? `, ${(params / 1e6).toFixed(2)} M parameters` : ''}`,
        maxSourceTokens: tr.maxSourceTokens, maxTargetTokens: tr.maxTargetTokens });
    } else if (m.type === 'translate') {
      if (!translator) throw new Error('no translator loaded');
      const result = await translator.translate(m.text, { beam: m.beam, maxLength: m.maxLength });
      // Structured clone keeps typed arrays; drop anything that is not plain data.
      post({ type: 'result', id: m.id, result: JSON.parse(JSON.stringify(result, (_k, v) => (ArrayBuffer.isView(v) ? Array.from(v as Float32Array) : v))) as TranslationResult });
    }
  } catch (err) {
    post({ type: 'error', id: m.type === 'translate' ? m.id : undefined, message: err instanceof Error ? err.message : String(err) });
  }
};
