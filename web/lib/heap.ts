import type { CheckedTensor } from './tensor.js';
import type { WasmModule } from './wasm-module.js';

const MAX_BYTES = 2 ** 31 - 1;  // the heap's hard ceiling (2 GiB)

/**
 * The WebAssembly allocations of one call: inputs copied in, outputs copied out into JS-owned
 * arrays, everything freed in `free()` whatever happened in between.
 */
export class Scratch {
  private readonly ptrs: number[] = [];
  constructor(private readonly m: WasmModule, private readonly fn: string) {}

  alloc(bytes: number): number {
    if (bytes > MAX_BYTES) {
      throw new Error(`${this.fn}: out of memory: ${bytes} bytes exceeds the WebAssembly heap's 2 GiB limit`);
    }
    const p = this.m._malloc(Math.max(bytes, 4));
    if (p === 0) throw new Error(`${this.fn}: out of memory: could not allocate ${bytes} bytes in the WebAssembly heap`);
    this.ptrs.push(p);
    return p;
  }

  /** Copies into the heap; a float tensor's values are checked there (see CheckedTensor). */
  put(x: CheckedTensor | Uint8Array | Int32Array): number {
    const data = x instanceof Uint8Array || x instanceof Int32Array ? x : x.data;
    const p = this.alloc(data.byteLength);
    new Uint8Array(this.m.memoryBuffer(), p, data.byteLength).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    if (data instanceof Float32Array) {
      const t = x as CheckedTensor;
      const i = this.m.findNonfinite(p, data.length, t.negInfOk);
      if (i >= 0) {
        const expected = t.negInfOk ? 'finite values or -Infinity' : 'finite values';
        throw new Error(`${this.fn}: ${t.name}: expected ${expected}, got ${data[i]} at index ${i}`);
      }
    }
    return p;
  }

  /** A JS-owned copy: later calls or memory growth cannot change it. */
  take(p: number, length: number): Float32Array {
    return new Float32Array(this.m.memoryBuffer(), p, length).slice();
  }

  free(): void {
    for (const p of this.ptrs) this.m._free(p);
    this.ptrs.length = 0;
  }
}

/** Runs `body` with a Scratch, always freeing it; turns a binding's error string into an Error. */
export function withScratch<T>(m: WasmModule, fn: string, body: (s: Scratch, check: (err: string) => void) => T): T {
  const s = new Scratch(m, fn);
  try {
    return body(s, (err) => {
      if (err) throw new Error(`${fn}: ${err}`);
    });
  } finally {
    s.free();
  }
}
