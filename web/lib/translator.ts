// Translators: models trained by attnlab's own C++ engine (GRU + attention, or Transformer),
// loaded from the package ('fra-eng', 'eng-fra'), a URL or bytes, run in WebAssembly, returning
// the attention behind every output token.
import { disposeSymbol } from './dispose.js';
import { argError } from './errors.js';
import { isNode } from './loader.js';
import type { Tensor } from './types.js';
import type { WasmModule } from './wasm-module.js';

export type TranslatorArch = 'gru' | 'transformer';
export type TranslatorName = 'fra-eng' | 'eng-fra';

export interface LoadProgress {
  loaded: number;
  /** 0 when the size is unknown. */
  total: number;
}

export interface LoadTranslatorOptions {
  /** For a shipped model name: which architecture. Default 'transformer'. */
  arch?: TranslatorArch;
  /** Called as the model's bytes arrive. */
  onProgress?: (p: LoadProgress) => void;
}

export interface TranslateOptions {
  /** Beam width; 1 (default) is greedy decoding. */
  beam?: number;
  /** Most target tokens before end of sentence: an integer in [1, 512]; default 2 x source tokens + 10. */
  maxLength?: number;
  /** GNMT length-penalty alpha for beam scores; default 0.6. */
  lengthPenalty?: number;
}

/** GRU models: one alignment [targetTokens, sourceTokens] (each row sums to 1). */
export interface AlignmentAttention {
  kind: 'alignment';
  layers: 1;
  heads: 1;
  alignment: Tensor;
}

/** Transformer models: every layer and head. */
export interface TransformerAttention {
  kind: 'transformer';
  layers: number;
  heads: number;
  /** Decoder cross-attention [layers, heads, targetTokens, sourceTokens]. */
  cross: Tensor;
  /** Decoder (causal) self-attention [layers, heads, targetTokens, targetTokens]. */
  decoderSelf: Tensor;
  /** Encoder self-attention [layers, heads, sourceTokens, sourceTokens]. */
  encoderSelf: Tensor;
}

export interface BeamResult {
  text: string;
  tokens: string[];
  /** Length-normalised log-probability. */
  score: number;
  logProb: number;
}

export interface TranslationResult {
  text: string;
  /** Source subword pieces (the model's input). */
  sourceTokens: string[];
  /** Target pieces, ending with '</s>'; one attention row each. */
  targetTokens: string[];
  attention: AlignmentAttention | TransformerAttention;
  score: number;
  logProb: number;
  /** Every finished hypothesis, best first (beam > 1 only). */
  beams?: BeamResult[];
}

export interface TranslatorInfo {
  arch: string;
  srcLang: string;
  tgtLang: string;
  parameters: number;
  srcVocab: number;
  tgtVocab: number;
  config: string;
}

// Last resort for a translator dropped without dispose(): free its model's WebAssembly memory when
// the translator is collected. The held value names the module and the model, never the translator.
const finalizer = new FinalizationRegistry<{ m: WasmModule; id: number }>(({ m, id }) => {
  try {
    m.translatorDispose(id);
  } catch {
    // Nothing to report to: a finalizer has no caller.
  }
});

// Literal URLs so bundlers ship the model files.
const shipped: Record<string, () => URL> = {
  'fra-eng-gru': () => new URL('./models/fra-eng-gru.atl', import.meta.url),
  'eng-fra-gru': () => new URL('./models/eng-fra-gru.atl', import.meta.url),
  'fra-eng-transformer': () => new URL('./models/fra-eng-transformer.atl', import.meta.url),
  'eng-fra-transformer': () => new URL('./models/eng-fra-transformer.atl', import.meta.url),
};

function parse<T>(fn: string, json: string): T {
  const r = JSON.parse(json) as { error?: string };
  if (r.error) throw new Error(`${fn}: ${r.error}`);
  return r as T;
}

function tensor(data: number[] | null, shape: number[]): Tensor {
  return { data: Float32Array.from(data ?? [], (x) => x ?? 0), shape };
}

export class Translator {
  readonly arch: string;
  readonly srcLang: string;
  readonly tgtLang: string;
  readonly parameters: number;
  readonly info: TranslatorInfo;
  #m: WasmModule | null;
  #id: number;

  /** @internal Use `lib.loadTranslator()`. */
  constructor(m: WasmModule, id: number, info: TranslatorInfo) {
    this.#m = m;
    this.#id = id;
    this.info = info;
    this.arch = info.arch;
    this.srcLang = info.srcLang;
    this.tgtLang = info.tgtLang;
    this.parameters = info.parameters;
    finalizer.register(this, { m, id }, this);
  }

