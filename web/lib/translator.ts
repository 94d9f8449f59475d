// Translators: models trained by attnlab's own C++ engine (GRU + attention, or Transformer),
// loaded by name ('fra-eng', 'eng-fra': files of the attnlab-models package), a path, a URL, bytes or a
// Blob / File, run in WebAssembly, returning
// the attention behind every output token.
import { disposeSymbol } from './dispose.js';
import { argError, describe } from './errors.js';
import { filled } from './filled.js';
import { isNode, nodeBuiltin } from './loader.js';
import { checkOneOf, checkOptions, isArrayBuffer, isTyped } from './tensor.js';
import { WorkerTranslator } from './translator-remote.js';
import { asTrapError, hasTrapped, trapGuarded } from './trap.js';
import type { Tensor, Variant } from './types.js';
import type { NnModule, TranslationOut, TranslatorInfoOut } from './wasm-module.js';

export type TranslatorArch = 'gru' | 'transformer';
export type TranslatorName = 'fra-eng' | 'eng-fra';
/**
 * What `loadTranslator` reads: a model name, a path or URL (string or `URL`), a model file's
 * bytes, or a Blob / File (from `<input type=file>` or a drop).
 */
export type TranslatorSource = TranslatorName | string | URL | ArrayBuffer | Uint8Array | Blob;

/** The names `loadTranslator` knows; their files are in the `attnlab-models` package. */
export const translatorNames: readonly TranslatorName[] = ['fra-eng', 'eng-fra'];
const ARCHS: readonly TranslatorArch[] = ['gru', 'transformer'];

export interface LoadProgress {
  loaded: number;
  /** 0 when the size is unknown. */
  total: number;
}

export interface LoadTranslatorOptions {
  /** For a model name: which architecture. Default 'transformer'. */
  arch?: TranslatorArch;
  /** Called as the model's bytes arrive. */
  onProgress?: (p: LoadProgress) => void;
  /** Cancels the download and the load: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * true: the model runs in a Worker of its own (a module Worker in browsers, a `worker_threads`
   * Worker in Node) with the instance's build and threads, and `translate()` returns a Promise
   * (`WorkerTranslator`), so beam search never blocks the calling thread. Where no Worker can
   * start (a CSP without worker-src for it) the promise rejects. Default false: a `Translator`
   * whose `translate()` runs on the calling thread.
   */
  worker?: boolean;
}

/** `loadTranslator(source, { worker: true })`'s options. */
export interface LoadWorkerTranslatorOptions extends LoadTranslatorOptions {
  worker: true;
}

export interface TranslateOptions {
  /** Beam width; 1 (default) is greedy decoding. */
  beam?: number;
  /**
   * Most target pieces per sentence before its '</s>': an integer from 1 to the translator's
   * `maxTargetTokens` (the model's limit: 47 for the shipped models); a larger one is an Error.
   * Default twice the sentence's source pieces plus 10, at most 100 and `maxTargetTokens`. A
   * translation stopped by it says so (`cutAtMaxLength`).
   */
  maxLength?: number;
  /** GNMT length-penalty alpha for beam scores; default 0.6. */
  lengthPenalty?: number;
}

/** A `WorkerTranslator`'s `translate()` options. */
export interface WorkerTranslateOptions extends TranslateOptions {
  /**
   * Cancels this translation: the promise rejects with the signal's reason. A queued one is
   * dropped; the one running stops at once (its Worker is ended and a fresh one loads the model
   * again for the calls after it).
   */
  signal?: AbortSignal;
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
  /** Target pieces, ending with '</s>', spelled as in `targetTokens` (no '▁' word marker). */
  tokens: string[];
  /** Length-normalised log-probability. */
  score: number;
  logProb: number;
  /**
   * Decoding stopped this hypothesis at `maxLength` pieces: its '</s>' was forced there while the
   * model's most likely next piece was another, so the text is likely incomplete. False when it
   * ended on its own (a larger `maxLength` gives the same hypothesis).
   */
  cutAtMaxLength: boolean;
}

