/** The Emscripten module as the bindings (cpp/bindings/) expose it. Internal. */
export interface WasmModule {
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  memoryBuffer(): ArrayBufferLike;
  attention(args: object): string;
  attentionScores(args: object): string;
  maskedSoftmax(args: object): string;
  multiHeadAttention(args: object): string;
  nadarayaWatson(args: object): string;
  positionalEncoding(length: number, dim: number, out: number): string;
  sparseAttention(args: object): string;
  attentionPattern(args: object): string;
  linearAttention(args: object): string;
  rope(args: object): string;
  multiHeadAttentionRope(args: object): string;
  setThreads(n: number): string;
  threadCount(): number;
  heapUsed(): number;
  isa(): string;
  unrefWorkers(): void;
  terminateWorkers(): void;
}

export interface FactoryOptions {
  wasmBinary?: Uint8Array;
  locateFile?: (path: string) => string;
  mainScriptUrlOrBlob?: string;
  pthreadPoolSize?: number;
  printErr?: (text: string) => void;
}

export type ModuleFactory = (options: FactoryOptions) => Promise<WasmModule>;
