// Checkpoints opened from a URL on the Real models page, kept in Cache Storage for the next visit
// (offline too). A cache of their own, 'attnlab-checkpoints': the service worker's per-build cache
// is cleared by every deploy, and a 500 MB GPT-2 should not be downloaded again for that.
import type { CheckpointFiles } from 'attnlab';

const CACHE = 'attnlab-checkpoints';

async function store(): Promise<Cache | null> {
  try {
    return await caches.open(CACHE);
  } catch {
    return null;  // a sandboxed frame or blocked storage: fetched every time, nothing else changes
  }
}

/** The size of the cached model.safetensors under `base`, or null when none is cached. */
export async function cachedSize(base: string): Promise<number | null> {
  const hit = await (await store())?.match(`${base}model.safetensors`);
  return hit ? Number(hit.headers.get('content-length') ?? 0) : null;
}

/** A file from the cache, else fetched (and kept: a cancelled or failed download stores nothing); null on 404. */
async function get(url: string, signal: AbortSignal, cache: Cache | null): Promise<Response | null> {
  const hit = await cache?.match(url);
  if (hit) return hit;
  const res = await fetch(url, { signal });
  if (res.status === 404) return null;
  if (!res.ok) throw new Error(`${url} answered HTTP ${res.status}`);
  cache?.put(url, res.clone()).catch(() => { /* not kept; the load itself goes on */ });
  return res;
}

/**
 * The checkpoint under `base` for loadModel(): config.json, the tokenizer (tokenizer.json, else
 * vocab.txt for BERT or vocab.json + merges.txt), then model.safetensors last, so its download
 * starts only when loadModel() is ready to stream it.
 */
export async function checkpointAt(base: string, signal: AbortSignal): Promise<CheckpointFiles> {
  const cache = await store();
  const need = async (name: string): Promise<Response> => {
    const r = await get(base + name, signal, cache);
    if (!r) throw new Error(`${base}${name} answered HTTP 404`);
    return r;
  };
  const config = (await (await need('config.json')).json()) as Record<string, unknown>;
  const tokenizer = await get(`${base}tokenizer.json`, signal, cache);
  const words: Partial<CheckpointFiles> = tokenizer ? { tokenizer }
    : config.model_type === 'bert' ? { vocab: await need('vocab.txt') }
    : { vocab: await need('vocab.json'), merges: await need('merges.txt') };
  return { config, ...words, weights: await need('model.safetensors') };
}
