// One attnlab instance shared by every widget on a page that did not hand them its own, and the
// translators widgets load from their attributes (model="fra-eng" arch="gru", or src="…atl").
import type { Attnlab, Translator, TranslationResult } from 'attnlab';
import { badAttr, coalesced } from './base.js';

let shared: Promise<Attnlab> | null = null;

/** The page-wide attnlab instance, loaded on first use (the fastest build the page can run). */
export function sharedLib(): Promise<Attnlab> {
  // Imported on first use: a page with widgets draws them before the library has downloaded.
  shared ??= import('attnlab').then(({ load }) => load());
  return shared;
}

/** Lets a page hand the widgets the instance it already loaded. */
export function setSharedLib(lib: Attnlab): void {
  shared = Promise.resolve(lib);
}

const translators = new Map<string, Promise<Translator>>();

/**
 * An attribute that names what cannot be used, found only once the library or the model is in
 * (a model name that is none, a GRU's file given to a view of heads): the widget names it under
 * itself, as it does every attribute it cannot use, not as a model that failed to load.
 */
export class AttributeFault extends Error {
  constructor(readonly attribute: string, message: string) {
    super(message);
  }
}

/**
 * The translator a widget's attributes name: `src` (a model file's URL, relative to the page) or
 * else `model` (a shipped name such as 'fra-eng', found by `loadTranslator`) with `arch` (one of
 * `arches`; default 'transformer'). Null when neither is set. Loaded once per page and source.
 * An `arch` that is none of them is noted in `problems` and the default used; a `model` that names
 * no shipped model rejects with an AttributeFault.
 */
export function attributeTranslator(el: Element, arches: readonly ('gru' | 'transformer')[], problems: Map<string, string>): Promise<Translator> | null {
  problems.delete('arch');
  problems.delete('model');
  const src = el.getAttribute('src');
  const model = el.getAttribute('model');
  if (!src && !model) return null;
  let arch = el.getAttribute('arch') ?? 'transformer';
  // Only where it is used: with src the file says what the model is.
  if (!src && !(arches as readonly string[]).includes(arch)) {
    const expected = arches.length > 1 ? arches.map((a) => `'${a}'`).join(' or ') : "'transformer' (this view shows a Transformer's heads; a GRU has none)";
    problems.set('arch', `${badAttr('arch', expected, arch)}; using 'transformer'`);
    arch = 'transformer';
  }
  const url = src ? new URL(src, document.baseURI) : null;
  const key = url ? `src ${url.href}` : `model ${model} ${arch}`;
  let t = translators.get(key);
  if (!t) {
    t = sharedLib().then(async (lib) => {
      if (url) return lib.loadTranslator(url);
      // A name that is none ('fra-en') is the attribute's fault, not the model's: loadTranslator took it for a failed load.
      const { translatorNames } = await import('attnlab');
      if (!(translatorNames as readonly string[]).includes(model!)) {
        throw new AttributeFault('model', `${badAttr('model', `${translatorNames.map((n) => `'${n}'`).join(' or ')} (a model file goes in src)`, model!)}; no model loaded`);
      }
      return lib.loadTranslator(model!, { arch: arch as 'gru' | 'transformer' });
    });
    // A failed load (a typo in an attribute, the network) may be retried by a corrected attribute.
    t.catch(() => translators.delete(key));
    translators.set(key, t);
  }
  return t;
}

/** Self- or cross-attention of one Transformer translation, per layer, with its two token lists. */
export interface SentenceAttention {
  /** [layers][heads][queries][keys] */
  layers: number[][][][];
  queries: string[];
  keys: string[];
  /** The queries' and keys' language (the translator's srcLang or tgtLang), where it says. */
  queryLang?: string;
  keyLang?: string;
}

/**
 * For <attn-head-view> and <attn-model-view> given `model`/`src` and `text`: translates `text`
 * and returns the attention the `part` attribute names: 'encoder' (default: the sentence
 * attending to itself), 'decoder' (the translation, causal: each piece's step to the pieces it
 * read, decoderInputs()) or 'cross' (translation to sentence).
 * Null when the element names no model or no text. What is wrong with an attribute is noted in
 * `problems` (the widget uses a default instead) or rejects as an AttributeFault (nothing to show).
 */
