// The Worker behind a browser's loadModel(): a module Worker with the checkpoint's WebAssembly
// instance of its own, so a forward over a long text or a GPT-2-sized load never blocks the page.
// In: load (once), then run. Out: ready, progress, loaded, ran, error (see worker-protocol.ts).
import { openEngine, type LocalEngine } from './engine.js';
import type { ModelWorkerMessage, ModelWorkerRequest } from './worker-protocol.js';

type Scope = { postMessage(m: ModelWorkerMessage, transfer?: Transferable[]): void; onmessage: ((e: { data: ModelWorkerRequest }) => void) | null };
const scope = globalThis as unknown as Scope;
const message = (e: unknown) => (e instanceof Error ? e.message : String(e));
let engine: LocalEngine | null = null;

scope.onmessage = ({ data: m }) => {
  if (m.type === 'load') {
    openEngine(m.config, { size: m.size, stream: m.weights }, {
      variant: m.variant, threads: m.threads, quantize: m.quantize, files: m.files,
      onProgress: ({ loaded, total }) => scope.postMessage({ type: 'progress', loaded, total }),
    }).then((e) => {
      engine = e;
      scope.postMessage({ type: 'loaded', info: e.info, heapBytes: e.heapBytes() });
    }, (e: unknown) => scope.postMessage({ type: 'error', message: message(e) }));
    return;
  }
  // Requests are handled in order, each to the end: a generate()'s KV cache sees its steps in turn.
  try {
    if (!engine) throw new Error(`${m.run.call}: the model is not loaded`);
    const out = engine.runNow(m.run);
    const transfer: Transferable[] = [out.logits.buffer as ArrayBuffer, ...(out.attention ? [out.attention.buffer as ArrayBuffer] : [])];
    scope.postMessage({ type: 'ran', seq: m.seq, out, heapBytes: engine.heapBytes() }, transfer);
  } catch (e) {
    scope.postMessage({ type: 'error', seq: m.seq, message: message(e) });
  }
};
scope.postMessage({ type: 'ready' });
