// The caller's side of `loadTranslator(source, { worker: true })`: a translator whose model runs
// in a Worker of its own (translator-worker.ts; worker_threads in Node), so translate() returns a
// Promise and beam search never blocks the calling thread. Calls run one at a time in the order
// made. The Worker cannot be interrupted inside a sentence, so aborting the running call ends
// the Worker and a fresh one loads the model again from the bytes kept here.
import { disposeSymbol } from './dispose.js';
import { argError } from './errors.js';
import { isNode } from './loader.js';
import type { TranslatorWorkerMessage, TranslatorWorkerRequest } from './translator-protocol.js';
import {
  assembleTranslation, checkTranslate, TRANSLATOR_DISPOSED, translatorLimits, type TranslationResult, type TranslatorInfo, type WorkerTranslateOptions,
} from './translator.js';
import type { Variant } from './types.js';
import { spawnBrowserWorker, spawnNodeWorker, type SpawnedWorkerEvents } from './worker-spawn.js';

// Not spelled inside `new URL('…', import.meta.url)`: bundlers would copy the file as a plain asset.
const WORKER_FILE = './translator-worker.js';

type Build = { variant: Variant; threads: number };
type Events = SpawnedWorkerEvents<TranslatorWorkerMessage>;

interface Handle {
  post(m: TranslatorWorkerRequest): void;
  terminate(): void;
  /** Node: whether the Worker keeps the process alive (while a load or a call is under way). */
  busy(on: boolean): void;
}

async function spawnNode(on: Events): Promise<Handle> {
  const w = await spawnNodeWorker<TranslatorWorkerRequest, TranslatorWorkerMessage>(new URL(WORKER_FILE, import.meta.url), on);
  return { post: (m) => w.post(m), terminate: () => w.terminate(), busy: (on) => w.keepAlive(on) };
}

type Locks = { request(name: string, granted: () => void): Promise<void> };

async function spawn(on: Events): Promise<Handle> {
  if (isNode) return spawnNode(on);
  // A Worker that closes itself, crashes or is stopped by the browser fires no error event: the
  // lock it holds (the 'locked' message) is granted here once it has ended.
  let ended = false;
  const fail = (reason: string) => {
    if (ended) return;
    ended = true;
    w.terminate();
    on.failed(reason);
  };
  const w = await spawnBrowserWorker<TranslatorWorkerRequest, TranslatorWorkerMessage>(
    () => new Worker(new URL('./translator-worker.js', import.meta.url), { type: 'module' }), new URL(WORKER_FILE, import.meta.url).href, {
      message: (m) => {
        if (m.type !== 'locked') on.message(m);
        else void (navigator as { locks?: Locks }).locks?.request(m.name, () => fail('it ended without an error event (closed, crashed or stopped by the browser)'));
      },
      failed: fail,
    });
  return {
    post: (m) => w.post(m),
    terminate: () => {
      ended = true;
      w.terminate();
    },
    busy: () => {},
  };
}

/**
 * A Worker with the model loaded. `stop` ends it, loading or loaded (a load under way rejects
 * with the signal's reason); `on` gets its messages and failures once it is loaded.
 */
async function loadWorker(bytes: Uint8Array, name: string, build: Build, stop: AbortSignal, on: Events): Promise<{ handle: Handle; info: TranslatorInfo }> {
  stop.throwIfAborted();
  let info: TranslatorInfo | null = null;
  let settle!: { resolve: (i: TranslatorInfo) => void; reject: (e: unknown) => void };
  const loaded = new Promise<TranslatorInfo>((resolve, reject) => (settle = { resolve, reject }));
  const handle = await spawn({
    message: (m) => {
      if (info) on.message(m);
      else if (m.type === 'loaded') settle.resolve((info = m.info));
      else if (m.type === 'error') settle.reject(new Error(m.message));
    },
    failed: (reason) => {
      if (info) on.failed(reason);
      else settle.reject(new Error(`loadTranslator: the translator's Worker failed: ${reason}`));
    },
  }).catch((e: Error) => {
    throw new Error(`loadTranslator: no Worker could start: ${e.message}`);
  });
  const end = () => {
    handle.terminate();
    settle.reject(stop.reason ?? new DOMException('This operation was aborted', 'AbortError'));
  };
  stop.addEventListener('abort', end, { once: true });
  if (stop.aborted) end();  // while the Worker was starting
  handle.busy(true);
  // Copied, not transferred: the bytes stay here for the next Worker.
  handle.post({ type: 'load', bytes, name, variant: build.variant, threads: build.threads });
  try {
    return { handle, info: await loaded };
  } catch (e) {
    stop.removeEventListener('abort', end);
    handle.terminate();
    throw e;
  } finally {
    handle.busy(false);
  }
}

