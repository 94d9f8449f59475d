// loadModel: a Hugging Face checkpoint (config.json + model.safetensors + its tokenizer files) in
// a WebAssembly instance of its own, with every layer's and head's attention on each call.
import { disposeSymbol } from '../dispose.js';
import { argError, describe } from '../errors.js';
import type { Tensor } from '../types.js';
import { fastestSingleThreaded, isNode, relaxedSimdSupported, simdSupported } from '../loader.js';
import { checkOptions, checkOptionsObject, isTyped } from '../tensor.js';
import { ByteLevelBpe } from './bpe.js';
import { openEngine, type Engine, type EngineOptions } from './engine.js';
import type { PretrainedInfoOut, PretrainedRunOut } from './module.js';
import { fileError, fileName, isFileSource, label, open, readText, type FileName, type FileSource } from './sources.js';
import { WordPiece } from './wordpiece.js';
import { NoWorker, WorkerEngine } from './worker-engine.js';

export type { FileSource } from './sources.js';

/** A checkpoint's files. Strings are URLs; in Node also paths (against the working directory). */
export interface CheckpointFiles {
  /** config.json: its text's source, or the parsed object. */
  config: FileSource | Record<string, unknown>;
  /** model.safetensors (F32, F16 or BF16). */
  weights: FileSource;
  /** tokenizer.json; or, instead, vocab.json + merges.txt (GPT-2, GPT-Neo) or vocab.txt (BERT). */
  tokenizer?: FileSource;
  vocab?: FileSource;
  merges?: FileSource;
}

export interface ModelLoadProgress {
  /** Bytes of model.safetensors read so far. */
  loaded: number;
  /** Its size; 0 when the server did not say. */
  total: number;
}

export interface LoadModelOptions {
  onProgress?: (p: ModelLoadProgress) => void;
  /** Cancels the download and the load (the promise rejects with the signal's reason). */
  signal?: AbortSignal;
  /** WebAssembly build; default the fastest the engine validates (relaxed SIMD, else SIMD128, else scalar). */
  variant?: 'scalar' | 'simd' | 'relaxed-simd';
  /** Threads (default 1); more than 1 runs the build's threaded twin, which needs SharedArrayBuffer. */
  threads?: number;
  /**
   * `'int8'`: the dense layers' and the output projection's weights as int8 rows with one scale
   * each, quantised as they stream in (about a third of fp32's memory; logits move by about 1-3%
   * of their range on the test models). Default: the checkpoint's weights in fp32.
   */
  quantize?: 'int8';
  /**
   * Browsers: run the model in a Worker of its own (default true), so long forwards and loads
   * never block the page; false runs it on the calling thread. The model's methods are the same
   * either way. Where no Worker can start (a CSP without worker-src for it), the default falls
   * back to the calling thread (`model.workerError` says why) and true rejects. Node runs it on
   * the calling thread (true is refused there).
   */
  worker?: boolean;
}

export interface ModelInfo {
  architecture: string;
  family: 'gpt2' | 'bert' | 'gpt-neo';
  layers: number;
  heads: number;
  hidden: number;
  vocabSize: number;
  positions: number;
  parameterBytes: number;
}

export interface ForwardOptions {
  /** Every layer's attention [layers, heads, S, S]; default false. */
  attentions?: boolean;
  /** BERT's token types (segment ids), one per token; default all 0 (or from tokenize's pair). */
  tokenTypes?: readonly number[] | Int32Array;
}

export interface ForwardResult {
  ids: number[];
  tokens: string[];
  /** [S, vocab] for language-model heads; [S, hidden] (last hidden states) for BertModel. */
  logits: Tensor;
  kind: 'logits' | 'hidden';
  attentions?: Tensor;
}

export interface GenerateOptions {
  /** Tokens to generate, in [1, positions - prompt]; default 20. */
  maxTokens?: number;
  /** 0: greedy (default 1). */
  temperature?: number;
  /** Keep the k most likely tokens (0 = all, the default). */
  topK?: number;
  /** Nucleus sampling: the smallest set of tokens whose probability reaches p (default 1). */
  topP?: number;
  /** Seed of the sampler; default 0. */
  seed?: number;
  /** Stop at GPT-2's <|endoftext|>; default true. */
  stopAtEndOfText?: boolean;
}

