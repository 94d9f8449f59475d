import { isTyped, jsFiniteScan, type FiniteScan } from './tensor.js';
import { asTrapError, hasTrapped } from './trap.js';
import type { WasmModule } from './wasm-module.js';

export const MAX_BYTES = 2 ** 31 - 1;  // the heap's hard ceiling (2 GiB)

/** After a trap (trap.ts): where a working instance comes from. */
export const RELOAD = 'call load() for a new instance';

/**
 * The WebAssembly allocations of one call: inputs copied in, outputs copied out into JS-owned
 * arrays, everything freed in `free()` whatever happened in between.
 */
export class Scratch {
  private readonly ptrs: number[] = [];
  constructor(private readonly m: WasmModule, private readonly fn: string, private readonly copies?: HeapCopies) {}

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
    const kept = isTyped(data, 'float32') ? this.copies?.take(data) : undefined;
    if (kept !== undefined) {
      this.ptrs.push(kept);
      return kept;
    }
    const p = this.alloc(data.byteLength);
    new Uint8Array(this.m.memoryBuffer(), p, data.byteLength).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    return p;
  }

  /**
   * A JS-owned copy: later calls or memory growth cannot change it. Into `into` when given (the
   * caller's options.out, of `length` values): no new array, so none of its pages is touched for
   * the first time (~3.5 us a 4 KiB page on a KVM guest: 5-9% of attention at H8 S512).
   */
  take(p: number, length: number, into?: Float32Array | null): Float32Array {
    const view = new Float32Array(this.m.memoryBuffer(), p, length);
    if (!into) return view.slice();
    into.set(view);
    return into;
  }

  /** As take(), for bytes. */
  takeBytes(p: number, length: number): Uint8Array {
    return new Uint8Array(this.m.memoryBuffer(), p, length).slice();
  }

  /** As take(), for int32 values. */
  takeInt32(p: number, length: number): Int32Array {
    return new Int32Array(this.m.memoryBuffer(), p, length).slice();
  }

  free(): void {
    for (const p of this.ptrs) this.m._free(p);
    this.ptrs.length = 0;
  }
}

/**
 * Runs `body` with a Scratch, always freeing it; turns a binding's error string into an Error.
 * With `copies`, put() takes the inputs a HeapCopies scan already copied into the heap.
 */
export function withScratch<T>(m: WasmModule, fn: string, body: (s: Scratch, check: (err: string) => void) => T, copies?: HeapCopies): T {
  const s = new Scratch(m, fn, copies);
  try {
    return body(s, (err) => {
      if (err) throw new Error(`${fn}: ${err}`);
    });
  } catch (e) {
    throw asTrapError(m, fn, RELOAD, e);
  } finally {
    if (!hasTrapped(m)) s.free();
  }
}

/**
 * The finite check of big inputs by the SIMD kernel over a heap copy: the JS loop costs about a
 * nanosecond per value (0.75 ms for attention's q, k, v at H8 S512 d64, serial before the threads
 * start), the copy and kernel about a tenth of that. Small arrays stay with the JS loop. The copy
 * is freed at once: for checks whose run may not follow on this module (WebGPU).
 */
export function heapFiniteScan(m: WasmModule, fn: string): FiniteScan {
  return (data, allowNegInf) => withHeapCopies(m, fn, (copies) => copies.scan(data, allowNegInf));
}

/**
 * heapFiniteScan that keeps its heap copies for the run that follows, so each big input crosses
 * into the heap once (Scratch.put takes the copy; a second put of the same array copies again,
 * since a run may change its copy in place, as rope does). free() releases what no put took:
 * withHeapCopies does, around the checks and the run.
 */
export class HeapCopies {
  private readonly kept = new Map<Float32Array, number>();
  constructor(private readonly m: WasmModule) {}

  readonly scan: FiniteScan = (data, allowNegInf) => {
    if (data.length < 4096) return jsFiniteScan(data, allowNegInf);
    let p = this.kept.get(data);
    if (p === undefined) {
      p = this.m._malloc(data.byteLength);
      if (p === 0) return jsFiniteScan(data, allowNegInf);
      this.kept.set(data, p);
      new Float32Array(this.m.memoryBuffer(), p, data.length).set(data);
    }
    return this.m.findNonfinite(p, data.length, allowNegInf);
  };

  /** The heap copy of `data`, now the caller's to free, or undefined. */
  take(data: Float32Array): number | undefined {
    const p = this.kept.get(data);
    this.kept.delete(data);
    return p;
  }

  free(): void {
    for (const p of this.kept.values()) this.m._free(p);
    this.kept.clear();
  }
}

/** Runs `body` (the checks of the public call `fn` with copies.scan, then the run) and frees whatever copies it left. */
export function withHeapCopies<T>(m: WasmModule, fn: string, body: (copies: HeapCopies) => T): T {
  const copies = new HeapCopies(m);
  try {
    return body(copies);
  } catch (e) {
    throw asTrapError(m, fn, RELOAD, e);
  } finally {
    if (!hasTrapped(m)) copies.free();
  }
}
