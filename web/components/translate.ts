// <attn-translate>: text in, translation out, with the alignment matrix (which source words each
// output word attends to) and step-by-step playback of the decoding. It drives any object with
// the translator API: translate(text, { beam, maxLength }) -> { text, sourceTokens, targetTokens,
// attention [T, S], beams? } (sync or async).
import { AttnElement, badArg, coalesced, define, fmt, h, langTag, numberAttr } from './base.js';
// Registered here, not only by index.js: a page that imports this widget alone must get the
// elements it builds (a type-only import would be dropped from the output).
import './beam-tree.js';
import './heatmap.js';
import type { AttnBeamTree } from './beam-tree.js';
import type { AttnHeatmap } from './heatmap.js';
import { AttributeFault, attributeTranslator } from './lib.js';
import { toRows, type TensorLike } from './matrix.js';

/**
 * The attention behind a translation, in any of the shapes translators return: a matrix
 * [targetTokens, sourceTokens]; `{ kind: 'alignment', alignment }` (GRU + attention); or
 * `{ kind: 'transformer', cross: [layers, heads, T, S], … }`, shown as the last layer's
 * cross-attention averaged over heads.
 */
export type TranslationAttention =
  | TensorLike
  | number[][]
  | { kind: 'alignment'; alignment: TensorLike }
  | { kind: 'transformer'; layers: number; heads: number; cross: TensorLike };

export interface TranslationResult {
  text: string;
  sourceTokens: string[];
  targetTokens: string[];
  attention: TranslationAttention;
  beams?: { tokens?: string[]; text?: string; score: number }[];
  /** Source words the model does not know (also detected: tokens like <unk>, and byte-fallback
   * pieces like <0xE7> spelling a character the vocabulary lacks). */
  unknown?: string[];
  /** Decoding stopped (some sentence of) the translation at maxLength pieces: it is likely incomplete. */
  cutAtMaxLength?: boolean;
  /** Each sentence's result, when the translator cuts the input into sentences. */
  sentences?: { cutAtMaxLength?: boolean }[];
}

export interface Translator {
  /** Most output pieces the model writes for a sentence: a larger max-length is named as a problem, and this used. */
  readonly maxTargetTokens?: number;
  /** The languages read and written (BCP 47: 'fr', 'en'): the source's and the translation's `lang`. */
  readonly srcLang?: string;
  readonly tgtLang?: string;
  translate(text: string, options?: { beam?: number; maxLength?: number }): TranslationResult | Promise<TranslationResult>;
}

const UNK = /^(<unk>|\[UNK\]|<UNK>)$/;
/** A byte-fallback piece: a character absent from the vocabulary, spelled in raw UTF-8 bytes. */
const BYTE = /^<0x([0-9A-Fa-f]{2})>$/;
/** The word-start marker on its own (shown empty once the tokenizer strips it), before bytes. */
const MARKER = /^(|▁)$/;

/** Source tokens [start, end) that stand for one word the model does not know, and that word. */
export interface UnknownRun {
  start: number;
  end: number;
  text: string;
  bytes: boolean;
}

/**
 * The unknown words among `tokens`: `<unk>`-style tokens, tokens the translator listed in
 * `unknown`, and runs of byte-fallback pieces (with the bare word marker before them) decoded
 * back to the characters they spell. A tokenizer with byte fallback never emits `<unk>`, so
 * without the byte runs an out-of-vocabulary character would pass silently as noise.
 */
export function unknownRuns(tokens: string[], listed: Iterable<string> = []): UnknownRun[] {
  const known = new Set(listed);
  const runs: UnknownRun[] = [];
  for (let i = 0; i < tokens.length; i++) {
    if (UNK.test(tokens[i]) || known.has(tokens[i])) {
      runs.push({ start: i, end: i + 1, text: tokens[i], bytes: false });
      continue;
    }
    if (!BYTE.test(tokens[i])) continue;
    const start = i > 0 && MARKER.test(tokens[i - 1]) && !runs.some((r) => r.end > i - 1) ? i - 1 : i;
    const bytes: number[] = [];
    let j = i;
    for (; j < tokens.length && BYTE.test(tokens[j]); j++) bytes.push(parseInt(BYTE.exec(tokens[j])![1], 16));
    runs.push({ start, end: j, text: new TextDecoder().decode(Uint8Array.from(bytes)), bytes: true });
    i = j - 1;
  }
  return runs;
}

