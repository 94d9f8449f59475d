/** The Emscripten module as the bindings (cpp/bindings/) expose it. Internal. */
export interface WasmModule {
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  memoryBuffer(): ArrayBufferLike;
  attention(args: object): string;
  attentionScores(args: object): string;
  maskedSoftmax(args: object): string;
  multiHeadAttention(args: object): string;
  linear(args: object): string;
  nadarayaWatson(args: object): string;
  positionalEncoding(length: number, dim: number, out: number): string;
  setThreads(n: number): string;
  threadCount(): number;
  heapUsed(): number;
  isa(): string;
  findNonfinite(ptr: number, length: number, negInfOk: boolean): number;
  unrefWorkers(): void;
  terminateWorkers(): void;
}

export interface FactoryOptions {
  wasmBinary?: Uint8Array;
  locateFile?: (path: string) => string;
  mainScriptUrlOrBlob?: string;
  pthreadPoolSize?: number;
}

export type ModuleFactory = (options: FactoryOptions) => Promise<WasmModule>;
