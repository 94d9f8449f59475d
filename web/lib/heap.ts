import { jsFiniteScan, type FiniteScan } from './tensor.js';
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

  put(data: Float32Array | Uint8Array | Int32Array): number {
    const p = this.alloc(data.byteLength);
    new Uint8Array(this.m.memoryBuffer(), p, data.byteLength).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    return p;
  }

  /** A JS-owned copy: later calls or memory growth cannot change it. */
  take(p: number, length: number): Float32Array {
    return new Float32Array(this.m.memoryBuffer(), p, length).slice();
  }

  /** As take(), for bytes. */
  takeBytes(p: number, length: number): Uint8Array {
    return new Uint8Array(this.m.memoryBuffer(), p, length).slice();
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

/**
 * The finite check of big inputs by the SIMD kernel over a heap copy: the JS loop costs about a
 * nanosecond per value (0.75 ms for attention's q, k, v at H8 S512 d64, serial before the threads
 * start), the copy and kernel about a tenth of that. Small arrays stay with the JS loop.
 */
export function heapFiniteScan(m: WasmModule): FiniteScan {
  return (data, allowNegInf) => {
    if (data.length < 4096) return jsFiniteScan(data, allowNegInf);
    const p = m._malloc(data.byteLength);
    if (p === 0) return jsFiniteScan(data, allowNegInf);
    try {
      new Float32Array(m.memoryBuffer(), p, data.length).set(data);
      return m.findNonfinite(p, data.length, allowNegInf);
    } finally {
      m._free(p);
    }
  };
}
