// Loads a translator and translates in a Worker, so loading a model and beam search never block
// the page. Talks to the page through messages; the page cancels by terminating the worker.
// Uses `lib.loadTranslator(url, { onProgress })` when this attnlab build has it, with the model
// file's URL from the attnlab-models package: a bundled app's way (Vite ships the .atl files).
import { load } from 'attnlab';
import { models } from 'attnlab-models';
import type { TranslationResult, Translator } from '../components/translate';

export type TranslatorRequest =
  | { type: 'load'; name: string; arch: 'gru' | 'transformer' }
  | { type: 'translate'; id: number; text: string; beam: number; maxLength: number };

export type TranslatorReply =
  | { type: 'missing' }
  | { type: 'progress'; loaded: number; total: number }
  | { type: 'ready'; info: string }
  | { type: 'result'; id: number; result: TranslationResult }
  | { type: 'error'; id?: number; message: string };

type LoadTranslator = (source: string | URL, options: { arch?: string; onProgress?: (p: { loaded: number; total: number }) => void }) => Promise<Translator & { dispose?(): void; info?: { parameters?: number } }>;

const post = (m: TranslatorReply) => (self as unknown as Worker).postMessage(m);
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
      const tr = await loadTranslator.call(lib, url, { onProgress: (p) => post({ type: 'progress', loaded: p.loaded, total: p.total }) });
      translator = tr;
      const params = tr.info?.parameters;
      post({ type: 'ready', info: `${m.name} ${m.arch}${params ? `, ${(params / 1e6).toFixed(2)} M parameters` : ''}` });
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