export interface GeneratedToken {
  id: number;
  token: string;
  /** Position of the new token in the sequence. */
  position: number;
  probability: number;
  /**
   * `[layers, heads, position]`: the attention of the query that predicted this token (the
   * previous position) over every token before it: what the model looked at to write it.
   */
  attention: Tensor;
}

export interface MaskPrediction {
  /** Index of the [MASK] in `tokens` (after [CLS]). */
  position: number;
  candidates: { id: number; token: string; probability: number }[];
}

/** GPT-2 / GPT-Neo checkpoints read text with byte-level BPE, BERT with WordPiece. */
export type Tokenizer = ByteLevelBpe | WordPiece;

function mulberry32(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function resolveFiles(input: unknown): CheckpointFiles {
  if (input instanceof URL) input = input.href;
  if (typeof input === 'string') {
    // A directory URL such as https://huggingface.co/openai-community/gpt2/resolve/main/
    const base = input.endsWith('/') ? input : input + '/';
    return { config: base + 'config.json', weights: base + 'model.safetensors', tokenizer: base + 'tokenizer.json' };
  }
  if (Array.isArray(input) || (typeof FileList !== 'undefined' && input instanceof FileList)) {
    const byName = new Map<string, File>();
    for (const f of Array.from(input as ArrayLike<File>)) {
      if (!(typeof File !== 'undefined' && f instanceof File)) throw argError('loadModel', 'files', 'File objects', f);
      byName.set(f.name, f);
    }
    const config = byName.get('config.json'), weights = byName.get('model.safetensors');
    if (!config || !weights) throw argError('loadModel', 'files', 'config.json and model.safetensors among the files', [...byName.keys()]);
    return { config, weights, tokenizer: byName.get('tokenizer.json'), vocab: byName.get('vocab.json') ?? byName.get('vocab.txt'), merges: byName.get('merges.txt') };
  }
  if (input && typeof input === 'object' && 'weights' in input && 'config' in input) {
    const f = input as CheckpointFiles;
    if (!isFileSource(f.weights)) throw argError('loadModel', 'files.weights', 'a URL, File, Blob, Response, ArrayBuffer or Uint8Array', f.weights);
    return f;
  }
  throw argError('loadModel', 'files', 'a base URL, a list of Files, or { config, weights, tokenizer | vocab [, merges] }', input);
}

/** The tokenizer, and the file its vocabulary came from (for loadModel's size check). */
async function loadTokenizer(f: CheckpointFiles, family: ModelInfo['family'], signal?: AbortSignal): Promise<{ tokenizer: Tokenizer; file: FileName }> {
  let tokenizerJson: string | null = null;
  const tokenizerFile = fileName('files.tokenizer', f.tokenizer);
  if (f.tokenizer !== undefined) {
    try {
      tokenizerJson = await readText(f.tokenizer, tokenizerFile, signal);
    } catch (e) {
      // A base URL guesses tokenizer.json; older repositories have only the vocabulary files.
      if (f.vocab === undefined && typeof f.tokenizer !== 'string') throw e;
      if (signal?.aborted) throw e;
    }
  }
  if (tokenizerJson !== null) {
    const json = tokenizerJson;
    const tokenizer = named(tokenizerFile, () => {
      const t = JSON.parse(json) as { model?: { type?: string; vocab?: Record<string, number>; merges?: (string | [string, string])[] }; normalizer?: { lowercase?: boolean } } | null;
      const m = t?.model;
      if (m?.type === 'BPE' && m.vocab && m.merges) return new ByteLevelBpe(m.vocab, m.merges);
      if (m?.type === 'WordPiece' && m.vocab) {
        const tokens: string[] = [];
        for (const [tok, id] of Object.entries(m.vocab)) tokens[id] = tok;
        return new WordPiece(tokens, t?.normalizer?.lowercase ?? WordPiece.looksUncased(tokens));
      }
      throw fileError(tokenizerFile, `tokenizer.json: model type ${describe(m?.type)} is not supported (BPE, WordPiece)`);
    });
    return { tokenizer, file: tokenizerFile };
  }
  const base = typeof f.config === 'string' ? f.config.replace(/config\.json$/, '') : null;
  if (family === 'bert') {
    const vocab = f.vocab ?? (base ? base + 'vocab.txt' : undefined);
    if (vocab === undefined) throw argError('loadModel', 'files', 'tokenizer.json or vocab.txt for a BERT model', 'neither');
    const file = fileName('files.vocab', vocab);
    const text = await readText(vocab, file, signal);
    return { tokenizer: named(file, () => WordPiece.fromVocabTxt(text)), file };
  }
  const vocab = f.vocab ?? (base ? base + 'vocab.json' : undefined), merges = f.merges ?? (base ? base + 'merges.txt' : undefined);
  if (vocab === undefined || merges === undefined) throw argError('loadModel', 'files', 'tokenizer.json, or vocab.json and merges.txt', 'neither');
  const vocabFile = fileName('files.vocab', vocab), mergesFile = fileName('files.merges', merges);
  const vocabText = await readText(vocab, vocabFile, signal), mergesText = await readText(merges, mergesFile, signal);
  return { tokenizer: named(vocabFile, () => ByteLevelBpe.fromFiles(vocabText, mergesText), mergesFile), file: vocabFile };
}

/**
 * A tokenizer built from a file's text, its errors (the JSON's, or ByteLevelBpe: merges[3]: ...)
 * as loadModel's naming that file: the merges' errors name `mergesFile`.
 */
function named<T>(file: FileName, make: () => T, mergesFile?: FileName): T {
  try {
    return make();
  } catch (e) {
    if (!(e instanceof Error) || e.message.startsWith('loadModel: ')) throw e;
    const f = mergesFile && e.message.startsWith('ByteLevelBpe: merges[') ? mergesFile : file;
    throw new Error(`loadModel: ${label(f)}: ${e instanceof SyntaxError ? 'invalid JSON: ' : ''}${e.message}`);
  }
}

/**
 * Loads a GPT-2, BERT or GPT-Neo checkpoint in Hugging Face's layout into a WebAssembly instance
 * of its own. The weights stream into the heap in 1 MB pieces; the header and config are checked
 * (every tensor's name, dtype, shape and offsets) before the parameters are allocated.
 */
export async function loadModel(files: CheckpointInput, options: LoadModelOptions = {}): Promise<PretrainedModel> {
  const unknown = Object.keys(checkOptionsObject('loadModel', 'options', options)).filter((k) => !['onProgress', 'signal', 'variant', 'threads', 'quantize', 'worker'].includes(k));
  if (unknown.length) throw argError('loadModel', 'options', 'only onProgress, signal, variant, threads, quantize, worker', unknown);
  if (options.quantize !== undefined && options.quantize !== 'int8') throw argError('loadModel', 'options.quantize', "'int8' or undefined", options.quantize);
  const threads = options.threads ?? 1;
  if (!Number.isInteger(threads) || threads < 1 || threads > 16) throw argError('loadModel', 'options.threads', 'an integer in [1, 16]', threads);
  const v = options.variant;
  if (v !== undefined && !(['scalar', 'simd', 'relaxed-simd'] as unknown[]).includes(v))
    throw argError('loadModel', 'options.variant', "'scalar', 'simd' or 'relaxed-simd'", v);
  if ((v === 'simd' && !simdSupported()) || (v === 'relaxed-simd' && !relaxedSimdSupported()))
    throw argError('loadModel', 'options.variant', 'a build this engine validates', v);
  // The scalar build has no threaded twin: threads would have loaded the SIMD one instead.
  if (v === 'scalar' && threads > 1) throw argError('loadModel', 'options.threads', "1 with variant 'scalar' (it has no threaded build)", threads);
  const inWorker = options.worker ?? (!isNode && typeof Worker !== 'undefined');
  if (typeof inWorker !== 'boolean') throw argError('loadModel', 'options.worker', 'a boolean', inWorker);
  if (inWorker && (isNode || typeof Worker === 'undefined'))
    throw argError('loadModel', 'options.worker', 'false here (Worker models are for browsers)', inWorker);
  if (options.onProgress !== undefined && typeof options.onProgress !== 'function') throw argError('loadModel', 'options.onProgress', 'a function', options.onProgress);
  const { signal } = options;
  if (signal !== undefined && !(typeof AbortSignal !== 'undefined' && signal instanceof AbortSignal)) throw argError('loadModel', 'options.signal', 'an AbortSignal', signal);
  const f = resolveFiles(files);
  const parsed = typeof f.config === 'object' && !isFileSource(f.config);
  const names = { config: fileName('files.config', parsed ? undefined : f.config), weights: fileName('files.weights', f.weights) };
  const configText = parsed ? JSON.stringify(f.config) : await readText(f.config as FileSource, names.config, signal);
  const weights = await open(f.weights, names.weights, signal);
  // The build is chosen here, not in the Worker, so a Worker's numbers equal this thread's.
  const engineOptions: EngineOptions = {
    variant: v ?? (fastestSingleThreaded() as EngineOptions['variant']), threads, quantize: options.quantize === 'int8', files: names,
    onProgress: options.onProgress, signal,
  };
  let engine: Engine;
  let workerError: string | undefined;
  try {
    engine = inWorker ? await WorkerEngine.open(configText, weights, engineOptions) : await openEngine(configText, weights, engineOptions);
  } catch (e) {
    // By default a page where no Worker may start (its CSP, say) runs the model on its own thread.
    if (!(e instanceof NoWorker) || options.worker === true) throw e instanceof NoWorker ? new Error(`loadModel: no Worker could start: ${e.message}`) : e;
    workerError = `no Worker could start, the model runs on this thread: ${e.message}`;
    engine = await openEngine(configText, weights, engineOptions);
  }
  try {
    const { tokenizer, file } = await loadTokenizer(f, engine.info.family, signal);
    if (tokenizer.vocabSize > engine.info.vocab)
      throw fileError(file, `the tokenizer has ${tokenizer.vocabSize} tokens, the model's vocabulary ${engine.info.vocab}`);
    return new PretrainedModel(engine, tokenizer, engine instanceof WorkerEngine ? 'worker' : 'caller', workerError);
  } catch (e) {
    engine.dispose();
    throw e;
  }
}

// ArrayLike<File>, which a FileList is: naming FileList would make the published types need the
// DOM library in a Node-only project.
export type CheckpointInput = CheckpointFiles | string | URL | ArrayLike<File>;

export class PretrainedModel {
  readonly info: ModelInfo;
  private disposed = false;
  private busy = false;
  private readonly raw: PretrainedInfoOut;

  /**
   * @internal Use loadModel(). `runsIn`: 'worker', a browser Worker of the model's own; 'caller',
   * the thread that called loadModel(). `workerError`: why a browser model runs on the calling
   * thread instead of its default Worker, if it does.
   */
  constructor(private readonly engine: Engine, readonly tokenizer: Tokenizer, readonly runsIn: 'worker' | 'caller', readonly workerError?: string) {
    const raw = (this.raw = engine.info);
    this.info = {
      architecture: raw.architecture, family: raw.family, layers: raw.layers, heads: raw.heads, hidden: raw.hidden,
      vocabSize: raw.vocab, positions: raw.positions, parameterBytes: raw.parameterBytes,
    };
  }

  private live(call: string): void {
    if (this.disposed) throw new Error(`${call}: the model has been disposed`);
    if (this.busy) throw new Error(`${call}: the model is generating; wait for generate() to finish or return()`);
  }

  /** Token ids and their texts; BERT's are framed by [CLS] ... [SEP] with token types. */
  tokenize(text: string, pair?: string): { ids: number[]; tokens: string[]; types: number[] } {
    if (typeof text !== 'string') throw argError('tokenize', 'text', 'a string', text);
    const t = this.tokenizer;
    if (t instanceof WordPiece) {
      const { ids, types } = t.encodeForModel(text, pair);
      return { ids, tokens: ids.map((i) => t.token(i)), types };
    }
    const ids = t.encode(pair === undefined ? text : text + pair);
    return { ids, tokens: ids.map((i) => t.token(i)), types: ids.map(() => 0) };
  }

  private ids(input: string | readonly number[] | Int32Array, call: string): { ids: number[]; types?: number[] } {
    if (typeof input === 'string') {
      const t = this.tokenize(input);
      return { ids: t.ids, types: this.raw.family === 'bert' ? t.types : undefined };
    }
    if (!(Array.isArray(input) || isTyped(input, 'int32'))) throw argError(call, 'input', 'a string, an array of token ids or an Int32Array', input);
    const ids = Array.from(input as ArrayLike<number>);
    const bad = ids.findIndex((x) => !Number.isInteger(x) || x < 0 || x >= this.raw.vocab);
    if (bad >= 0) throw argError(call, `input[${bad}]`, `a token id in [0, ${this.raw.vocab})`, ids[bad]);
    return { ids };
  }

  private run(ids: number[], types: number[] | undefined, attentions: boolean, extend: boolean, call: string): Promise<PretrainedRunOut> {
    return this.engine.run({ ids, types, attentions, extend, call });
  }

  /** The whole sequence at once: logits (or BertModel's hidden states) and, on request, every attention map. */
  forward(input: string | readonly number[] | Int32Array, options: ForwardOptions & { attentions: true }): Promise<ForwardResult & { attentions: Tensor }>;
  forward(input: string | readonly number[] | Int32Array, options?: ForwardOptions): Promise<ForwardResult>;
  async forward(input: string | readonly number[] | Int32Array, options: ForwardOptions = {}): Promise<ForwardResult> {
    this.live('forward');
    checkOptions('forward', 'options', options, ['attentions', 'tokenTypes']);
    if (options.attentions !== undefined && typeof options.attentions !== 'boolean') throw argError('forward', 'options.attentions', 'a boolean', options.attentions);
    const { ids, types: tokTypes } = this.ids(input, 'forward');
    // As generate's prompt; the core's own 'forward: ids must not be empty' named no argument.
    if (!ids.length) throw argError('forward', 'input', 'at least one token', input);
    let types = tokTypes;
    if (options.tokenTypes !== undefined) {
      if (this.raw.family !== 'bert') throw argError('forward', 'options.tokenTypes', 'no token types for a decoder', options.tokenTypes);
      const given: unknown = options.tokenTypes;
      if (!(Array.isArray(given) || isTyped(given, 'int32')) || given.length !== ids.length)
        throw argError('forward', 'options.tokenTypes', `an array or Int32Array of ${ids.length} token types`, given);
      types = Array.from(given as ArrayLike<number>);
      const bad = types.findIndex((t) => !Number.isInteger(t) || t < 0 || t >= this.raw.typeVocab);
      if (bad >= 0) throw argError('forward', `options.tokenTypes[${bad}]`, `a token type in [0, ${this.raw.typeVocab})`, (given as ArrayLike<unknown>)[bad]);
    }
    const r = await this.run(ids, types, options.attentions === true, false, 'forward');
    const out: ForwardResult = {
      ids, tokens: ids.map((i) => this.tokenizer.token(i)), logits: { data: r.logits, shape: [r.rows, r.cols] },
      kind: this.raw.logits ? 'logits' : 'hidden',
    };
    if (r.attention) out.attentions = { data: r.attention, shape: [this.raw.layers, this.raw.heads, r.rows, r.ctx] };
    return out;
  }

  /**
   * Decoders: tokens one at a time through the KV cache, each with the attention that produced it.
   * Breaking out of the loop (or return()) ends the generation.
   */
  async *generate(prompt: string | readonly number[], options: GenerateOptions = {}): AsyncGenerator<GeneratedToken, void, undefined> {
    this.live('generate');
    if (this.raw.family === 'bert') throw new Error('generate: BERT is an encoder; use forward() or fillMask()');
    checkOptions('generate', 'options', options, ['maxTokens', 'temperature', 'topK', 'topP', 'seed', 'stopAtEndOfText']);
    const { ids } = this.ids(prompt as string | number[], 'generate');
    if (!ids.length) throw argError('generate', 'prompt', 'at least one token', prompt);
    const room = this.raw.positions - ids.length;
    if (room < 1) throw argError('generate', 'prompt', `at most ${this.raw.positions - 1} tokens (the model's ${this.raw.positions} positions, one left to generate)`, ids.length);
    // 20 by default, or what the context has room for.
    const { maxTokens = Math.min(20, room), temperature = 1, topK = 0, topP = 1, seed = 0, stopAtEndOfText = true } = options;
    if (!Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > room) throw argError('generate', 'options.maxTokens', `an integer in [1, ${room}]`, maxTokens);
    if (!(temperature >= 0) || !Number.isFinite(temperature)) throw argError('generate', 'options.temperature', 'a finite number >= 0', temperature);
    if (!Number.isInteger(topK) || topK < 0) throw argError('generate', 'options.topK', 'an integer >= 0', topK);
    if (!(topP > 0 && topP <= 1)) throw argError('generate', 'options.topP', 'a number in (0, 1]', topP);
    if (!Number.isInteger(seed)) throw argError('generate', 'options.seed', 'an integer', seed);
    if (typeof stopAtEndOfText !== 'boolean') throw argError('generate', 'options.stopAtEndOfText', 'a boolean', stopAtEndOfText);
    const rand = mulberry32(seed);
    const eot = this.tokenizer instanceof ByteLevelBpe && this.raw.vocab > 50256 ? 50256 : -1;
    const L = this.raw.layers, H = this.raw.heads;
    this.busy = true;
    try {
      let r = await this.run(ids, undefined, true, false, 'generate');
      for (let step = 0; step < maxTokens; step++) {
        const V = r.cols, last = r.logits.subarray((r.rows - 1) * V, r.rows * V);
        const { id, probability } = sample(last, temperature, topK, topP, rand);
        const ctx = r.ctx, attention = new Float32Array(L * H * ctx);
        for (let lh = 0; lh < L * H; lh++) attention.set(r.attention!.subarray((lh * r.rows + r.rows - 1) * ctx, (lh * r.rows + r.rows) * ctx), lh * ctx);
        yield { id, token: this.tokenizer.token(id), position: ctx, probability, attention: { data: attention, shape: [L, H, ctx] } };
        if ((stopAtEndOfText && id === eot) || step === maxTokens - 1) break;
        if (this.disposed) return;
        r = await this.run([id], undefined, true, true, 'generate');
      }
    } catch (e) {
      // dispose() while a step ran: the generation ends, as it does between steps.
      if (!this.disposed) throw e;
    } finally {
      this.busy = false;
    }
  }

  /** BERT with its MLM head: the most likely tokens at each [MASK]. */
  async fillMask(text: string, options: { topK?: number } = {}): Promise<{ tokens: string[]; masks: MaskPrediction[] }> {
    this.live('fillMask');
    if (!(this.tokenizer instanceof WordPiece) || !this.raw.logits) throw new Error(`fillMask: ${this.raw.architecture} has no masked-LM head (BertForMaskedLM has)`);
    checkOptions('fillMask', 'options', options, ['topK']);
    if (typeof text !== 'string') throw argError('fillMask', 'text', 'a string', text);
    const topK = options.topK ?? 5;
    if (!Number.isInteger(topK) || topK < 1) throw argError('fillMask', 'options.topK', 'an integer >= 1', topK);
    const mask = this.tokenizer.id('[MASK]');
    const { ids, tokens, types } = this.tokenize(text);
    const positions = ids.flatMap((x, i) => (x === mask ? [i] : []));
    if (!positions.length) throw argError('fillMask', 'text', 'a text with [MASK]', text);
    const r = await this.run(ids, types, false, false, 'fillMask');
    const masks = positions.map((position) => {
      const row = r.logits.subarray(position * r.cols, (position + 1) * r.cols);
      const p = softmax(row);
      const order = Array.from(p.keys()).sort((a, b) => p[b] - p[a]).slice(0, topK);
      return { position, candidates: order.map((id) => ({ id, token: this.tokenizer.token(id), probability: p[id] })) };
    });
    return { tokens, masks };
  }

  /** Bytes of WebAssembly memory this model's instance holds (parameters, KV cache, buffers). */
  heapBytes(): number {
    return this.disposed ? 0 : this.engine.heapBytes();
  }

  /** Frees the model's instance (a Worker model: ends its Worker); a generation in progress ends. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.engine.dispose();
  }
  [disposeSymbol](): void {
    this.dispose();
  }
}

/**
 * softmax(x / temperature) in float64, as exp((x - max) / temperature): x / temperature in
 * float32 overflowed for a temperature near 0 (1e-38: every weight NaN, the last id sampled).
 */
function softmax(x: Float32Array, temperature = 1): Float64Array {
  let max = -Infinity;
  for (const v of x) max = Math.max(max, v);
  const p = new Float64Array(x.length);
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += p[i] = Math.exp((x[i] - max) / temperature);
  for (let i = 0; i < x.length; i++) p[i] /= sum;
  return p;
}

function sample(logits: Float32Array, temperature: number, topK: number, topP: number, rand: () => number): { id: number; probability: number } {
  const p = softmax(logits);
  if (temperature === 0) {
    let best = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
    return { id: best, probability: p[best] };
  }
  const scaled = softmax(logits, temperature);
  let order = Array.from(scaled.keys()).sort((a, b) => scaled[b] - scaled[a]);
  if (topK > 0) order = order.slice(0, topK);
  if (topP < 1) {
    let cum = 0, keep = 0;
    while (keep < order.length && cum < topP) cum += scaled[order[keep++]];
    order = order.slice(0, Math.max(1, keep));
  }
  let total = 0;
  for (const i of order) total += scaled[i];
  let u = rand() * total;
  for (const i of order) {
    u -= scaled[i];
    if (u <= 0) return { id: i, probability: p[i] };
  }
  const last = order[order.length - 1];
  return { id: last, probability: p[last] };
}
