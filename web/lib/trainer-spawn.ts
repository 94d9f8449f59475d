// Starts the trainer's Worker wherever one can start. Browsers: first the literal
// `new Worker(new URL('./trainer-worker.js', import.meta.url), { type: 'module' })` that Vite and
// webpack recognise and bundle; where that is refused (the package served from another origin
// than the page: SecurityError) a same-origin `blob:` module Worker whose only line imports the
// worker script by its absolute URL, so the script's own import.meta.url, and with it the .wasm
// and the glue, still resolve on the package's origin; then the same line as a data: URL. Node: a worker_threads Worker. A Worker
// counts as started once it has posted 'ready'; an error before that tries the next way.
import { isNode } from './loader.js';
import { nodeModule, type TrainerMessage, type TrainerRequest } from './trainer-protocol.js';

export interface TrainerWorker {
  post(m: TrainerRequest): void;
  terminate(): void;
}

export interface TrainerWorkerEvents {
  message(m: TrainerMessage): void;
  /** The Worker failed after it had started. */
  failed(reason: string): void;
}

// Not spelled inside `new URL('…', import.meta.url)`: bundlers would copy the file as a plain asset.
const WORKER_FILE = './trainer-worker.js';

/** A started Worker, or a rejection whose message says why each way failed. */
export function spawnTrainerWorker(on: TrainerWorkerEvents): Promise<TrainerWorker> {
  return isNode ? spawnNode(on) : spawnBrowser(on);
}

type NodeWorker = {
  postMessage(m: unknown): void;
  terminate(): Promise<number>;
  on(ev: 'message', f: (m: TrainerMessage) => void): void;
  on(ev: 'error', f: (e: Error) => void): void;
  on(ev: 'exit', f: (code: number) => void): void;
};

function spawnNode(on: TrainerWorkerEvents): Promise<TrainerWorker> {
  const { Worker } = nodeModule<{ Worker: new (url: URL) => NodeWorker }>('node:worker_threads');
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL(WORKER_FILE, import.meta.url));
    let ready = false, ended = false;
    const handle: TrainerWorker = { post: (m) => w.postMessage(m), terminate: () => { ended = true; void w.terminate(); } };
    const fail = (reason: string) => {
      if (ended) return;
      handle.terminate();
      if (ready) on.failed(reason);
      else reject(new Error(reason));
    };
    w.on('message', (m) => {
      if (m.type !== 'ready') on.message(m);
      else if (!ready) {
        ready = true;
        resolve(handle);
      }
    });
    w.on('error', (e) => fail(e.message));
    w.on('exit', (code) => fail(`the worker thread exited with code ${code}`));
  });
}

type Attempt = { how: string; make: () => Worker; cleanup?: () => void };

/** A module whose only line imports the worker script by its absolute URL. */
const bootstrap = () => `import ${JSON.stringify(new URL(WORKER_FILE, import.meta.url).href)};`;

function blobAttempt(): Attempt {
  let url = '';
  return {
    how: 'a blob: bootstrap',
    make: () => {
      url = URL.createObjectURL(new Blob([bootstrap()], { type: 'text/javascript' }));
      return new Worker(url, { type: 'module' });
    },
    cleanup: () => url && URL.revokeObjectURL(url),
  };
}

function spawnBrowser(on: TrainerWorkerEvents): Promise<TrainerWorker> {
  if (typeof Worker === 'undefined') return Promise.reject(new Error('this environment has no Worker'));
  const attempts: Attempt[] = [
    { how: 'the package URL', make: () => new Worker(new URL('./trainer-worker.js', import.meta.url), { type: 'module' }) },
    blobAttempt(),
    // An opaque-origin page (a sandboxed iframe without allow-same-origin) cannot start a Worker
    // from its own blob: URLs in Chromium; a data: URL Worker (opaque origin itself) can, and
    // imports the package with CORS like the page does.
    { how: 'a data: bootstrap', make: () => new Worker(`data:text/javascript,${encodeURIComponent(bootstrap())}`, { type: 'module' }) },
  ];
  const why: string[] = [];
  const next = (resolve: (w: TrainerWorker) => void, reject: (e: Error) => void): void => {
    const a = attempts.shift();
    if (!a) {
      reject(new Error(why.join('; ')));
      return;
    }
    let w: Worker;
    try {
      w = a.make();
    } catch (e) {
      a.cleanup?.();
      why.push(`${a.how}: ${e instanceof Error ? e.message : String(e)}`);
      next(resolve, reject);
      return;
    }
    let ready = false;
    w.onmessage = (e: MessageEvent<TrainerMessage>) => {
      if (e.data.type !== 'ready') on.message(e.data);
      else if (!ready) {
        ready = true;
        a.cleanup?.();
        resolve({ post: (m) => w.postMessage(m), terminate: () => w.terminate() });
      }
    };
    w.onerror = (e: ErrorEvent) => {
      e.preventDefault();
      w.terminate();
      const reason = e.message || 'the Worker script failed to load';
      if (ready) {
        on.failed(reason);
        return;
      }
      a.cleanup?.();
      why.push(`${a.how}: ${reason}`);
      next(resolve, reject);
    };
  };
  return new Promise(next);
}
