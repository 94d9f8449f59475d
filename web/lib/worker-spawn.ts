// Starts a module Worker in a browser wherever one can start (the trainer's and the checkpoints'
// Workers). First the caller's literal `new Worker(new URL('./x.js', import.meta.url), { type:
// 'module' })`, which Vite and webpack recognise and bundle; where that cannot start (the package
// served from another origin than the page, or an opaque-origin page) a same-origin `blob:` module Worker
// whose only line imports the worker script by its absolute URL, so the script's own
// import.meta.url, and with it the .wasm and the glue, still resolve on the package's origin; then
// the same line as a data: URL. A Worker counts as started once it has posted {type: 'ready'}; an
// error before that tries the next way.

import { isNode, nodeBuiltin } from './loader.js';

export interface SpawnedWorker<In> {
  post(m: In, transfer?: Transferable[]): void;
  terminate(): void;
}

export interface SpawnedWorkerEvents<Out> {
  message(m: Out): void;
  /** The Worker failed after it had started. */
  failed(reason: string): void;
}

type Attempt = { how: string; make: () => Worker; cleanup?: () => void };

/** A module whose only line imports the worker script by its absolute URL. */
const bootstrap = (scriptUrl: string) => `import ${JSON.stringify(scriptUrl)};`;

function blobAttempt(scriptUrl: string): Attempt {
  let url = '';
  return {
    how: 'a blob: bootstrap',
    make: () => {
      url = URL.createObjectURL(new Blob([bootstrap(scriptUrl)], { type: 'text/javascript' }));
      return new Worker(url, { type: 'module' });
    },
    cleanup: () => url && URL.revokeObjectURL(url),
  };
}

/**
 * `direct` spells the bundlers' literal; `scriptUrl` is the same script's absolute URL, for the
 * bootstraps. Resolves with the started Worker, or rejects saying why each way failed.
 */
export function spawnBrowserWorker<In, Out extends { type: string }>(direct: () => Worker, scriptUrl: string,
  on: SpawnedWorkerEvents<Out>): Promise<SpawnedWorker<In>> {
  if (typeof Worker === 'undefined') return Promise.reject(new Error('this environment has no Worker'));
  // A Worker script from another origin than the page's never starts. Chromium says so by
  // throwing; Firefox fires error, and logs an uncaught "Security Error" on the page's console that
  // preventDefault() does not silence: so it is not tried.
  const page = (globalThis as { location?: { origin: string } }).location?.origin;
  const script = new URL(scriptUrl).origin;
  const attempts: Attempt[] = [
    { how: 'the package URL', make: script === page ? direct : () => { throw new Error(`${script} is not the page's origin (${page})`); } },
    blobAttempt(scriptUrl),
    // An opaque-origin page (a sandboxed iframe without allow-same-origin) cannot start a Worker
    // from its own blob: URLs in Chromium; a data: URL Worker (opaque origin itself) can, and
    // imports the package with CORS like the page does.
    { how: 'a data: bootstrap', make: () => new Worker(`data:text/javascript,${encodeURIComponent(bootstrap(scriptUrl))}`, { type: 'module' }) },
  ];
  const why: string[] = [];
  const next = (resolve: (w: SpawnedWorker<In>) => void, reject: (e: Error) => void): void => {
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
    w.onmessage = (e: MessageEvent<Out>) => {
      if (e.data.type !== 'ready') on.message(e.data);
      else if (!ready) {
        ready = true;
        a.cleanup?.();
        resolve({ post: (m, transfer) => w.postMessage(m, transfer ?? []), terminate: () => w.terminate() });
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

/** A started worker_threads Worker; `keepAlive(false)` lets Node exit while it idles. */
export interface SpawnedNodeWorker<In> extends SpawnedWorker<In> {
  keepAlive(on: boolean): void;
}

type NodeWorker = {
  postMessage(m: unknown, transfer?: Transferable[]): void;
  terminate(): Promise<number>;
  ref(): void;
  unref(): void;
  on(ev: 'message', f: (m: { type: string }) => void): void;
  on(ev: 'error', f: (e: Error) => void): void;
  on(ev: 'exit', f: (code: number) => void): void;
};

/** Node's counterpart of spawnBrowserWorker (the trainer's and the translators' Workers): the script at `scriptUrl` in a worker_threads Worker. */
export function spawnNodeWorker<In, Out extends { type: string }>(scriptUrl: URL, on: SpawnedWorkerEvents<Out>): Promise<SpawnedNodeWorker<In>> {
  return new Promise((resolve, reject) => {
    const { Worker } = nodeBuiltin<{ Worker: new (url: URL) => NodeWorker }>('node:worker_threads');
    const w = new Worker(scriptUrl);
    let ready = false, ended = false;
    const handle: SpawnedNodeWorker<In> = {
      post: (m, transfer) => w.postMessage(m, transfer),
      terminate: () => {
        ended = true;
        void w.terminate();
      },
      keepAlive: (on) => (on ? w.ref() : w.unref()),
    };
    const fail = (reason: string) => {
      if (ended) return;
      handle.terminate();
      if (ready) on.failed(reason);
      else reject(new Error(reason));
    };
    w.on('message', (m) => {
      if (m.type !== 'ready') on.message(m as Out);
      else if (!ready) {
        ready = true;
        resolve(handle);
      }
    });
    w.on('error', (e) => fail(e.message));
    w.on('exit', (code) => fail(`the worker thread exited with code ${code}`));
  });
}

/** The Worker side of both: its messages in and out, from a browser Worker or a worker thread. */
export interface WorkerPort<In, Out> {
  post(m: Out, transfer?: Transferable[]): void;
  listen(f: (m: In) => void): void;
}

type NodeParentPort = { postMessage(m: unknown, transfer?: unknown[]): void; on(ev: 'message', f: (m: never) => void): void };
type WebScope = { postMessage(m: unknown, transfer?: Transferable[]): void; onmessage: ((e: { data: never }) => void) | null };

/** The port of the Worker script `script` (its name, for the error when run otherwise) runs in. */
export function workerPort<In, Out>(script: string): WorkerPort<In, Out> {
  if (isNode) {
    const p = nodeBuiltin<{ parentPort: NodeParentPort | null }>('node:worker_threads').parentPort;
    if (!p) throw new Error(`attnlab ${script}: not started as a worker thread`);
    return { post: (m, transfer) => p.postMessage(m, transfer), listen: (f) => p.on('message', f) };
  }
  const scope = globalThis as unknown as WebScope;
  return { post: (m, transfer) => scope.postMessage(m, transfer ?? []), listen: (f) => (scope.onmessage = (e) => f(e.data)) };
}
