// The page's side of a checkpoint's Worker (worker.ts): starts it, hands it the config and the
// weights' stream, forwards its progress, and turns each run into a request answered in order.
// Aborting the load and dispose() terminate the Worker, which frees its whole instance at once.
import type { PretrainedInfoOut, PretrainedRunOut } from './module.js';
import type { Engine, EngineOptions, RunCall } from './engine.js';
import type { Opened } from './sources.js';
import type { ModelWorkerMessage, ModelWorkerRequest } from './worker-protocol.js';
import { spawnBrowserWorker, type SpawnedWorker } from '../worker-spawn.js';

// Not spelled inside `new URL('…', import.meta.url)`: bundlers would copy the file as a plain asset.
const WORKER_FILE = './worker.js';

/** No Worker could start here; the message says why each way failed. */
export class NoWorker extends Error {}

type Pending = { resolve: (o: PretrainedRunOut) => void; reject: (e: Error) => void };

export class WorkerEngine implements Engine {
  private seq = 0;
  private readonly pending = new Map<number, Pending>();
  private bytes = 0;
  private ended = false;

  private constructor(private readonly worker: SpawnedWorker<ModelWorkerRequest>, readonly info: PretrainedInfoOut, heapBytes: number) {
    this.bytes = heapBytes;
  }

  /**
   * Starts a Worker (rejecting, with each way's reason, where none can start: a CSP without
   * worker-src for it, say) and loads the checkpoint in it; rejects with the signal's reason on abort.
   */
  static async open(configText: string, weights: Opened, options: EngineOptions): Promise<WorkerEngine> {
    const { signal, onProgress } = options;
    signal?.throwIfAborted();
    let engine: WorkerEngine | null = null;
    let settle!: { resolve: (e: WorkerEngine) => void; reject: (e: unknown) => void };
    const loaded = new Promise<WorkerEngine>((resolve, reject) => (settle = { resolve, reject }));
    const worker = await spawnBrowserWorker<ModelWorkerRequest, ModelWorkerMessage>(
      () => new Worker(new URL('./worker.js', import.meta.url), { type: 'module' }), new URL(WORKER_FILE, import.meta.url).href, {
        message: (m) => {
          if (engine) engine.receive(m);
          else if (m.type === 'progress') onProgress?.({ loaded: m.loaded, total: m.total });
          else if (m.type === 'loaded') settle.resolve((engine = new WorkerEngine(worker, m.info, m.heapBytes)));
          else if (m.type === 'error') settle.reject(new Error(m.message));
        },
        failed: (reason) => {
          const e = new Error(`loadModel: the model's Worker failed: ${reason}`);
          if (engine) engine.end(e);
          else settle.reject(e);
        },
      }).catch((e: Error) => {
        throw new NoWorker(e.message);
      });
    const abort = () => settle.reject(signal!.reason ?? new DOMException('aborted', 'AbortError'));
    signal?.addEventListener('abort', abort, { once: true });
    if (signal?.aborted) abort();  // while the Worker was starting
    try {
      // The stream itself moves to the Worker: the page keeps no copy of the weights.
      worker.post({ type: 'load', config: configText, weights: weights.stream, size: weights.size, variant: options.variant, threads: options.threads, quantize: options.quantize, files: options.files },
        [weights.stream as unknown as Transferable]);
      return await loaded;
    } catch (e) {
      worker.terminate();
      void weights.stream.cancel().catch(() => {});
      throw e;
    } finally {
      signal?.removeEventListener('abort', abort);
    }
  }

  private receive(m: ModelWorkerMessage): void {
    if (m.type !== 'ran' && m.type !== 'error') return;
    const p = m.seq === undefined ? undefined : this.pending.get(m.seq);
    if (!p) return;
    this.pending.delete(m.seq!);
    if (m.type === 'ran') {
      this.bytes = m.heapBytes;
      p.resolve(m.out);
    } else p.reject(new Error(m.message));
  }

  private end(reason: Error): void {
    this.ended = true;
    this.bytes = 0;
    this.worker.terminate();
    for (const p of this.pending.values()) p.reject(reason);
    this.pending.clear();
  }

  run(c: RunCall): Promise<PretrainedRunOut> {
    if (this.ended) return Promise.reject(new Error(`${c.call}: the model has been disposed`));
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      this.worker.post({ type: 'run', seq, run: c });
    });
  }

  heapBytes(): number {
    return this.bytes;
  }

  dispose(): void {
    if (!this.ended) this.end(new Error('the model has been disposed'));
  }
}
