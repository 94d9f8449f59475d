// Starts the trainer's Worker wherever one can start. Browsers: worker-spawn.ts's ways (the
// bundlers' literal, then same-origin blob: and data: bootstraps). Node: a worker_threads Worker.
// A Worker counts as started once it has posted 'ready'; an error before that tries the next way.
import { isNode } from './loader.js';
import { spawnBrowserWorker } from './worker-spawn.js';
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

function spawnBrowser(on: TrainerWorkerEvents): Promise<TrainerWorker> {
  return spawnBrowserWorker<TrainerRequest, TrainerMessage>(() => new Worker(new URL('./trainer-worker.js', import.meta.url), { type: 'module' }),
    new URL(WORKER_FILE, import.meta.url).href, on);
}