type Call = {
  request: { text: string; beam: number; maxLength?: number; lengthPenalty: number };
  resolve: (r: TranslationResult) => void;
  reject: (e: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
};

/**
 * The Worker and the calls: everything a WorkerTranslator does, holding no reference to it, so a
 * translator dropped without dispose() is collected and its Worker ended (release()).
 */
class Remote {
  private worker: Promise<Handle> | null;
  private stop: AbortController;
  private readonly queue: Call[] = [];
  private running: { seq: number; call: Call; handle: Handle | null } | null = null;
  private seq = 0;
  private ended = false;
  private released = false;

  constructor(private readonly bytes: Uint8Array, private readonly name: string, private readonly build: Build,
    private readonly info: TranslatorInfo, first: Handle, stop: AbortController) {
    this.worker = Promise.resolve(first);
    this.stop = stop;
  }

  /** What its Workers report, once loaded. */
  readonly events: Events = { message: (m) => this.receive(m), failed: (reason) => this.failed(reason) };

  /** A fresh Worker with the model, at once (after an abort) or for the next call (after a failure). */
  private restart(): void {
    this.stop.abort();
    this.stop = new AbortController();
    const w = loadWorker(this.bytes, this.name, this.build, this.stop.signal, this.events).then(({ handle }) => handle);
    w.catch(() => {});  // reported to the call that waits for it
    this.worker = w;
  }

  run(request: Call['request'], signal?: AbortSignal): Promise<TranslationResult> {
    return new Promise((resolve, reject) => {
      const call: Call = { request, resolve, reject, signal };
      if (signal) {
        call.onAbort = () => this.abort(call);
        signal.addEventListener('abort', call.onAbort, { once: true });
      }
      this.queue.push(call);
      this.pump();
    });
  }

  private pump(): void {
    if (this.running || this.ended) return;
    const call = this.queue.shift();
    if (!call) {
      if (this.released) this.end(new Error(TRANSLATOR_DISPOSED));
      return;
    }
    const seq = ++this.seq;
    const running = (this.running = { seq, call, handle: null as Handle | null });
    if (!this.worker) this.restart();
    const worker = this.worker!;
    worker.then((handle) => {
      if (this.running !== running) return;  // aborted, or disposed, while the Worker loaded
      running.handle = handle;
      handle.busy(true);
      handle.post({ type: 'translate', seq, ...call.request });
    }, (e: unknown) => {
      if (this.worker === worker) this.worker = null;  // the next call tries again
      this.finish(seq, () => call.reject(e));
    });
  }

  /** Settles the running call `seq` (if it still is) and starts the next. */
  private finish(seq: number, settle: () => void): void {
    const r = this.running;
    if (!r || r.seq !== seq) return;
    this.running = null;
    r.handle?.busy(false);
    if (r.call.onAbort) r.call.signal!.removeEventListener('abort', r.call.onAbort);
    settle();
    this.pump();
  }

  private receive(m: TranslatorWorkerMessage): void {
    const call = this.running?.call;
    if (m.type === 'translated') this.finish(m.seq, () => call!.resolve(assembleTranslation(m.sentences, this.info)));
    else if (m.type === 'error' && m.seq !== undefined && m.trap !== undefined) this.trapped(m.seq, m.trap);
    else if (m.type === 'error' && m.seq !== undefined) this.finish(m.seq, () => call!.reject(new Error(m.message)));
  }

  /** A trapped instance is never run again: its Worker ends, and the next call loads a fresh one. */
  private trapped(seq: number, trap: string): void {
    const r = this.running;
    if (r?.seq !== seq) return;
    r.handle?.terminate();
    this.worker = null;
    this.finish(seq, () => r.call.reject(new Error(`translate: the WebAssembly instance in the translator's Worker trapped (${trap}); a fresh Worker loads the model for the next call`)));
  }

  private failed(reason: string): void {
    const r = this.running;
    this.worker = null;  // the next call loads a fresh Worker
    if (r?.handle) this.finish(r.seq, () => r.call.reject(new Error(`translate: the translator's Worker failed: ${reason}`)));
  }

  private abort(call: Call): void {
    const reason = call.signal!.reason ?? new DOMException('This operation was aborted', 'AbortError');
    const i = this.queue.indexOf(call);
    if (i >= 0) {
      this.queue.splice(i, 1);
      call.reject(reason);
      return;
    }
    const r = this.running;
    if (r?.call !== call) return;
    // Posted: the Worker is inside the engine's call and reads no message until it returns.
    if (r.handle) this.restart();
    this.finish(r.seq, () => call.reject(reason));
  }

  /** Ends the Worker; the running and queued calls reject with `reason`. */
  end(reason: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.stop.abort();
    this.worker = null;
    const calls = [...(this.running ? [this.running.call] : []), ...this.queue.splice(0)];
    this.running = null;
    for (const c of calls) {
      if (c.onAbort) c.signal!.removeEventListener('abort', c.onAbort);
      c.reject(reason);
    }
  }

  /** The translator was collected: end the Worker once the calls made have settled. */
  release(): void {
    this.released = true;
    if (!this.running && !this.queue.length) this.end(new Error(TRANSLATOR_DISPOSED));
  }
}

// Last resort for a translator dropped without dispose(): its Worker ends once idle.
const finalizer = new FinalizationRegistry<Remote>((r) => r.release());

const WORKER_TRANSLATE_OPTIONS = ['beam', 'maxLength', 'lengthPenalty', 'signal'] as const;

/**
 * A translator in a Worker of its own: `lib.loadTranslator(source, { worker: true })`. The same
 * properties as a `Translator`; `translate()` returns a Promise of the same result.
 */
export class WorkerTranslator {
  readonly arch: string;
  readonly srcLang: string;
  readonly tgtLang: string;
  readonly parameters: number;
  /** See `Translator.maxSourceTokens`. */
  readonly maxSourceTokens: number;
  /** See `Translator.maxTargetTokens`. */
  readonly maxTargetTokens: number;
  readonly info: TranslatorInfo;
  /** Where the model runs: always its own Worker (a `Translator` runs on the calling thread). */
  readonly runsIn = 'worker' as const;
  #remote: Remote | null;

  private constructor(remote: Remote, info: TranslatorInfo) {
    this.#remote = remote;
    this.info = info;
    this.arch = info.arch;
    this.srcLang = info.srcLang;
    this.tgtLang = info.tgtLang;
    this.parameters = info.parameters;
    ({ maxSourceTokens: this.maxSourceTokens, maxTargetTokens: this.maxTargetTokens } = translatorLimits(info));
    finalizer.register(this, remote, this);
  }

  /** @internal Use `lib.loadTranslator(source, { worker: true })`. */
  static async open(bytes: Uint8Array, name: string, build: Build, signal?: AbortSignal): Promise<WorkerTranslator> {
    const stop = new AbortController();
    const forward = () => stop.abort(signal!.reason);
    signal?.addEventListener('abort', forward, { once: true });
    if (signal?.aborted) forward();
    let remote: Remote | null = null;
    const events: Events = { message: (m) => remote?.events.message(m), failed: (r) => remote?.events.failed(r) };
    try {
      const { handle, info } = await loadWorker(bytes, name, build, stop.signal, events);
      remote = new Remote(bytes, name, build, info, handle, stop);
      return new WorkerTranslator(remote, info);
    } finally {
      signal?.removeEventListener('abort', forward);
    }
  }

  /**
   * `Translator.translate()` in the Worker: resolves with the same result, its typed arrays moved
   * from the Worker. Calls run one after another in the order made. Bad arguments reject with the
   * Errors `Translator.translate()` throws; `options.signal` cancels the call.
   */
  async translate(text: string, options?: WorkerTranslateOptions): Promise<TranslationResult> {
    const remote = this.#remote;
    if (!remote) throw new Error(TRANSLATOR_DISPOSED);
    const checked = checkTranslate(text, options, this.maxTargetTokens, WORKER_TRANSLATE_OPTIONS);
    const signal = options?.signal;
    if (signal !== undefined && !(typeof AbortSignal !== 'undefined' && signal instanceof AbortSignal)) throw argError('translate', 'options.signal', 'an AbortSignal', signal);
    signal?.throwIfAborted();
    return remote.run({ text, ...checked }, signal);
  }

  get disposed(): boolean {
    return this.#remote === null;
  }

  /** Ends the Worker (and its memory); calls under way or queued reject. Safe to call twice. */
  dispose(): void {
    const remote = this.#remote;
    if (!remote) return;
    this.#remote = null;
    finalizer.unregister(this);
    remote.end(new Error(TRANSLATOR_DISPOSED));
  }

  /** `using`: dispose() at the end of the block. */
  [disposeSymbol](): void {
    this.dispose();
  }
}
