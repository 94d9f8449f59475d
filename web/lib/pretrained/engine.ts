// The engine behind a PretrainedModel: one WebAssembly instance holding one checkpoint's weights
// and KV cache. openEngine() streams model.safetensors into it; LocalEngine runs it on the calling
// thread. A browser's loadModel() runs the same two inside a Worker (worker.ts) and talks to it
// through WorkerEngine (worker-engine.ts): the model object above sees one interface either way.
import { filled } from '../filled.js';
import { asTrapError, hasTrapped, trapGuarded } from '../trap.js';
import { instantiatePretrained, type PretrainedInfoOut, type PretrainedRunOut, type PretrainedWasm } from './module.js';
import { Chunks, fileError, type FileName, type Opened } from './sources.js';

/** One forward over `ids` (decoders: appended to the KV cache with `extend`). */
export interface RunCall {
  ids: number[];
  types?: number[];
  attentions: boolean;
  extend: boolean;
  /** The public call, for error messages ('forward', 'generate', 'fillMask'). */
  call: string;
}

export interface Engine {
  readonly info: PretrainedInfoOut;
  run(c: RunCall): Promise<PretrainedRunOut>;
  /** Bytes of WebAssembly memory the instance holds (as of its last call). */
  heapBytes(): number;
  dispose(): void;
}

export interface EngineOptions {
  variant: 'scalar' | 'simd' | 'relaxed-simd';
  threads: number;
  /** int8 weights for the dense layers and the output projection (loadModel's quantize: 'int8'). */
  quantize: boolean;
  /** config.json and model.safetensors as the errors name them (the Worker's too). */
  files: { config: FileName; weights: FileName };
  onProgress?: (p: { loaded: number; total: number }) => void;
  signal?: AbortSignal;
}

// The binding's error message as the call's Error: the engine's own messages may already name
// the call (forward's argument checks).
export const failIn = (call: string) => (message: string) => new Error(message.startsWith(call + ': ') ? message : `${call}: ${message}`);

/** After a trap (trap.ts): where a working model comes from. */
const AGAIN = 'call loadModel() for a new model';

const STAGING = 1 << 20;  // bytes per copy into the heap while streaming the weights
// The heap's ceiling (-sMAXIMUM_MEMORY=2GB), less room for the calls' own buffers.
const HEAP_LIMIT = 2 ** 31, HEAP_MARGIN = 96 << 20;

/**
 * A fresh instance with the checkpoint's weights: the safetensors header and the config are
 * checked (every tensor's name, dtype, shape and offsets) before the parameters are allocated,
 * then the data streams into the heap 1 MB at a time (never the whole file in JavaScript).
 */
export async function openEngine(configText: string, weights: Opened, options: EngineOptions): Promise<LocalEngine> {
  const { signal, onProgress } = options;
  // The engine's messages about the checkpoint name the file they are about: config.json's own
  // begin 'config.json: ', the rest ('safetensors: ', 'checkpoint: ') are the weights'.
  const { files } = options;
  const fail = (message: string) => fileError(message.startsWith('config.json: ') ? files.config : files.weights, message);
  // Before the header is read the bytes have no other prefix: unnamed, they are model.safetensors.
  const failEarly = (message: string) => fileError(files.weights, message, `loadModel: model.safetensors: ${message}`);
  const wasm = await instantiatePretrained(options.variant, options.threads).catch((e: unknown) => {
    void weights.stream.cancel().catch(() => {});  // a URL's download stops too
    throw e;
  });
  const heap = () => new Uint8Array(wasm.memoryBuffer());
  const { size } = weights;
  const chunks = new Chunks(weights.stream, signal);
  let stage = 0, id = 0;
  try {
    stage = wasm._malloc(STAGING);
    const first = await chunks.exactly(8);
    heap().set(first, stage);
    const { length: n } = filled<{ length: number }>((out) => wasm.pretrainedHeaderLength(stage, size || Number.MAX_SAFE_INTEGER, out),
      failEarly);
    const header = await chunks.exactly(n);
    if (header.length < n) throw failEarly(`the file ends inside its ${n}-byte header (truncated)`);
    let fileSize = size;
    if (!fileSize) {
      // No Content-Length: the data section ends where the last tensor does. A header that is
      // not JSON is left to pretrainedOpen, whose message says where.
      let h: Record<string, { data_offsets?: number[] }> = {};
      try {
        h = JSON.parse(new TextDecoder().decode(header)) as typeof h;
      } catch { /* reported below */ }
      fileSize = 8 + n + Math.max(0, ...Object.values(h ?? {}).map((t) => t?.data_offsets?.[1] ?? 0));
    }
    const hp = wasm._malloc(n);
    heap().set(header, hp);
    const maxBytes = Math.max(0, HEAP_LIMIT - wasm.heapUsed() - HEAP_MARGIN);
    let info: PretrainedInfoOut;
    try {
      info = filled<PretrainedInfoOut>((out) => wasm.pretrainedOpen({ config: configText, header: hp, headerLength: n, fileSize, maxBytes, quantize: options.quantize }, out),
        fail);
    } finally {
      if (!hasTrapped(wasm)) wasm._free(hp);
    }
    id = info.id;
    let offset = 0;
    onProgress?.({ loaded: 8 + n, total: size });
    for (let c = await chunks.next(); c; c = await chunks.next()) {
      for (let at = 0; at < c.byteLength; at += STAGING) {
        const piece = c.subarray(at, Math.min(c.byteLength, at + STAGING));
        heap().set(piece, stage);
        const err = wasm.pretrainedFeed(id, offset, stage, piece.byteLength);
        if (err) throw fail(err);
        offset += piece.byteLength;
      }
      onProgress?.({ loaded: 8 + n + offset, total: size });
    }
    const err = wasm.pretrainedFinish(id);
    if (err) throw fail(err);
    return new LocalEngine(wasm, info);
  } catch (e) {
    chunks.cancel();
    if (!hasTrapped(wasm)) {
      if (id) wasm.pretrainedDispose(id);
      wasm.setThreads(1);
    }
    wasm.terminateWorkers();
    throw asTrapError(wasm, 'loadModel', AGAIN, e);
  } finally {
    if (!hasTrapped(wasm)) wasm._free(stage);
  }
}

/** The engine on this thread: each run is synchronous underneath (runNow), resolved at once. */
export class LocalEngine implements Engine {
  private disposed = false;
  constructor(private readonly wasm: PretrainedWasm, readonly info: PretrainedInfoOut) {}

  runNow(c: RunCall): PretrainedRunOut {
    if (this.disposed) throw new Error(`${c.call}: the model has been disposed`);
    const w = this.wasm, args = { id: this.info.id, ids: c.ids, types: c.types ?? null, attentions: c.attentions, extend: c.extend };
    return trapGuarded(w, c.call, AGAIN, () => filled<PretrainedRunOut>((out) => w.pretrainedRun(args, out), failIn(c.call)));
  }

  run(c: RunCall): Promise<PretrainedRunOut> {
    try {
      return Promise.resolve(this.runNow(c));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  heapBytes(): number {
    return this.disposed ? 0 : this.wasm.memoryBuffer().byteLength;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (!hasTrapped(this.wasm)) {
      this.wasm.pretrainedDispose(this.info.id);
      this.wasm.setThreads(1);
    }
    this.wasm.terminateWorkers();
  }
}
