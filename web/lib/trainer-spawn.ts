// Starts the trainer's Worker wherever one can start. Browsers: worker-spawn.ts's ways (the
// bundlers' literal, then same-origin blob: and data: bootstraps). Node: a worker_threads Worker.
// A Worker counts as started once it has posted 'ready'; an error before that tries the next way.
import { isNode } from './loader.js';
import { type TrainerMessage, type TrainerRequest } from './trainer-protocol.js';
import { spawnBrowserWorker, spawnNodeWorker } from './worker-spawn.js';

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

function spawnNode(on: TrainerWorkerEvents): Promise<TrainerWorker> {
  return spawnNodeWorker<TrainerRequest, TrainerMessage>(new URL(WORKER_FILE, import.meta.url), on);
}

function spawnBrowser(on: TrainerWorkerEvents): Promise<TrainerWorker> {
  return spawnBrowserWorker<TrainerRequest, TrainerMessage>(() => new Worker(new URL('./trainer-worker.js', import.meta.url), { type: 'module' }),
    new URL(WORKER_FILE, import.meta.url).href, on);
}