export class AttnTranslate extends AttnElement {
  static get observedAttributes(): string[] {
    return [...super.observedAttributes, 'value', 'beam', 'max-length', 'label', 'placeholder', 'model', 'src', 'arch'];
  }

  #translator: Translator | null = null;
  #result: TranslationResult | null = null;
  #rows: number[][] = [];
  #step = 0;
  #timer = 0;
  #busy = false;
  #again = false;
  #input: HTMLInputElement;
  #go: HTMLButtonElement;
  #out: HTMLParagraphElement;
  #text: HTMLParagraphElement;
  #cut: HTMLParagraphElement;
  #src: HTMLParagraphElement;
  #status: HTMLDivElement;
  #slider: HTMLInputElement;
  #play: HTMLButtonElement;
  #heatmap: AttnHeatmap;
  #tree: AttnBeamTree;
  #results: HTMLDivElement;

  constructor() {
    super();
    const id = `t${Math.random().toString(36).slice(2, 8)}`;
    this.#input = h('input', { type: 'text', id: `${id}-in`, autocomplete: 'off', spellcheck: false });
    this.#go = h('button', { type: 'submit', textContent: 'Translate' });
    const form = h('form', { className: 'row' },
      h('label', { htmlFor: `${id}-in`, textContent: 'Text' }), this.#input, this.#go);
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      // Translate is aria-disabled meanwhile (see run()): a press or Enter then does nothing.
      if (!this.#busy) void this.run();
    });
    this.#status = h('div', { className: 'readout', 'aria-live': 'polite' });
    this.#src = h('p', { className: 'tokens src' });
    this.#out = h('p', { className: 'tokens out' });
    this.#text = h('p', { className: 'text' });
    this.#cut = h('p', { className: 'cut', hidden: true });
    this.#slider = h('input', { type: 'range', min: '0', max: '0', value: '0', id: `${id}-step` });
    this.#slider.addEventListener('input', () => this.setStep(Number(this.#slider.value)));
    this.#play = h('button', { type: 'button', textContent: 'Play', onclick: () => this.#togglePlay() });
    const prev = h('button', { type: 'button', textContent: '◀', 'aria-label': 'Previous step', onclick: () => this.setStep(this.#step - 1) });
    const next = h('button', { type: 'button', textContent: '▶', 'aria-label': 'Next step', onclick: () => this.setStep(this.#step + 1) });
    const controls = h('div', { className: 'row' }, prev, this.#play, next,
      h('label', { htmlFor: `${id}-step`, textContent: 'Step' }), this.#slider);
    this.#heatmap = document.createElement('attn-heatmap') as AttnHeatmap;
    this.#heatmap.setAttribute('row-title', 'output');
    this.#heatmap.setAttribute('col-title', 'source');
    this.#tree = document.createElement('attn-beam-tree') as AttnBeamTree;
    this.#tree.hidden = true;
    this.#results = h('div', { hidden: true },
      h('div', { className: 'cap', textContent: 'Source (shaded by the current step’s attention)' }), this.#src,
      h('div', { className: 'cap', textContent: 'Translation' }), this.#text, this.#cut,
      h('div', { className: 'cap', textContent: 'Output tokens, one a step (the pieces the model writes)' }), this.#out, controls, this.#heatmap,
      // The export buttons save the heatmap: drawn under it, next in the DOM and the Tab order,
      // not at the top of the widget over the text box (the bar's place in the others).
      this.bar, this.#tree);
    this.frame.append(form, this.#status, this.#results);
  }

  protected css(): string {
    // Sizes in em of the widget's 13 px (see base.ts). min-width: 0 and overflow-wrap let a
    // narrow screen (180 px: a phone at 200% zoom) shrink the text box and break a long word.
    return `.row { display: flex; gap: 6px; align-items: center; flex-wrap: wrap; margin: 4px 0; }
input[type=text] { flex: 1 1 14em; min-width: 0; font: inherit; font-size: calc(15em / 13); padding: 4px 8px; border-radius: 4px; border: 1px solid var(--line); background: var(--bg); color: var(--fg); }
input[type=range] { flex: 1 1 8em; min-width: 0; }
form button { font-size: 1em; padding: 4px 10px; }
form button[aria-disabled=true] { opacity: 0.6; cursor: default; }
.cap { color: var(--muted); font-size: calc(12em / 13); margin-top: 6px; }
.text { margin: 2px 0 6px; font-size: calc(17em / 13); overflow-wrap: anywhere; }
.cut { margin: 0 0 6px; padding-left: 6px; border-left: 3px solid var(--unk); }
.tokens { display: flex; flex-wrap: wrap; gap: 4px; margin: 2px 0 6px; font-size: calc(15em / 13); }
.tok { padding: 1px 5px; border-radius: 4px; border: 1px solid transparent; overflow-wrap: anywhere; min-width: 0; }
.tok.cur { border-color: var(--accent); }
.tok.future { color: var(--muted); border-bottom: 1px dotted var(--line); border-radius: 0; }
.tok.unk { border: 1px dashed var(--unk); }
.tok.unk-end::after { content: ' ?'; color: var(--unk); font-weight: bold; }
.bar { margin: 2px 0 6px; }
/* Forced colours (Windows contrast themes) turn every border one colour, the transparent ones too,
   and drop backgrounds: the current step and the source's shading by attention were gone. */
@media (forced-colors: active) {
  .tok { border-color: Canvas; }
  .tok.cur { border-color: Highlight; }
  .tok.future { color: GrayText; }
  .src .tok { forced-color-adjust: none; color: CanvasText; }
}
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }`;
  }

  /** The object that translates (see the file comment for its API). */
  set translator(t: Translator | null) {
    // One without translate() failed at the next translation as 'this[#translator].translate is not a function'.
    if (t !== null && t !== undefined && typeof t.translate !== 'function') throw badArg(this, 'translator', 'null or an object with a translate(text, options) method', t);
    this.#use(t ?? null);
    this.#checkSettings();  // max-length is checked against this translator's limit
    this.#retranslate();
  }
  get translator(): Translator | null {
    return this.#translator;
  }

  /**
   * The translator, and its languages on what is in them: a screen reader reads the French input,
   * source pieces, translation or output pieces with an English voice (the page's lang) otherwise.
   */
  #use(t: Translator | null): void {
    this.#translator = t;
    const src = langTag(t?.srcLang), tgt = langTag(t?.tgtLang);
    for (const [el, lang] of [[this.#input, src], [this.#src, src], [this.#text, tgt], [this.#out, tgt]] as const) {
      if (lang) el.lang = lang;
      else el.removeAttribute('lang');
    }
    // The alignment's rows are output pieces, its columns source pieces; the beam tree's are output pieces.
    for (const [el, name, lang] of [[this.#heatmap, 'row-lang', tgt], [this.#heatmap, 'col-lang', src], [this.#tree, 'token-lang', tgt]] as const) {
      if (lang) el.setAttribute(name, lang);
      else el.removeAttribute(name);
    }
  }

  get result(): TranslationResult | null {
    return this.#result;
  }

  get step(): number {
    return this.#step;
  }

  get value(): string {
    return this.#input.value;
  }
  set value(v: string) {
    this.#input.value = v;
    this.#retranslate();
  }

  #loads = 0;

  /**
   * The input or a setting changed: with a translator and text, translate again, so the result
   * shown is never the last input's (it sat next to the new text until Translate was pressed).
   * Coalesced: value, beam and max-length set together translate once.
   */
  readonly #retranslate = coalesced(() => {
    // run() shows its own failures in the status line.
    if (this.#translator && this.#input.value.trim()) void this.run().catch(() => undefined);
  });

  /** model, src and arch set together (an element parsed, or built in code) load one model, not one each. */
  readonly #queueLoad = coalesced(() => void this.#loadFromAttributes());

  /**
   * HTML-only use: `model="fra-eng"` (with `arch="gru"` or the default Transformer) or `src` (a
   * model file's URL) loads the translator, then translates the `value` text, if any.
   */
  async #loadFromAttributes(): Promise<void> {
    const pending = attributeTranslator(this, ['gru', 'transformer'], this.attrProblems);
    this.invalidate();  // shows a bad arch, or that there is none now
    if (!pending) return;
    const id = ++this.#loads;
    this.#status.textContent = 'Loading the model…';
    try {
      const t = await pending;
      if (id !== this.#loads) return;
      this.#use(t);
      this.#checkSettings();
      this.#status.textContent = '';
      this.emit('attn-loaded', { model: this.getAttribute('model'), src: this.getAttribute('src') });
    } catch (e) {
      if (id !== this.#loads) return;
      // The model before, still translating, would pass for the one the attributes name.
      this.#use(null);
      this.#result = null;
      this.#results.hidden = true;
      this.invalidate();
      // A model name that is none is named under the widget, as every attribute it cannot use.
      if (e instanceof AttributeFault) {
        this.attrProblems.set(e.attribute, e.message);
        this.#status.textContent = '';
      } else this.#status.textContent = `The model did not load: ${e instanceof Error ? e.message : String(e)}`;
      return;
    }
    // run() shows its own failures in the status line.
    if (this.#input.value.trim()) await this.run().catch(() => undefined);
  }

  protected attributeChanged(name: string, value: string | null): void {
    if (name === 'model' || name === 'src' || name === 'arch') this.#queueLoad();
    else if (name === 'value') this.value = value ?? '';
    else if (name === 'placeholder') this.#input.placeholder = value ?? '';
    else {
      if (name === 'beam' || name === 'max-length') {
        this.#checkSettings();
        this.#retranslate();
      }
      this.invalidate();
    }
  }

  /** Translates the input's text; resolves with the result (null without a translator or text). */
  async run(text = this.#input.value): Promise<TranslationResult | null> {
    if (!this.#translator) {
      this.#status.textContent = 'No translator loaded.';
      return null;
    }
    if (!text.trim()) {
      this.#status.textContent = 'Type a sentence to translate.';
      return null;
    }
    if (this.#busy) {
      // Settings changed mid-translation (a beam slider dragged): translate again when this one
      // ends, so the last request is the one shown.
      this.#again = true;
      return null;
    }
    this.#busy = true;
    // aria-disabled, not disabled: a focused button that becomes disabled drops keyboard focus to
    // the page, and a keyboard or screen-reader user who pressed Translate lost their place.
    this.#go.setAttribute('aria-disabled', 'true');
    this.#status.textContent = 'Translating…';
    try {
      const { beam, maxLength, limit } = this.#settings();
      const r = await this.#translator.translate(text, { beam, maxLength });
      this.#result = r;
      this.#rows = alignmentRows(r.attention, r.targetTokens.length, r.sourceTokens.length);
      const unknown = this.unknownWords;
      // The live status says a translation was cut; the note by it says where and what to do.
      const cut = cutNote(r, maxLength, limit);
      const end = cut ? ' Cut at max-length.' : '';
      if (unknown.length) {
        // The words in the source's language, as the source pieces are (see #use).
        const lang = this.#src.lang;
        const words = unknown.flatMap((u, i) => [i ? ', ' : '', lang ? h('span', { lang, textContent: u.text }) : u.text, u.bytes ? ' (spelled in raw bytes)' : '']);
        this.#status.replaceChildren('Unknown to the model: ', ...words, `; marked with ?.${end}`);
      } else this.#status.textContent = `${r.targetTokens.length} output tokens${beam > 1 ? `, beam width ${beam}` : ', greedy'}.${end}`;
      this.#slider.max = String(Math.max(0, r.targetTokens.length - 1));
      this.#text.textContent = r.text;
      this.#cut.textContent = cut;
      this.#cut.hidden = !cut;
      this.#results.hidden = false;
      this.invalidate(); // shows the export buttons
      this.#heatmap.rowLabels = r.targetTokens;
      this.#heatmap.colLabels = r.sourceTokens;
      const beams = (r.beams ?? []).map((b) => ({ tokens: 'tokens' in b && b.tokens ? b.tokens : String((b as { text?: string }).text ?? '').split(/\s+/), score: b.score }));
      this.#tree.data = beams;
      this.#tree.hidden = beams.length < 2;
      this.setStep(r.targetTokens.length - 1, false);
      this.emit<TranslationResult>('attn-translated', r);
      return r;
    } catch (e) {
      this.#status.textContent = `Translation failed: ${e instanceof Error ? e.message : String(e)}`;
      throw e;
    } finally {
      this.#busy = false;
      this.#go.removeAttribute('aria-disabled');
      if (this.#again) {
        this.#again = false;
        queueMicrotask(() => void this.run().catch(() => undefined));
      }
    }
  }

  /**
   * beam and max-length, falling back (and saying so) where they are no whole number from 1, or
   * max-length is above the translator's limit (`maxTargetTokens`, when it has one): then the limit.
   * The default max-length, 40, is the limit's when that is lower.
   */
  #settings(): { beam: number; maxLength: number; limit: number; beamProblem: string; maxLengthProblem: string } {
    const whole = (x: number) => Number.isInteger(x) && x >= 1;
    const b = numberAttr(this, 'beam', 1, 'a whole number, 1 or more', whole);
    const most = this.#translator?.maxTargetTokens;
    const limit = typeof most === 'number' && most >= 1 ? most : Infinity;
    const m = numberAttr(this, 'max-length', Number(this.getAttribute('max-length')) > limit ? limit : Math.min(40, limit),
      limit < Infinity ? `a whole number from 1 to ${limit} (this model's limit)` : 'a whole number, 1 or more', (x) => whole(x) && x <= limit);
    return { beam: b.value, maxLength: m.value, limit, beamProblem: b.problem, maxLengthProblem: m.problem };
  }

  /** The settings, with what is wrong in them noted for the next render (see problems()). */
  #checkSettings(): void {
    const s = this.#settings();
    for (const [name, problem] of [['beam', s.beamProblem], ['max-length', s.maxLengthProblem]] as const) {
      if (problem) this.attrProblems.set(name, problem);
      else this.attrProblems.delete(name);
    }
    this.invalidate();
  }

  /** The source words of the last result the model does not know (see unknownRuns). */
  get unknownWords(): UnknownRun[] {
    return this.#result ? unknownRuns(this.#result.sourceTokens, this.#result.unknown) : [];
  }

  /** Shows the decoding up to output token `t`. */
  setStep(t: number, announce = true): void {
    // NaN became the step, its slider and heatmap blank.
    if (typeof t !== 'number' || Number.isNaN(t)) throw badArg(this, 'setStep', 'a step number (0-based)', t);
    const r = this.#result;
    if (!r) return;
    const T = r.targetTokens.length;
    this.#step = Math.max(0, Math.min(T - 1, t));
    this.#slider.value = String(this.#step);
    // What the step shows, for a screen reader on the slider (it read out a bare index).
    const most = argmax(this.#rows[this.#step] ?? []);
    if (T) this.#slider.setAttribute('aria-valuetext', `${this.#step + 1} of ${T}: ${r.targetTokens[this.#step]}, attending most to ${r.sourceTokens[most]}`);
    else this.#slider.removeAttribute('aria-valuetext');
    this.#heatmap.data = this.#rows;
    this.#heatmap.mask = this.#rows.map((row, i) => row.map(() => i > this.#step));
    this.#heatmap.pinned = T ? { row: this.#step, col: most } : null;
    const runOf = new Map<number, UnknownRun>();
    for (const u of this.unknownWords) for (let j = u.start; j < u.end; j++) runOf.set(j, u);
    const w = this.#rows[this.#step] ?? [];
    const hi = Math.max(1e-9, ...w);
    const accent = this.palette?.accent ?? '#3559e0';
    this.#src.replaceChildren(...r.sourceTokens.map((tok, j) => {
      const u = runOf.get(j);
      const end = u !== undefined && j === u.end - 1;
      const what = u ? `unknown to the model: ${u.text}${u.bytes ? ', spelled in raw bytes' : ''}` : '';
      const span = h('span', {
        className: `tok${u ? ' unk' : ''}${end ? ' unk-end' : ''}`, textContent: tok,
        title: `${u ? `${what}; ` : ''}attention ${fmt(w[j] ?? 0, 3)}`,
      });
      if (u) span.dataset.unknown = u.text;
      // Screen readers hear the word once, after its last piece (the '?' is decoration).
      // In the page's language, not the source's that the token carries.
      if (end) span.append(h('span', { className: 'sr', textContent: ` (${what})`, lang: pageLang(this) }));
      span.style.background = `color-mix(in srgb, ${accent} ${Math.round(((w[j] ?? 0) / hi) * 55)}%, transparent)`;
      return span;
    }));
    this.#out.replaceChildren(...r.targetTokens.map((tok, i) => h('span', {
      className: `tok${i === this.#step ? ' cur' : ''}${i > this.#step ? ' future' : ''}`, textContent: tok,
    })));
    if (announce) this.emit('attn-step', { step: this.#step, token: r.targetTokens[this.#step] });
  }

  #togglePlay(): void {
    if (this.#timer) {
      this.#stop();
      return;
    }
    const r = this.#result;
    if (!r) return;
    if (this.#step >= r.targetTokens.length - 1) this.setStep(0);
    this.#play.textContent = 'Pause';
    this.#timer = window.setInterval(() => {
      if (!this.#result || this.#step >= this.#result.targetTokens.length - 1) this.#stop();
      else this.setStep(this.#step + 1);
    }, 700);
  }

  #stop(): void {
    clearInterval(this.#timer);
    this.#timer = 0;
    this.#play.textContent = 'Play';
  }

  disconnectedCallback(): void {
    this.#stop();
    super.disconnectedCallback();
  }

  /** The buttons export the alignment heatmap; `label` names the text box (below). */
  protected defaultLabel(): string {
    return 'Alignment';
  }

  protected canExport(): boolean {
    return this.#result !== null;
  }

  protected exportTarget(): SVGSVGElement | null {
    // A step changes the heatmap's data, whose redraw waits for the next frame: draw it now, or an
    // export right after a step would show the step before.
    if (this.#result) this.#heatmap.renderNow();
    return this.#heatmap.shadowRoot?.querySelector('svg') ?? null;
  }

  protected render(): void {
    const theme = this.getAttribute('theme');
    for (const el of [this.#heatmap, this.#tree]) {
      // Only a valid one: the heatmap and tree would name a bad one a second time.
      if (theme === 'light' || theme === 'dark') el.setAttribute('theme', theme);
      else el.removeAttribute('theme');
      el.setAttribute('no-export', '');
    }
    const label = this.getAttribute('label');
    this.#input.setAttribute('aria-label', label ?? 'Text to translate');
    // The picture the buttons export is titled after the label, as they are named (it kept this alone).
    this.#heatmap.setAttribute('label', `${label ? `${label}. ` : ''}Alignment: output words (rows) attending to source words (columns)`);
    // The unknown-word mark's orange, at 4.5:1 or more on the theme's background: #d9480f, the
    // one colour for both, gave its '?' 4.3:1 on white and 3.9:1 on the dark background.
    this.frame.style.setProperty('--unk', this.palette.dark ? '#ff8a5c' : '#c2410c');
  }
}

/**
 * What to say by a translation that decoding stopped at `maxLength` pieces (its `cutAtMaxLength`),
 * or '' for one that ended on its own. At the model's `limit` there is no raising it.
 */
function cutNote(r: TranslationResult, maxLength: number, limit: number): string {
  if (!r.cutAtMaxLength) return '';
  const n = r.sentences?.length ?? 1;
  const k = r.sentences?.filter((p) => p.cutAtMaxLength).length ?? 1;
  return `${n > 1 ? `${k} of ${n} sentences cut` : 'Cut'} at ${maxLength} pieces${maxLength >= limit ? ", this model's limit" : ': raise max-length for the rest'}.`;
}

/** The [T, S] alignment of any TranslationAttention. */
export function alignmentRows(a: TranslationAttention, T: number, S: number): number[][] {
  if (Array.isArray(a)) return toRows(a);
  if ('kind' in a && a.kind === 'alignment') return toRows(a.alignment);
  const t: TensorLike = 'kind' in a && a.kind === 'transformer' ? a.cross : (a as TensorLike);
  const n = t.shape.length;
  if (n <= 2) return toRows(t);
  // [..., heads, T, S]: the last layer (last leading block), averaged over heads.
  const heads = t.shape[n - 3];
  const block = heads * T * S;
  const start = t.data.length - block;
  const rows = Array.from({ length: T }, () => new Array<number>(S).fill(0));
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < T; i++) for (let j = 0; j < S; j++) rows[i][j] += Number(t.data[start + (h * T + i) * S + j]) / heads;
  }
  return rows;
}

/** The language `el` is in outside its shadow root ('' when none is given: unknown). */
function pageLang(el: Element): string {
  for (let n: Element | null = el; n; n = n.parentElement ?? (n.getRootNode() as ShadowRoot).host ?? null) {
    const lang = n.getAttribute('lang');
    if (lang !== null) return lang;
  }
  return '';
}

function argmax(a: number[]): number {
  return a.reduce((b, v, i) => (v > a[b] ? i : b), 0);
}

define('attn-translate', AttnTranslate);

declare global {
  interface HTMLElementTagNameMap {
    'attn-translate': AttnTranslate;
  }
}