/** One sentence's translation. */
export interface SentenceTranslation {
  /** The sentence as it was cut from the input. */
  source: string;
  text: string;
  /**
   * Source subword pieces (the model's input), without the '▁' word-start marker the tokenizer
   * uses internally: a piece that was only the marker reads ''.
   */
  sourceTokens: string[];
  /** Target pieces, ending with '</s>'; one attention row each. Same spelling as `sourceTokens`. */
  targetTokens: string[];
  attention: AlignmentAttention | TransformerAttention;
  /** Length-normalised log-probability of the chosen hypothesis. */
  score: number;
  logProb: number;
  /** Every finished hypothesis, best first (one with greedy decoding). */
  beams: BeamResult[];
  /** The sentence had more source pieces than the model takes (`translator.maxSourceTokens`) and was cut to them. */
  truncated: boolean;
  /** The translation (`beams[0]`) was stopped at `maxLength` pieces (see `BeamResult.cutAtMaxLength`). */
  cutAtMaxLength: boolean;
}

/**
 * The translation of a whole input. The input is cut into sentences (at . ! ? … followed by a
 * capital, a digit or an opening quote, and at line breaks), each translated on its own, as the
 * models were trained on single sentences; `sentences` holds each one's result and attention.
 * For one sentence the other fields are that sentence's. For several: `text` joins the sentences'
 * translations with a space; `sourceTokens` and `targetTokens` are concatenated (one '</s>' per
 * sentence); `attention` is block-diagonal (no attention between sentences; computed when first
 * read, and its size grows with the square of the input's length); `score` is the sentences' mean,
 * `logProb` their sum; `beams` holds one hypothesis, the concatenation of each sentence's best.
 * Empty or blank input gives an empty result: '' and no tokens, sentences or beams.
 */
