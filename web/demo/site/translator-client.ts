// A translator that lives in a Worker (translator.worker.ts), seen from the page as an object with
// translate(): loading a 2-6 MB model and decoding never run on the main thread, so the page keeps
// answering while they do. cancel() terminates the Worker, which stops any loading mid-way.
import type { TranslationResult, Translator } from '../../components/translate';
import type { TranslatorReply, TranslatorRequest } from '../translator.worker';

/** Rejection reason of every pending call when the Worker is cancelled. */
export class Cancelled extends Error {
  constructor() {
    super('cancelled');
    this.name = 'Cancelled';
  }
}

export interface OpenOptions {
  onProgress?: (loaded: number, total: number) => void;
}

export class WorkerTranslator implements Translator {
  #worker: Worker | null = null;
  #nextId = 1;
  #waiting = new Map<number, { resolve: (r: TranslationResult) => void; reject: (e: Error) => void }>();
  #opening: { resolve: (info: string) => void; reject: (e: Error) => void } | null = null;
  #maxSourceTokens: number | undefined;
  #maxTargetTokens: number | undefined;

  /** Most source pieces the loaded model reads of a sentence (undefined until one is ready). */
  get maxSourceTokens(): number | undefined {
    return this.#maxSourceTokens;
  }
  /** Most output pieces the loaded model writes for a sentence: <attn-translate> holds max-length to it. */
  get maxTargetTokens(): number | undefined {
    return this.#maxTargetTokens;
  }

  /**
   * Starts a fresh Worker and loads `name` ('fra-eng', …) into it. Resolves with a line describing
   * the model; resolves with null when this attnlab build ships no translator.
   */
  open(name: string, arch: 'gru' | 'transformer', options: OpenOptions = {}): Promise<string | null> {
    this.cancel();
    const worker = new Worker(new URL('../translator.worker.ts', import.meta.url), { type: 'module' });
    this.#worker = worker;
    return new Promise<string | null>((resolve, reject) => {
      this.#opening = { resolve, reject };
      worker.onmessage = (e: MessageEvent<TranslatorReply>) => {
        const m = e.data;
        if (m.type === 'missing') {
          this.#opening = null;
          resolve(null);
        } else if (m.type === 'progress') {
          options.onProgress?.(m.loaded, m.total);
        } else if (m.type === 'ready') {
          this.#opening = null;
          this.#maxSourceTokens = m.maxSourceTokens;
          this.#maxTargetTokens = m.maxTargetTokens;
          resolve(m.info);
        } else if (m.type === 'result') {
          this.#waiting.get(m.id)?.resolve(m.result);
          this.#waiting.delete(m.id);
        } else if (m.id !== undefined) {
          this.#waiting.get(m.id)?.reject(new Error(m.message));
          this.#waiting.delete(m.id);
        } else {
          this.#opening = null;
          reject(new Error(m.message));
        }
      };
      worker.onerror = (e) => {
        this.#opening = null;
        reject(new Error(e.message || 'the translator Worker failed to start'));
      };
      worker.postMessage({ type: 'load', name, arch } satisfies TranslatorRequest);
    });
  }

  translate(text: string, options?: { beam?: number; maxLength?: number }): Promise<TranslationResult> {
    const worker = this.#worker;
    if (!worker) return Promise.reject(new Error('no translator loaded'));
    const id = this.#nextId++;
    const req: TranslatorRequest = { type: 'translate', id, text, beam: options?.beam ?? 1, maxLength: options?.maxLength ?? 40 };
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      worker.postMessage(req);
    });
  }

  /** Stops the Worker; whatever was loading or translating rejects with Cancelled. */
  cancel(): void {
    this.#worker?.terminate();
    this.#worker = null;
    this.#maxSourceTokens = this.#maxTargetTokens = undefined;
    this.#opening?.reject(new Cancelled());
    this.#opening = null;
    this.#waiting.forEach((w) => w.reject(new Cancelled()));
    this.#waiting.clear();
  }
}
