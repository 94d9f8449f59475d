// What a Worker translator (translator-worker.ts) and its page-side WorkerTranslator
// (translator-remote.ts) say to each other. The model file's bytes are copied in (the page keeps
// them, to load a fresh Worker after an abort); each translation comes back as its sentences, in
// transferred buffers, and the page assembles the result as the in-thread translator does.
// Cancel and dispose are the page terminating the Worker: nothing here needs to listen for them.
import type { SentenceTranslation, TranslatorInfo } from './translator.js';
import type { Variant } from './types.js';

export type TranslatorWorkerRequest =
  /** `name`: how the engine's errors name the model file (loadTranslator's `model file "x.atl"`). */
  | { type: 'load'; bytes: Uint8Array; name: string; variant: Variant; threads: number }
  /** Checked on the page already. `maxLength` undefined: the default. */
  | { type: 'translate'; seq: number; text: string; beam: number; maxLength?: number; lengthPenalty: number };

export type TranslatorWorkerMessage =
  | { type: 'ready' }
  /**
   * Browsers: the Worker holds the Web Lock `name` until it ends. The page asks for the same lock,
   * granted when the Worker ends in a way that fires no error event (its own close(), a crash, the
   * browser stopping it).
   */
  | { type: 'locked'; name: string }
  | { type: 'loaded'; info: TranslatorInfo }
  | { type: 'translated'; seq: number; sentences: SentenceTranslation[] }
  /**
   * seq: the translation that failed; absent for the load. trap: the instance trapped (trap.ts),
   * "RuntimeError: unreachable" say; the page then ends this Worker.
   */
  | { type: 'error'; seq?: number; message: string; trap?: string };
