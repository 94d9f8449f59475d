/** The Emscripten module as the bindings (cpp/bindings/) expose it. Internal. */
export interface WasmModule {
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  memoryBuffer(): ArrayBufferLike;
  /** Index of the first value at `ptr` that is not finite (-Infinity passes when allowed), or -1. */
  findNonfinite(ptr: number, n: number, negInfOk: boolean): number;
  attention(args: object): string;
  attentionScores(args: object): string;
  maskedSoftmax(args: object): string;
  multiHeadAttention(args: object): string;
  nadarayaWatson(args: object): string;
  positionalEncoding(length: number, dim: number, out: number): string;
  sparseAttention(args: object): string;
  attentionPattern(args: object): string;
  linearAttention(args: object): string;
  linear(args: object): string;
  rope(args: object): string;
  shawAttention(args: object): string;
  multiHeadAttentionPositions(args: object): string;
  t5BiasTable(args: object): string;
  lshAttention(args: object): string;
  synthesizer(args: object): string;
  setThreads(n: number): string;
  threadCount(): number;
  wakeThreads(): void;
  heapUsed(): number;
  isa(): string;
  translatorCreate(ptr: number, len: number): string;
  translatorTranslate(id: number, text: string, beam: number, maxLength: number, lengthPenalty: number): string;
  translatorDispose(id: number): void;
  trainerCreate(task: string, arch: number, hidden: number, symbols: number, minLen: number, maxLen: number, batch: number, lr: number, seed: number): string;
  trainerStep(id: number, steps: number): string;
  trainerEvaluate(id: number, n: number, seed: number): string;
  trainerDispose(id: number): void;
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