  translate(text: string, options: TranslateOptions = {}): TranslationResult {
    const fn = 'translate';
    if (!this.#m) throw new Error(`${fn}: this translator has been disposed; call lib.loadTranslator() for a new one`);
    if (typeof text !== 'string') throw new Error(`${fn}: text: expected a string, got ${typeof text}`);
    const beam = options.beam ?? 1;
    const maxLength = options.maxLength;  // undefined: the default, 2 x source tokens + 10 (0 to the engine)
    const lp = options.lengthPenalty ?? 0.6;
    if (!Number.isInteger(beam) || beam < 1 || beam > 64) throw new Error(`${fn}: options.beam: expected an integer in [1, 64], got ${beam}`);
    if (maxLength !== undefined && (!Number.isInteger(maxLength) || maxLength < 1 || maxLength > 512)) {
      throw argError(fn, 'options.maxLength', 'an integer in [1, 512] (or undefined for the default)', maxLength);
    }
    if (typeof lp !== 'number' || !Number.isFinite(lp) || lp < 0 || lp > 10) throw new Error(`${fn}: options.lengthPenalty: expected a number in [0, 10], got ${lp}`);
    const r = parse<{
      text: string; sourceTokens: string[]; targetTokens: string[]; score: number; logProb: number;
      attention: { kind: string; layers: number; heads: number; alignment?: number[]; cross?: number[]; decoderSelf?: number[]; encoderSelf?: number[] };
      beams: BeamResult[];
    }>(fn, this.#m.translatorTranslate(this.#id, text, beam, maxLength ?? 0, lp));
    const S = r.sourceTokens.length, T = r.targetTokens.length, a = r.attention;
    const attention: AlignmentAttention | TransformerAttention = a.kind === 'alignment'
      ? { kind: 'alignment', layers: 1, heads: 1, alignment: tensor(a.alignment ?? [], [T, S]) }
      : {
        kind: 'transformer', layers: a.layers, heads: a.heads,
        cross: tensor(a.cross ?? [], [a.layers, a.heads, T, S]),
        decoderSelf: tensor(a.decoderSelf ?? [], [a.layers, a.heads, T, T]),
        encoderSelf: tensor(a.encoderSelf ?? [], [a.layers, a.heads, S, S]),
      };
    const out: TranslationResult = {
      text: r.text, sourceTokens: r.sourceTokens, targetTokens: r.targetTokens, attention, score: r.score, logProb: r.logProb,
    };
    if (beam > 1) out.beams = r.beams;
    return out;
  }

  get disposed(): boolean {
    return this.#m === null;
  }

  /** Frees the model's WebAssembly memory. Safe to call twice; translate() afterwards throws. */
  dispose(): void {
    const m = this.#m;
    if (!m) return;
    this.#m = null;
    finalizer.unregister(this);
    m.translatorDispose(this.#id);
  }

  /** `using`: dispose() at the end of the block. */
  [disposeSymbol](): void {
    this.dispose();
  }
}

async function fetchBytes(url: URL, onProgress?: (p: LoadProgress) => void): Promise<Uint8Array> {
  if (url.protocol === 'file:' && isNode) {
    const get = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule;
    if (!get) throw new Error('loadTranslator: needs Node >= 20.16');
    const { readFile } = (get('node:fs') as { promises: { readFile: (p: string) => Promise<Uint8Array> } }).promises;
    const { fileURLToPath } = get('node:url') as { fileURLToPath: (u: URL) => string };
    const bytes = await readFile(fileURLToPath(url));
    onProgress?.({ loaded: bytes.byteLength, total: bytes.byteLength });
    return bytes;
  }
  const res = await fetch(url);
  if (!res.ok) throw new Error(`loadTranslator: fetching ${url.href} failed: HTTP ${res.status}`);
  const total = Number(res.headers.get('content-length') ?? 0) || 0;
  if (!res.body) {
    const b = new Uint8Array(await res.arrayBuffer());
    onProgress?.({ loaded: b.byteLength, total: b.byteLength });
    return b;
  }
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.byteLength;
    onProgress?.({ loaded, total });
  }
  const out = new Uint8Array(loaded);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.byteLength;
  }
  return out;
}

export async function loadTranslator(m: WasmModule, source: TranslatorName | string | URL | ArrayBuffer | Uint8Array,
  options: LoadTranslatorOptions = {}): Promise<Translator> {
  const fn = 'loadTranslator';
  if (typeof options !== 'object' || options === null) throw new Error(`${fn}: options: expected an object`);
  const arch = options.arch ?? 'transformer';
  if (arch !== 'gru' && arch !== 'transformer') throw new Error(`${fn}: options.arch: expected 'gru' or 'transformer', got ${String(arch)}`);
  let bytes: Uint8Array;
  if (source instanceof ArrayBuffer) bytes = new Uint8Array(source);
  else if (source instanceof Uint8Array) bytes = source;
  else if (source instanceof URL) bytes = await fetchBytes(source, options.onProgress);
  else if (typeof source === 'string') {
    const named = shipped[`${source}-${arch}`];
    if (named) bytes = await fetchBytes(named(), options.onProgress);
    else if (source === 'fra-eng' || source === 'eng-fra') throw new Error(`${fn}: no shipped ${arch} model for ${source}`);
    else bytes = await fetchBytes(new URL(source, (globalThis as { location?: { href: string } }).location?.href ?? import.meta.url), options.onProgress);
  } else {
    throw new Error(`${fn}: source: expected 'fra-eng', 'eng-fra', a URL or an ArrayBuffer`);
  }
  const p = m._malloc(Math.max(bytes.byteLength, 4));
  if (p === 0) throw new Error(`${fn}: out of memory: could not allocate ${bytes.byteLength} bytes`);
  try {
    new Uint8Array(m.memoryBuffer(), p, bytes.byteLength).set(bytes);
    const info = parse<TranslatorInfo & { id: number }>(fn, m.translatorCreate(p, bytes.byteLength));
    const { id, ...rest } = info;
    return new Translator(m, id, rest);
  } finally {
    m._free(p);
  }
}
