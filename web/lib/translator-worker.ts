// The Worker behind `loadTranslator(source, { worker: true })`: a browser module Worker or a Node
// worker_threads Worker with an nn instance of its own (the page's build and threads), so beam
// search never blocks the caller. In: load (once), then translate, handled in order, each to the
// end. Out: ready, loaded, translated, error (see translator-protocol.ts).
import { instantiateNn, isNode } from './loader.js';
import type { TranslatorWorkerMessage, TranslatorWorkerRequest } from './translator-protocol.js';
import { translatorFromBytes, type Translator } from './translator.js';
import { TrapError } from './trap.js';
import { workerPort } from './worker-spawn.js';

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));
let translator: Translator | null = null;

type Locks = { request(name: string, hold: () => Promise<void>): Promise<void> };

/** Browsers: a Web Lock held while this Worker lives (see the 'locked' message). */
function holdLock(): void {
  const locks = isNode ? undefined : (globalThis as { navigator?: { locks?: Locks } }).navigator?.locks;
  if (!locks) return;
  const name = `attnlab-translator-${crypto.randomUUID()}`;
  // Rejects where locks are refused (an opaque origin: the data: bootstrap): the page then learns
  // of an end only from an error event, as before.
  locks.request(name, () => {
    p.post({ type: 'locked', name });
    return new Promise<void>(() => {});
  }).catch(() => {});
}

const p = workerPort<TranslatorWorkerRequest, TranslatorWorkerMessage>('translator-worker.js');
p.listen((m) => {
  if (m.type === 'load') {
    holdLock();
    instantiateNn(m.variant, m.threads).catch((e: unknown) => {
      throw new Error(`loadTranslator: the translators' WebAssembly module (attnlab-nn-${m.variant}) did not load in the Worker: ${message(e)}`);
    }).then((nn) => {
      translator = translatorFromBytes(nn, m.bytes, m.name);
      p.post({ type: 'loaded', info: translator.info });
    }).catch((e: unknown) => p.post({ type: 'error', message: message(e) }));
    return;
  }
  try {
    if (!translator) throw new Error('translate: the model is not loaded');
    const { sentences } = translator.translate(m.text, { beam: m.beam, maxLength: m.maxLength, lengthPenalty: m.lengthPenalty });
    // Only the sentences cross: the page assembles the whole result (and its lazy attention).
    const buffers = new Set<ArrayBuffer>();
    for (const { attention: a } of sentences) {
      for (const t of a.kind === 'alignment' ? [a.alignment] : [a.cross, a.decoderSelf, a.encoderSelf]) buffers.add(t.data.buffer as ArrayBuffer);
    }
    p.post({ type: 'translated', seq: m.seq, sentences }, [...buffers]);
  } catch (e) {
    p.post({ type: 'error', seq: m.seq, message: message(e), ...(e instanceof TrapError ? { trap: e.trap } : {}) });
  }
});
p.post({ type: 'ready' });