export async function attributeAttention(el: Element, problems: Map<string, string>): Promise<SentenceAttention | null> {
  for (const name of ATTENTION_ATTRIBUTES) problems.delete(name);
  const text = el.getAttribute('text');
  if (text === null || !namesAttention(el)) return null;
  // An empty sentence drew an empty plot and said nothing.
  if (!text.trim()) throw new AttributeFault('text', `${badAttr('text', 'a sentence', text)}; nothing translated`);
  let part = el.getAttribute('part') ?? 'encoder';
  if (part !== 'encoder' && part !== 'decoder' && part !== 'cross') {
    problems.set('part', `${badAttr('part', "'encoder', 'decoder' or 'cross'", part)}; using 'encoder'`);
    part = 'encoder';
  }
  const translator = attributeTranslator(el, ['transformer'], problems)!;
  const tr = await translator;
  const r: TranslationResult = tr.translate(text);
  const a = r.attention;
  // Only a file can be a GRU here: a model name's arch is checked above.
  if (a.kind !== 'transformer') throw new AttributeFault('src', "src: expected a Transformer's model file (this view shows heads; a GRU has none), got a GRU's; nothing shown from it");
  const t = part === 'encoder' ? a.encoderSelf : part === 'decoder' ? a.decoderSelf : a.cross;
  const [L, H, Q, K] = t.shape;
  const layers = Array.from({ length: L }, (_, l) => Array.from({ length: H }, (_, hd) => Array.from({ length: Q }, (_, i) =>
    Array.from(t.data.subarray(((l * H + hd) * Q + i) * K, ((l * H + hd) * Q + i + 1) * K)))));
  const src = r.sourceTokens;
  const tgt = r.targetTokens;
  return {
    layers, queries: part === 'encoder' ? src : tgt, keys: part === 'decoder' ? decoderInputs(tgt) : src,
    queryLang: part === 'encoder' ? tr.srcLang : tr.tgtLang, keyLang: part === 'decoder' ? tr.tgtLang : tr.srcLang,
  };
}

/**
 * A Transformer decoder's self-attention keys for its output pieces: the pieces it reads, '<bos>'
 * and then the one each step before wrote ('<bos>' again after a sentence's '</s>'). The step that
 * writes targetTokens[t] sees these up to t: the piece it writes is not among them (keyed by
 * targetTokens, the causal diagonal read as each piece seeing itself).
 */
export function decoderInputs(targetTokens: readonly string[]): string[] {
  return targetTokens.map((_, j) => (j === 0 || targetTokens[j - 1] === '</s>' ? '<bos>' : targetTokens[j - 1]));
}

/** The attributes that make a head view or model view show a model's attention on a sentence. */
export const ATTENTION_ATTRIBUTES = ['model', 'src', 'arch', 'text', 'part'];

/** Whether `el`'s attributes name a model and a sentence: a load is under way once they change. */
export function namesAttention(el: Element): boolean {
  return Boolean(el.getAttribute('model') || el.getAttribute('src')) && el.getAttribute('text') !== null;
}

/**
 * Returns a function that (re)reads `el`'s attention attributes and hands the result to `apply`
 * (or the error to `fail`: an AttributeFault, or a model that did not load); when called again
 * before an answer, only the latest answer counts. What is wrong with the attributes is noted in
 * `problems` (see attributeAttention), read by the render their change queued.
 * Calls in one task read the attributes once, after the last: an element parsed with model, arch,
 * text and part translated the sentence four times, and model then arch set in code downloaded
 * the Transformer before the GRU.
 */
export function attentionFollower(el: Element, problems: Map<string, string>, apply: (a: SentenceAttention) => void, fail: (e: Error) => void): () => void {
  let latest = 0;
  return coalesced(() => {
    const id = ++latest;
    attributeAttention(el, problems).then(
      (a) => { if (a && id === latest) apply(a); },
      (e: unknown) => { if (id === latest) fail(e instanceof Error ? e : new Error(String(e))); });
  });
}

/** A small seeded generator (mulberry32): the same seed draws the same numbers everywhere. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal draws from a uniform generator (Box-Muller). */
export function gaussian(rand: () => number): () => number {
  return () => {
    const u = Math.max(1e-12, rand());
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
  };
}