export interface TranslationResult extends Omit<SentenceTranslation, 'source' | 'truncated' | 'cutAtMaxLength'> {
  sentences: SentenceTranslation[];
  /** Some sentence was cut at the model's source limit (see `SentenceTranslation.truncated`). */
  truncated: boolean;
  /** Some sentence's translation was stopped at `maxLength` pieces (see `SentenceTranslation.cutAtMaxLength`). */
  cutAtMaxLength: boolean;
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
const finalizer = new FinalizationRegistry<{ m: NnModule; id: number }>(({ m, id }) => {
  try {
    if (!hasTrapped(m)) m.dispose(id);
  } catch {
    // Nothing to report to: a finalizer has no caller.
  }
});

const failIn = (fn: string) => (message: string) => new Error(`${fn}: ${message}`);
/** After a trap (trap.ts): where a working translator comes from. */
const AGAIN = 'call lib.loadTranslator() for a new translator';

function tensor(data: Float32Array | null, shape: number[]): Tensor {
  return { data: data ?? new Float32Array(0), shape };
}

const MARKER = '\u2581';  // '▁', SentencePiece's word-start marker, as the tokenizer spells it
const unmark = (piece: string): string => (piece.startsWith(MARKER) ? piece.slice(MARKER.length) : piece);

/** The `key=value` lines of a model's config. */
function configValue(config: string, key: string): string | undefined {
  return config.split('\n').find((l) => l.startsWith(`${key}=`))?.slice(key.length + 1);
}

// A sentence ends at . ! ? … (and closing quotes or brackets after them) when whitespace and a
// capital, a digit or an opening quote follow; lines end sentences too. Not after an initial or a
// title ("M. Dupont", "Dr. Watson"), which the same pattern would cut.
const SENTENCE_END = /(?<=[.!?…]+(?:[\s\u00a0]*[»"”’')\]])*)[\s\u00a0]+(?=[\p{Lu}\p{N}«"“‘'¿¡(\[])|[\s\u00a0]*\n[\s\u00a0]*/u;
const NOT_AN_END = /(?:^|[\s(])(?:\p{Lu}|Mr|Mrs|Ms|Dr|St|Mme|Mlle|Mgr|Jr|Sr)\.$/u;

/** The sentences of `text`, trimmed, blank ones dropped. */
export function splitSentences(text: string): string[] {
  const out: string[] = [];
  for (const piece of text.split(SENTENCE_END)) {
    const p = piece.trim();
    if (!p) continue;
    if (out.length && NOT_AN_END.test(out[out.length - 1])) out[out.length - 1] += ` ${p}`;
    else out.push(p);
  }
  return out;
}

/** Lays per-sentence [..., rows, cols] attention blocks on the diagonal of one [..., ΣR, ΣC] tensor. */
function blockDiagonal(blocks: { t: Tensor; rows: number; cols: number }[], lead: number): Tensor {
  const R = blocks.reduce((a, b) => a + b.rows, 0), C = blocks.reduce((a, b) => a + b.cols, 0);
  const data = new Float32Array(lead * R * C);
  let r0 = 0, c0 = 0;
  for (const { t, rows, cols } of blocks) {
    for (let l = 0; l < lead; l++)
      for (let i = 0; i < rows; i++) data.set(t.data.subarray((l * rows + i) * cols, (l * rows + i + 1) * cols), (l * R + r0 + i) * C + c0);
    r0 += rows;
    c0 += cols;
  }
  return { data, shape: lead === 1 ? [R, C] : [...blocks[0].t.shape.slice(0, -2), R, C] };
}

function combinedAttention(parts: SentenceTranslation[]): AlignmentAttention | TransformerAttention {
  const first = parts[0].attention;
  const src = (p: SentenceTranslation) => p.sourceTokens.length, tgt = (p: SentenceTranslation) => p.targetTokens.length;
  if (first.kind === 'alignment') {
    return { kind: 'alignment', layers: 1, heads: 1,
      alignment: blockDiagonal(parts.map((p) => ({ t: (p.attention as AlignmentAttention).alignment, rows: tgt(p), cols: src(p) })), 1) };
  }
  const LH = first.layers * first.heads;
  const of = (k: 'cross' | 'decoderSelf' | 'encoderSelf', rows: (p: SentenceTranslation) => number, cols: (p: SentenceTranslation) => number) =>
    blockDiagonal(parts.map((p) => ({ t: (p.attention as TransformerAttention)[k], rows: rows(p), cols: cols(p) })), LH);
  return { kind: 'transformer', layers: first.layers, heads: first.heads,
    cross: of('cross', tgt, src), decoderSelf: of('decoderSelf', tgt, tgt), encoderSelf: of('encoderSelf', src, src) };
}

/** translate()'s arguments, checked; `maxLength` undefined: the default. */
export interface CheckedTranslate {
  beam: number;
  maxLength: number | undefined;
  lengthPenalty: number;
}

/** Checks translate()'s text and options (`keys`: the options it takes) against `maxTargetTokens`. */
export function checkTranslate(text: unknown, options: unknown, maxTargetTokens: number, keys: readonly string[]): CheckedTranslate {
  const fn = 'translate';
  if (typeof text !== 'string') throw argError(fn, 'text', 'a string', text);
  const o = checkOptions(fn, 'options', options, keys) as TranslateOptions;
  // undefined, not null, takes the default, as maxLength's does.
  const beam = o.beam === undefined ? 1 : o.beam;
  const maxLength = o.maxLength;  // undefined: the default, 2 x source tokens + 10 (0 to the engine)
  const lp = o.lengthPenalty === undefined ? 0.6 : o.lengthPenalty;
  if (typeof beam !== 'number' || !Number.isInteger(beam) || beam < 1 || beam > 64) throw argError(fn, 'options.beam', 'an integer in [1, 64]', beam);
  const most = maxTargetTokens;
  if (maxLength !== undefined && (!Number.isInteger(maxLength) || maxLength < 1 || maxLength > most)) {
    throw argError(fn, 'options.maxLength', `an integer from 1 to ${most}${most < 512 ? " (this model's limit)" : ''}, or undefined for the default`, maxLength);
  }
  if (typeof lp !== 'number' || !Number.isFinite(lp) || lp < 0 || lp > 10) throw argError(fn, 'options.lengthPenalty', 'a number in [0, 10]', lp);
  return { beam, maxLength, lengthPenalty: lp };
}

/** A model's limits (see `Translator.maxSourceTokens`, `maxTargetTokens`), from its config. */
export function translatorLimits(info: TranslatorInfo): { maxSourceTokens: number; maxTargetTokens: number } {
  const maxSourceTokens = Number(configValue(info.config, 'max_len') ?? 0) || 0;
  // As the engine caps it (Translator::translate); 512 is beam_search's own bound.
  return { maxSourceTokens, maxTargetTokens: maxSourceTokens > 0 ? Math.min(512, maxSourceTokens - 1) : 512 };
}

function emptyAttention(info: TranslatorInfo): AlignmentAttention | TransformerAttention {
  if (info.arch !== 'transformer') return { kind: 'alignment', layers: 1, heads: 1, alignment: tensor(null, [0, 0]) };
  const L = Number(configValue(info.config, 'layers') ?? 0), H = Number(configValue(info.config, 'heads') ?? 0);
  return { kind: 'transformer', layers: L, heads: H, cross: tensor(null, [L, H, 0, 0]), decoderSelf: tensor(null, [L, H, 0, 0]), encoderSelf: tensor(null, [L, H, 0, 0]) };
}

/** A whole input's result from its sentences' (see `TranslationResult`). */
export function assembleTranslation(sentences: SentenceTranslation[], info: TranslatorInfo): TranslationResult {
  if (sentences.length === 1) {
    const { source: _, ...one } = sentences[0];
    return { ...one, sentences };
  }
  const out = {
    text: sentences.map((p) => p.text).filter(Boolean).join(' '),
    sourceTokens: sentences.flatMap((p) => p.sourceTokens),
    targetTokens: sentences.flatMap((p) => p.targetTokens),
    score: sentences.length ? sentences.reduce((a, p) => a + p.score, 0) / sentences.length : 0,
    logProb: sentences.reduce((a, p) => a + p.logProb, 0),
    beams: [] as BeamResult[],
    sentences,
    truncated: sentences.some((p) => p.truncated),
    cutAtMaxLength: sentences.some((p) => p.cutAtMaxLength),
  } as Omit<TranslationResult, 'attention'> as TranslationResult;
  if (sentences.length) {
    out.beams.push({ text: out.text, tokens: out.targetTokens, score: out.score, logProb: out.logProb, cutAtMaxLength: out.cutAtMaxLength });
    // Block-diagonal matrices grow with the square of the input: built only when read.
    Object.defineProperty(out, 'attention', {
      enumerable: true, configurable: true,
      get(): AlignmentAttention | TransformerAttention {
        const value = combinedAttention(sentences);
        Object.defineProperty(out, 'attention', { value, enumerable: true, writable: true, configurable: true });
        return value;
      },
    });
  } else {
    out.attention = emptyAttention(info);
  }
  return out;
}

/** translate() on a disposed translator, in-thread or in a Worker. */
export const TRANSLATOR_DISPOSED = 'translate: this translator has been disposed; call lib.loadTranslator() for a new one';

const TRANSLATE_OPTIONS = ['beam', 'maxLength', 'lengthPenalty'] as const;

export class Translator {
  readonly arch: string;
  readonly srcLang: string;
  readonly tgtLang: string;
  readonly parameters: number;
  /** Most source pieces per sentence the model reads (48 for the shipped models); longer sentences are cut and flagged `truncated`. */
  readonly maxSourceTokens: number;
  /**
   * Most target pieces per sentence before its '</s>' (47 for the shipped models: the decoder reads
   * '<s>' and the pieces so far at `maxSourceTokens` positions); `maxLength` goes up to it.
   */
  readonly maxTargetTokens: number;
  readonly info: TranslatorInfo;
  #m: NnModule | null;
  #id: number;

  /** @internal Use `lib.loadTranslator()`. */
  constructor(m: NnModule, id: number, info: TranslatorInfo) {
    this.#m = m;
    this.#id = id;
    this.info = info;
    this.arch = info.arch;
    this.srcLang = info.srcLang;
    this.tgtLang = info.tgtLang;
    this.parameters = info.parameters;
    ({ maxSourceTokens: this.maxSourceTokens, maxTargetTokens: this.maxTargetTokens } = translatorLimits(info));
    finalizer.register(this, { m, id }, this);
  }

  /**
   * Translates `text` sentence by sentence (see `TranslationResult`). The models were trained on
   * short everyday sentences (Tatoeba) of at most `maxSourceTokens` pieces.
   */
  translate(text: string, options?: TranslateOptions): TranslationResult {
    if (!this.#m) throw new Error(TRANSLATOR_DISPOSED);
    const { beam, maxLength, lengthPenalty } = checkTranslate(text, options, this.maxTargetTokens, TRANSLATE_OPTIONS);
    const m = this.#m;
    return trapGuarded(m, 'translate', AGAIN, () =>
      assembleTranslation(splitSentences(text).map((sentence) => this.#sentence(m, sentence, beam, maxLength ?? 0, lengthPenalty)), this.info));
  }

  #sentence(m: NnModule, source: string, beam: number, maxLength: number, lp: number): SentenceTranslation {
    // Lone surrogates as U+FFFD first: Emscripten's UTF-8 conversion took the next character
    // with one ("Je \udc00suis." lost its "s").
    const wellFormed = source.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
    const r = filled<TranslationOut>((out) => m.translatorTranslate(this.#id, wellFormed, beam, maxLength, lp, out), failIn('translate'));
    let at = 0, k = 0;
    const next = (): string => r.strings.slice(at, at += r.units[k++]);
    const take = (n: number): string[] => Array.from({ length: n }, next);
    const text = next(), sourceTokens = take(r.counts[0]), targetTokens = take(r.counts[1]);
    const beams = Array.from({ length: r.counts[2] }, (_, i) => ({ text: next(), tokens: take(r.counts[3 + i]) }));
    const S = sourceTokens.length, T = targetTokens.length, L = r.layers, H = r.heads;
    const attention: AlignmentAttention | TransformerAttention = r.kind === 'alignment'
      ? { kind: 'alignment', layers: 1, heads: 1, alignment: tensor(r.cross, [T, S]) }
      : {
        kind: 'transformer', layers: L, heads: H,
        cross: tensor(r.cross, [L, H, T, S]),
        decoderSelf: tensor(r.decoderSelf, [L, H, T, T]),
        encoderSelf: tensor(r.encoderSelf, [L, H, S, S]),
      };
    const n = beams.length, scores = Array.from(r.scores);
    return {
      source, text, sourceTokens, targetTokens, attention, score: scores[0] ?? 0, logProb: scores[n] ?? 0,
      beams: beams.map((b, i) => ({ text: b.text, tokens: b.tokens.map(unmark), score: scores[i], logProb: scores[n + i], cutAtMaxLength: r.cut[i] === 1 })),
      truncated: r.sourcePieces > S,
      cutAtMaxLength: r.cut[0] === 1,
    };
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
    if (!hasTrapped(m)) m.dispose(this.#id);
  }

  /** `using`: dispose() at the end of the block. */
  [disposeSymbol](): void {
    this.dispose();
  }
}

type Fs = { promises: { readFile: (p: string, o?: { signal?: AbortSignal }) => Promise<Uint8Array> } };
type NodePath = { resolve: (...p: string[]) => string; join: (...p: string[]) => string };
type NodeUrl = { fileURLToPath: (u: URL) => string; pathToFileURL: (p: string) => URL };
type NodeModule = { createRequire: (from: string) => { resolve: (id: string) => string } };

const cwd = (): string => (globalThis as unknown as { process: { cwd: () => string } }).process.cwd();

/** Why a file could not be read: its error code (ENOENT, EISDIR, EACCES, ...). */
function fsReason(e: unknown): string {
  return (e as { code?: string }).code ?? reason(e);
}

/**
 * The first line of an error's message, and its cause: fetch() puts the reason ("ECONNREFUSED")
 * in the cause; require.resolve appends a "Require stack" below the first line.
 */
function reason(e: unknown): string {
  const msg = (e instanceof Error ? e.message : String(e)).split('\n')[0];
  const cause = e instanceof Error ? (e as { cause?: unknown }).cause : undefined;
  const c = cause instanceof Error ? ((cause as { code?: string }).code ?? cause.message) : cause !== undefined ? String(cause) : '';
  return c && !msg.includes(c) ? `${msg} (${c})` : msg;
}

/** Throws the signal's reason (as fetch() does) once it has aborted. */
function checkAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

async function readBytes(url: URL, what: string, onProgress?: (p: LoadProgress) => void, signal?: AbortSignal): Promise<Uint8Array> {
  const fn = 'loadTranslator';
  if (url.protocol === 'file:' && isNode) {
    const path = nodeBuiltin<NodeUrl>('node:url').fileURLToPath(url);
    let bytes: Uint8Array;
    try {
      bytes = await nodeBuiltin<Fs>('node:fs').promises.readFile(path, { signal });
    } catch (e) {
      checkAborted(signal);
      throw new Error(`${fn}: could not read ${path}${what}: ${fsReason(e)}`);
    }
    onProgress?.({ loaded: bytes.byteLength, total: bytes.byteLength });
    return bytes;
  }
  let res: Response;
  try {
    res = await fetch(url, { signal });
  } catch (e) {
    checkAborted(signal);
    throw new Error(`${fn}: fetching ${url.href}${what} failed: ${reason(e)}`);
  }
  if (!res.ok) throw new Error(`${fn}: fetching ${url.href}${what} failed: HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`);
  // content-length counts encoded bytes: it bounds the download only when nothing is compressed.
  const total = res.headers.get('content-encoding') ? 0 : Number(res.headers.get('content-length') ?? 0) || 0;
  const chunks: Uint8Array[] = [];
  let loaded = 0;
  try {
    if (!res.body) {
      chunks.push(new Uint8Array(await res.arrayBuffer()));
      loaded = chunks[0].byteLength;
      onProgress?.({ loaded, total: loaded });
    } else {
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        loaded += value.byteLength;
        onProgress?.({ loaded, total });
      }
    }
  } catch (e) {
    checkAborted(signal);
    throw new Error(`${fn}: the download of ${url.href}${what} broke off after ${loaded}${total ? ` of ${total}` : ''} bytes: ${reason(e)}`);
  }
  if (total && loaded !== total) throw new Error(`${fn}: the download of ${url.href}${what} was cut short: ${loaded} of ${total} bytes`);
  const out = new Uint8Array(loaded);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.byteLength;
  }
  return out;
}

/**
 * A Blob or File (an <input type=file> pick, a drop) read in chunks: progress as they come and
 * the signal cancels the read, as for a download. Straight into one buffer of the Blob's size.
 */
async function readBlob(blob: Blob, onProgress?: (p: LoadProgress) => void, signal?: AbortSignal): Promise<Uint8Array> {
  const fn = 'loadTranslator';
  const name = (blob as Partial<File>).name;
  const what = typeof name === 'string' ? `the file ${describe(name)}` : 'the Blob';
  const total = blob.size, out = new Uint8Array(total);
  const reader = blob.stream().getReader();
  // Ends a pending read (done) at once; the loop then throws the signal's reason.
  const stop = () => void reader.cancel(signal?.reason).catch(() => undefined);
  signal?.addEventListener('abort', stop, { once: true });
  let loaded = 0;
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (e) {
        checkAborted(signal);
        // A File whose disk file changed or went since it was picked (NotReadableError).
        throw new Error(`${fn}: could not read ${what} after ${loaded} of ${total} bytes: ${reason(e)}`);
      }
      checkAborted(signal);
      if (chunk.done) break;
      if (loaded + chunk.value.byteLength > total) throw new Error(`${fn}: ${what} grew while it was read: more than ${total} bytes`);
      out.set(chunk.value, loaded);
      loaded += chunk.value.byteLength;
      onProgress?.({ loaded, total });
    }
  } finally {
    signal?.removeEventListener('abort', stop);
  }
  if (loaded !== total) throw new Error(`${fn}: reading ${what} was cut short: ${loaded} of ${total} bytes`);
  return out;
}

/** What `attnlab-models` exports: each model's file as a URL next to its module. */
type ModelsModule = { models: Record<TranslatorName, Record<TranslatorArch, URL | string>> };
const MODELS_PACKAGE = 'attnlab-models';

/**
 * Where a CDN keeps the models package: beside attnlab's own folder, at the same version
 * (jsDelivr `…/npm/attnlab@0.1.0/` -> `…/npm/attnlab-models@0.1.0/`, unpkg `…/attnlab@0.1.0/`
 * likewise; node_modules `…/attnlab/` -> `…/attnlab-models/`). So an HTML-only page that loads
 * attnlab from a CDN finds the models by name, with no import map. This module is in dist/.
 */
function siblingModelsUrl(): string | null {
  const root = new URL('../', import.meta.url);
  const m = /\/attnlab(@[^/]+)?\/$/.exec(root.pathname);
  return m ? new URL(`../${MODELS_PACKAGE}${m[1] ?? ''}/index.js`, root).href : null;
}

/**
 * The models package, imported at run time by name (the specifier is a variable, so bundlers do
 * not try to resolve it: the core works without the models). Node resolves it from attnlab's own
 * folder, then from the working directory's project; a browser with an import map, or from the
 * folder beside attnlab's (a CDN's layout). Bundled apps import `attnlab-models` themselves and
 * pass the URL (see the README).
 */
async function importModels(): Promise<{ mod?: ModelsModule; tried: string[] }> {
  const spec = MODELS_PACKAGE;
  const tried: string[] = [];
  try {
    return { mod: await import(/* @vite-ignore */ /* webpackIgnore: true */ spec) as ModelsModule, tried };
  } catch (e) {
    tried.push(`import('${spec}'): ${reason(e)}`);
  }
  if (isNode) {
    try {
      const from = nodeBuiltin<NodePath>('node:path').join(cwd(), 'package.json');
      const file = nodeBuiltin<NodeModule>('node:module').createRequire(from).resolve(spec);
      return { mod: await import(/* @vite-ignore */ /* webpackIgnore: true */ nodeBuiltin<NodeUrl>('node:url').pathToFileURL(file).href) as ModelsModule, tried };
    } catch (e) {
      tried.push(`resolving it from ${cwd()}: ${reason(e)}`);
    }
  }
  const sibling = siblingModelsUrl();
  if (sibling) {
    try {
      return { mod: await import(/* @vite-ignore */ /* webpackIgnore: true */ sibling) as ModelsModule, tried };
    } catch (e) {
      tried.push(`import('${sibling}'): ${reason(e)}`);
    }
  }
  return { tried };
}

async function namedModel(name: TranslatorName, arch: TranslatorArch): Promise<URL> {
  const { mod, tried } = await importModels();
  const url = mod?.models?.[name]?.[arch];
  if (url === undefined) {
    throw new Error(`loadTranslator: model '${name}' (${arch}) is in the package ${MODELS_PACKAGE}, not found ` +
      `(${mod ? 'no such model' : tried.join('; ')}): npm install ${MODELS_PACKAGE}, or pass the file's URL, models['${name}'].${arch} from it`);
  }
  return url instanceof URL ? url : new URL(url);
}

// A scheme of two letters or more (so 'C:\\models\\x.atl' stays a path).
const HAS_SCHEME = /^[a-z][a-z0-9+.-]+:/i;

/**
 * Where a string source points: a model name ('fra-eng'), or a path / URL. A string with no '/',
 * '\\', '.' or ':' is a name, so 'deu-eng' or 'models' never reads a file by accident.
 */
async function resolveSource(source: string, arch: TranslatorArch): Promise<{ url: URL; what: string }> {
  const fn = 'loadTranslator';
  if ((translatorNames as readonly string[]).includes(source)) return { url: await namedModel(source as TranslatorName, arch), what: ` (model '${source}', ${arch})` };
  if (!/[/\\.:]/.test(source)) {
    throw new Error(`${fn}: source: unknown model name ${describe(source)}; the names are ${translatorNames.map((n) => `'${n}'`).join(', ')}; a file needs a path or URL ('./${source}.atl')`);
  }
  const what = ` (from ${describe(source)})`;
  if (HAS_SCHEME.test(source)) {
    try {
      return { url: new URL(source), what };
    } catch {
      throw argError(fn, 'source', 'a model name, a path or a valid URL', source);
    }
  }
  // A path: in Node against the working directory, in a browser against the page.
  if (isNode) return { url: nodeBuiltin<NodeUrl>('node:url').pathToFileURL(nodeBuiltin<NodePath>('node:path').resolve(cwd(), source)), what };
  const base = (globalThis as { document?: { baseURI?: string }; location?: { href: string } });
  return { url: new URL(source, base.document?.baseURI ?? base.location?.href), what };
}

const LOAD_OPTIONS = ['arch', 'onProgress', 'signal', 'worker'] as const;

/**
 * A translator of the model file `bytes` in `m`. `name`: how the engine's errors name the file
 * (` "x.atl"`, ` of 'fra-eng' (gru)`, or '' for bare bytes).
 */
export function translatorFromBytes(m: NnModule, bytes: Uint8Array, name: string): Translator {
  const fn = 'loadTranslator';
  let p = 0;
  try {
    p = m._malloc(Math.max(bytes.byteLength, 4));
    if (p === 0) throw new Error(`${fn}: out of memory: could not allocate ${bytes.byteLength} bytes`);
    new Uint8Array(m.memoryBuffer(), p, bytes.byteLength).set(bytes);
    // The engine's messages begin 'model file: '; others (out of memory) get the prefix when named.
    const fail = (message: string) => new Error(name ? `${fn}: model file${name}: ${message.replace(/^model file: /, '')}` : `${fn}: ${message}`);
    const { id, ...info } = filled<TranslatorInfoOut>((out) => m.translatorCreate(p, bytes.byteLength, out), fail);
    const get = (key: string) => configValue(info.config, key) ?? '';
    return new Translator(m, id, { arch: get('arch'), srcLang: get('src_lang'), tgtLang: get('tgt_lang'), ...info });
  } catch (e) {
    throw asTrapError(m, fn, AGAIN, e);
  } finally {
    if (!hasTrapped(m)) m._free(p);
  }
}

/**
 * `nn`: the instance's nn module, instantiated on first use (after the arguments are checked);
 * `build`: the instance's, which a Worker translator loads too.
 */
export async function loadTranslator(nn: () => Promise<NnModule>, source: TranslatorSource, options: LoadTranslatorOptions | undefined,
  build: { variant: Variant; threads: number }): Promise<Translator | WorkerTranslator> {
  const fn = 'loadTranslator';
  const o = checkOptions(fn, 'options', options, LOAD_OPTIONS) as LoadTranslatorOptions;
  const arch = checkOneOf(fn, 'options.arch', o.arch, ARCHS, 'transformer');
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function') throw argError(fn, 'options.onProgress', 'a function', o.onProgress);
  const { signal } = o;
  if (signal !== undefined && !(typeof AbortSignal !== 'undefined' && signal instanceof AbortSignal)) throw argError(fn, 'options.signal', 'an AbortSignal', signal);
  const worker = o.worker === undefined ? false : o.worker;
  if (typeof worker !== 'boolean') throw argError(fn, 'options.worker', 'a boolean', worker);
  checkAborted(signal);
  let bytes: Uint8Array;
  // How the model file is named in the engine's errors, so a user loading several models sees
  // which one is bad: the path or URL as given, a File's name; bare bytes have no name.
  let name = '';
  let url: URL | null = null;
  try {
    if (isArrayBuffer(source)) bytes = new Uint8Array(source);
    else if (isTyped(source, 'uint8')) bytes = source;
    else if (source instanceof URL) {
      url = source;
      name = ` ${JSON.stringify(source.href)}`;
      bytes = await readBytes(source, '', o.onProgress, signal);
    } else if (typeof Blob !== 'undefined' && source instanceof Blob) {
      const fileName = (source as Partial<File>).name;
      if (typeof fileName === 'string') name = ` ${JSON.stringify(fileName)}`;
      bytes = await readBlob(source, o.onProgress, signal);
    } else if (typeof source === 'string') {
      const resolved = await resolveSource(source, arch);
      url = resolved.url;
      name = (translatorNames as readonly string[]).includes(source) ? ` of '${source}' (${arch})` : ` ${JSON.stringify(source)}`;
      checkAborted(signal);
      bytes = await readBytes(url, resolved.what, o.onProgress, signal);
    } else {
      throw argError(fn, 'source', `a model name (${translatorNames.map((n) => `'${n}'`).join(', ')}), a path, a URL, an ArrayBuffer, a Uint8Array or a Blob`, source);
    }
    if (worker) {
      // The caller's own bytes are copied: the translator keeps them to load a fresh Worker after an abort.
      const own = isArrayBuffer(source) || isTyped(source, 'uint8') ? bytes.slice() : bytes;
      return await WorkerTranslator.open(own, name, build, signal);
    }
    const m = await nn();
    checkAborted(signal);  // aborted while the module started
    return translatorFromBytes(m, bytes, name);
  } catch (e) {
    // Vite's dev server pre-bundles attnlab-models into node_modules/.vite/deps/, where its
    // models' relative URLs point at nothing (the server answers with its page): say the setting.
    if (url?.pathname.includes('/.vite/deps/') && e instanceof Error && e !== signal?.reason && e.message.startsWith(`${fn}:`)) {
      throw new Error(`${e.message}: ${VITE_MODELS_HINT}`);
    }
    throw e;
  }
}

const VITE_MODELS_HINT = "Vite's dev server pre-bundled attnlab-models into .vite/deps/, away from its model files; " +
  "add it to optimizeDeps.exclude in vite.config (optimizeDeps: { exclude: ['attnlab', 'attnlab-models'] })";
