// What every attnlab widget shares: a shadow root, light/dark palettes, redraw on resize,
// export to SVG and PNG, and events that cross the shadow boundary.
import { onThemeChange, paletteFor, type Palette } from './theme.js';

export const SVG_NS = 'http://www.w3.org/2000/svg';

type Attrs = Record<string, string | number | undefined | null>;

/** An SVG element with attributes; text goes in with textContent, never as markup. */
export function s<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: (Node | string | null | undefined)[]): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, String(v));
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

/** An HTML element with properties and children (text as text nodes). */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> & { [k: string]: unknown } = {}, ...children: (Node | string | null | undefined)[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k.startsWith('aria-') || k.startsWith('data-') || k === 'role' || k === 'for') node.setAttribute(k, String(v));
    else (node as unknown as Record<string, unknown>)[k] = v;
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

/**
 * Parses an attribute holding JSON, or returns undefined when it is absent or not valid. What is
 * wrong goes in `problems` under the attribute's name (shown in the widget: a console warning was
 * all an author got, and the widget said "No data").
 */
export function jsonAttr<T>(el: Element, name: string, problems: Map<string, string>): T | undefined {
  problems.delete(name);
  const text = el.getAttribute(name);
  if (text === null || text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    problems.set(name, `${name}: not valid JSON`);
    return undefined;
  }
}

/** Labels from an attribute: a JSON array, or words separated by spaces or commas. */
export function labelsAttr(el: Element, name: string, problems: Map<string, string>): string[] | undefined {
  problems.delete(name);
  const text = el.getAttribute(name);
  if (text === null) return undefined;
  const t = text.trim();
  if (t.startsWith('[')) {
    const arr = jsonAttr<unknown[]>(el, name, problems);
    return Array.isArray(arr) ? arr.map(String) : undefined;
  }
  return t === '' ? [] : t.split(t.includes(',') ? /\s*,\s*/ : /\s+/);
}

/** A w x h picture as a PNG data URL, pixel (x, y) coloured rgbAt(x, y): heatmaps and thumbnails too large for one SVG rect per cell. */
export function pixelsURL(w: number, h: number, rgbAt: (x: number, y: number) => readonly [number, number, number]): string {
  const canvas = document.createElement('canvas');
  canvas.width = w;
  canvas.height = h;
  const ctx = canvas.getContext('2d')!;
  const img = ctx.createImageData(w, h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const o = (y * w + x) * 4, rgb = rgbAt(x, y);
      img.data[o] = rgb[0];
      img.data[o + 1] = rgb[1];
      img.data[o + 2] = rgb[2];
      img.data[o + 3] = 255;
    }
  }
  ctx.putImageData(img, 0, 0);
  return canvas.toDataURL();
}

/**
 * `fn` once, in a microtask, however often the returned function is called in one task: attributes
 * set together (an element parsed, or several set in code) act once, on their last values.
 */
export function coalesced(fn: () => void): () => void {
  let queued = false;
  return () => {
    if (queued) return;
    queued = true;
    queueMicrotask(() => {
      queued = false;
      fn();
    });
  };
}

/** The item after `cur` (-1: none) in a cycle of n, stepping by d = 1 or -1: from none, forwards is the first and backwards the last. */
export const cycle = (cur: number, d: 1 | -1, n: number): number => (cur < 0 ? (d > 0 ? 0 : n - 1) : (cur + d + n) % n);
export const fmt = (x: number, digits = 3): string => (Number.isFinite(x) ? x.toFixed(digits) : String(x));

/** `n` and the word for that many: '1 row', '2 rows', '1 hypothesis' (`plural` where it is no -s). */
export function count(n: number, word: string, plural = `${word}s`): string {
  return `${n} ${n === 1 ? word : plural}`;
}

/** What is wrong with an attribute, named the same way everywhere: `digits: expected …, got '200'`. */
export function badAttr(name: string, expected: string, got: string): string {
  return `${name}: expected ${expected}, got '${got}'`;
}

/** `lang` when it is a well-formed language tag ('fr', 'en-GB'), else null (leave the page's). */
export function langTag(lang: unknown): string | null {
  return typeof lang === 'string' && /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/.test(lang) ? lang : null;
}

/**
 * A number attribute: `fallback` when it is absent or empty, else its value when `ok` accepts
 * it. A value `ok` refuses gives the fallback too, and `problem` says so (see badAttr).
 */
export function numberAttr(el: Element, name: string, fallback: number, expected: string, ok: (x: number) => boolean = Number.isFinite): { value: number; problem: string } {
  const text = el.getAttribute(name);
  if (text === null || text.trim() === '') return { value: fallback, problem: '' };
  const x = Number(text);
  return ok(x) ? { value: x, problem: '' } : { value: fallback, problem: `${badAttr(name, expected, text)}; using ${fallback}` };
}

// Text follows the reader's default font size (`medium`: the browser's text-size setting, which
// fixed px ignored), 13 px at the usual 16. Sizes inside are in em of that, written as
// calc(11em / 13) for what was 11 px. Not rem: a page's html { font-size: 62.5% } would shrink it.
const BASE_CSS = `
:host { display: block; position: relative; min-width: 0; background: var(--bg); color: var(--fg); border-radius: 6px; font: medium/1.4 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; }
:host([hidden]) { display: none; }
.frame { position: relative; color: var(--fg); display: flex; flex-direction: column; font-size: 0.8125em; }
.bar { display: flex; justify-content: flex-end; gap: 4px; min-height: 24px; margin-bottom: 2px; order: -1; }
:host([no-export]) .bar { display: none; }
.bar[hidden] { display: none; }
button { font: inherit; font-size: calc(11em / 13); padding: 1px 6px; border-radius: 4px; cursor: pointer; min-height: 24px; min-width: 24px;
  border: 1px solid var(--line); background: var(--bg); color: var(--fg); }
button:focus-visible, [tabindex]:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
svg { display: block; max-width: 100%; overflow: visible; user-select: none; -webkit-user-select: none; }
.readout { min-height: 1.4em; color: var(--muted); font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.fault { color: var(--fg); border-left: 3px solid #d9480f; padding-left: 6px; margin-top: 4px; white-space: pre-line; overflow-wrap: anywhere; }
.fault[hidden] { display: none; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
`;

/** The palette's colours an author's CSS may set on a widget or an ancestor, as --attn-<name>. */
const COLOURS = ['bg', 'fg', 'muted', 'line', 'grid', 'accent', 'highlight', 'masked', 'hatch'] as const;

/**
 * A theme's colours as the shadow root's --bg, --fg, …: each the author's --attn-… where one is
 * set, else the theme's. They sit in an adopted sheet's :host rule because the inline style they
 * were written to before beat every author rule, so a course page could not restyle a widget.
 * `ignored`: the author's values that are no colour, which would otherwise reach the widget's
 * HTML as they are (`--attn-bg: nonsense` left it transparent, its text in the page's colour).
 */
function themeCSS(p: Palette, ignored: readonly string[]): string {
  return `:host { ${COLOURS.map((k) => `--${k}: ${ignored.includes(k) ? p[k] : `var(--attn-${k}, ${p[k]})`};`).join(' ')} }`;
}

const concrete = new Map<string, string | null>();
let probe: CanvasRenderingContext2D | null = null;
let ruler: CanvasRenderingContext2D | null = null;

/**
 * A CSS colour as sRGB, `#rrggbb` (or `rgba(…)` when translucent), or null when the text is no
 * colour. What the widgets draw is written into SVG attributes, exports and PNG pixels, which
 * need a plain value: an author's `oklch(…)` or `color-mix(…)` is painted once to find it.
 */
function concreteColour(text: string): string | null {
  const t = text.trim();
  let c = concrete.get(t);
  if (c !== undefined) return c;
  c = null;
  if (t && CSS.supports('color', t)) {
    probe ??= document.createElement('canvas').getContext('2d', { willReadFrequently: true });
    if (probe) {
      probe.clearRect(0, 0, 1, 1);
      probe.fillStyle = t;
      probe.fillRect(0, 0, 1, 1);
      const [r, g, b, a] = probe.getImageData(0, 0, 1, 1).data;
      c = a === 255 ? `#${[r, g, b].map((x) => x.toString(16).padStart(2, '0')).join('')}` : `rgba(${r},${g},${b},${+(a / 255).toFixed(3)})`;
    }
  }
  concrete.set(t, c);
  return c;
}

// Each widget class's stylesheet, built once and adopted by every instance's shadow root: a
// constructed sheet is not inline style, so a course page whose Content-Security-Policy has no
// style-src 'unsafe-inline' (common on LMS pages) still styles the widgets; a <style> element in
// each shadow root was refused there and left them unstyled. Engines without constructable
// stylesheets (Safari before 16.4) get that <style> element.
const sheets = new Map<unknown, CSSStyleSheet>();
function styleFor(cls: unknown, css: () => string): CSSStyleSheet | HTMLStyleElement {
  if (typeof CSSStyleSheet === 'function' && 'replaceSync' in CSSStyleSheet.prototype && 'adoptedStyleSheets' in ShadowRoot.prototype) {
    let sheet = sheets.get(cls);
    if (!sheet) {
      sheet = new CSSStyleSheet();
      sheet.replaceSync(css());
      sheets.set(cls, sheet);
    }
    return sheet;
  }
  const style = document.createElement('style');
  style.textContent = css();
  return style;
}

// One queue of pending redraws for every widget on the page. Each animation frame draws widgets
// until a small time budget is spent and leaves the rest for the next frame, so several widgets
// updating together never add up to one long task.
const pending = new Map<object, () => void>();
let frame = 0;
const FRAME_BUDGET_MS = 12;

function schedule(key: object, fn: () => void): void {
  pending.set(key, fn);
  frame ||= requestAnimationFrame(flush);
}

function unschedule(key: object): void {
  pending.delete(key);
}

function flush(): void {
  frame = 0;
  const start = performance.now();
  for (const [key, fn] of pending) {
    pending.delete(key);
    // renderNow shows a widget's own failure in it; whatever still escapes must not stop the
    // widgets queued after this one from drawing.
    try {
      fn();
    } catch (e) {
      reportError(e);
    }
    if (performance.now() - start > FRAME_BUDGET_MS) break;
  }
  if (pending.size) frame = requestAnimationFrame(flush);
}

// Outside a browser (server-side rendering, Node) importing the widgets defines nothing and
// throws nothing: the base class is then a stand-in, and define() does nothing.
const ElementBase: typeof HTMLElement = typeof HTMLElement === 'undefined' ? (class {} as typeof HTMLElement) : HTMLElement;

export abstract class AttnElement extends ElementBase {
  static get observedAttributes(): string[] {
    return ['theme'];
  }

  protected readonly root: ShadowRoot;
  protected readonly frame: HTMLDivElement;
  /**
   * The SVG/PNG buttons; a widget with nothing to export yet hides them. Drawn above the picture
   * but after it in the DOM: reading and Tab order reach the content first, then its actions.
   */
  protected readonly bar: HTMLDivElement;
  protected palette!: Palette;
  /** What is wrong with each attribute that has something wrong, by name (see problems()). */
  protected readonly attrProblems = new Map<string, string>();
  /** Why the last render failed, or what is wrong with the attributes (see problems()). */
  readonly #fault: HTMLDivElement;
  /** The polite live region: only what a user's own action changed is said (see announce()). */
  readonly #live: HTMLDivElement;
  /** The readout the next render announces (see announceAfterRender()). */
  #announceFrom: HTMLElement | null = null;
  /** The export buttons, relabelled with the widget's label. */
  readonly #exportButtons: HTMLButtonElement[];
  /** The widget class's sheet, adopted first; the theme's follows it (see #applyTheme). */
  readonly #sheet: CSSStyleSheet | null;
  /** The theme's <style> element where sheets cannot be adopted. */
  #themeStyle: HTMLStyleElement | null = null;
  /** The theme whose colours the shadow root has now, before an author's overrides. */
  #theme: Palette | null = null;
  /** The author's --attn-… colours that are no colour, the theme's used instead (see themeCSS). */
  #ignored: readonly string[] = [];
  #raf = 0;
  #resize: ResizeObserver | null = null;
  #unTheme: (() => void) | null = null;
  #lastWidth = 0;
  #lastFont = 0;
  /**
   * The widget's text size over the usual 13 px (the reader's default font size over 16), read at
   * each render: SVG text and the room laid out for it are multiplied by it.
   */
  protected textScale = 1;

  constructor() {
    super();
    this.root = this.attachShadow({ mode: 'open' });
    const style = styleFor(this.constructor, () => BASE_CSS + this.css());
    this.#sheet = style instanceof HTMLStyleElement ? null : style;
    this.frame = h('div', { className: 'body' });
    this.#exportButtons = (['svg', 'png'] as const).map((kind) => h('button', {
      type: 'button', textContent: kind.toUpperCase(), title: `Download as ${kind.toUpperCase()}`,
      // A click handler's rejection would be uncaught: say it in the widget instead.
      onclick: () => this.download(kind).catch((e: unknown) => this.#showFault([errorText(e)])),
    }));
    const bar = this.bar = h('div', { className: 'bar' }, ...this.#exportButtons);
    this.#labelButtons();
    this.#fault = h('div', { className: 'fault', role: 'alert', hidden: true });
    this.#live = h('div', { className: 'sr', 'aria-live': 'polite' });
    this.root.append(...(style instanceof HTMLStyleElement ? [style] : []), h('div', { className: 'frame' }, this.frame, bar, this.#fault, this.#live));
  }

  /**
   * The widget's name without a `label` attribute: its picture's title, and its buttons' names
   * ("Download Attention weights as PNG", where the tag name was read out).
   */
  protected defaultLabel(): string {
    return this.localName;
  }

  /** "Download Alignment as PNG": with several widgets on a page, the tag name told them apart for no one. */
  #labelButtons(): void {
    const name = this.getAttribute('label') ?? this.defaultLabel();
    for (const b of this.#exportButtons) b.setAttribute('aria-label', `Download ${name} as ${b.textContent}`);
  }

  /**
   * What is wrong with the attributes as they stand (each badAttr-style, the widget drawing with a
   * fallback meanwhile); shown under the widget after each render.
   */
  protected problems(): string[] {
    return [...this.attrProblems.values()];
  }

  /** Whether there is a picture to export: the SVG/PNG buttons show only then. */
  protected canExport(): boolean {
    return this.exportTarget() !== null;
  }

  /**
   * Says `what` through the widget's live region: text, or a copy of a read-out's children, whose
   * tokens keep their `lang` (as text, a French token was read in the page's English voice).
   * Called for what the user did (a key, a pin, a head toggled), never from render: a resize, a
   * theme change or a hover would repeat it.
   */
  protected announce(what: string | HTMLElement): void {
    if (typeof what === 'string') this.#live.textContent = what;
    else this.#live.replaceChildren(...Array.from(what.childNodes, (n) => n.cloneNode(true)));
  }

  /**
   * Announces `readout`'s text as the next render leaves it: for a user's action (a key, a head
   * toggled) whose outcome is written by render, which must not announce on its own.
   */
  protected announceAfterRender(readout: HTMLElement): void {
    this.#announceFrom = readout;
  }

  #showFault(lines: string[]): void {
    this.#fault.textContent = lines.map((l) => `<${this.localName}>: ${l}`).join('\n');
    this.#fault.hidden = lines.length === 0;
  }

  /** Extra CSS for the shadow root. */
  protected css(): string {
    return '';
  }

  /** Builds the widget's view for the current data, palette and width. */
  protected abstract render(width: number): void;

  /** The SVG element to export (the main picture). */
  protected abstract exportTarget(): SVGSVGElement | null;

  connectedCallback(): void {
    this.#takeEarlyProperties();
    this.#applyTheme();
    this.#unTheme = onThemeChange(() => this.#themeChanged());
    // Redraw when the width changes by more than a scroll bar: the SVG scales (max-width: 100%)
    // in between, and a page whose scroll bar comes and goes with the widget's height would
    // otherwise redraw back and forth for ever.
    this.#resize = new ResizeObserver(() => {
      // Hidden (display: none here or above, as a model view's closed enlarged head): a redraw
      // would show nothing, and the observer fires again when the widget shows.
      if (!this.getClientRects().length) return;
      if (Math.abs(this.#width() - this.#lastWidth) > 24 || this.#fontPx() !== this.#lastFont) this.invalidate();
    });
    this.#resize.observe(this);
    this.invalidate();
  }

  /**
   * Properties a page set on the element before the widget was defined (a script that ran before
   * the widgets' module: `el.data = …` on a plain element) are own properties that hide the
   * class's setters: the widget drew "No data" and the data sat unused. Each goes through its
   * setter now.
   */
  #takeEarlyProperties(): void {
    for (const key of Object.keys(this)) {
      let proto: object | null = Object.getPrototypeOf(this);
      while (proto && !Object.getOwnPropertyDescriptor(proto, key)?.set) proto = Object.getPrototypeOf(proto);
      if (!proto) continue;
      const value = (this as unknown as Record<string, unknown>)[key];
      delete (this as unknown as Record<string, unknown>)[key];
      (this as unknown as Record<string, unknown>)[key] = value;
    }
  }

  disconnectedCallback(): void {
    this.#resize?.disconnect();
    this.#unTheme?.();
    unschedule(this);
    this.#raf = 0;
  }

  attributeChangedCallback(name: string, old: string | null, value: string | null): void {
    if (old === value) return;
    if (name === 'theme') {
      // theme="Dark" or "night" was ignored without a word (the widget followed the system).
      if (value === null || value === 'light' || value === 'dark') this.attrProblems.delete(name);
      else this.attrProblems.set(name, `${badAttr(name, "'light' or 'dark'", value)}; using the page's or system's theme`);
      this.#themeChanged();
    } else {
      if (name === 'label') this.#labelButtons();
      this.attributeChanged(name, value);
    }
  }

  /** Subclasses read their own attributes here. */
  protected attributeChanged(_name: string, _value: string | null): void {
    this.invalidate();
  }

  /** Gives the shadow root the theme's colours (light or dark, see paletteFor). */
  #applyTheme(): void {
    const theme = this.#theme = paletteFor(this);
    const ignored = this.#ignored;
    const style = styleFor(`${theme.dark ? 'dark' : 'light'} ${ignored.join(' ')}`, () => themeCSS(theme, ignored));
    if (style instanceof HTMLStyleElement) {
      if (this.#themeStyle) this.#themeStyle.replaceWith(style);
      else this.root.prepend(style);
      this.#themeStyle = style;
    } else this.root.adoptedStyleSheets = [this.#sheet!, style];
  }

  /**
   * The colours to draw with: the theme's, each overridden by the author's --attn-… as the
   * element's computed style has it (read at every render: a rule may apply or stop applying).
   * One that is no colour is ignored, in the shadow root's CSS too.
   */
  #readPalette(): void {
    if (!this.#theme) this.#applyTheme();
    const theme = this.#theme!;
    const css = getComputedStyle(this);
    const p: Palette = { ...theme };
    const ignored: string[] = [];
    for (const k of COLOURS) {
      const text = css.getPropertyValue(`--attn-${k}`).trim();
      const c = text ? concreteColour(text) : null;
      if (text && !c) ignored.push(k);
      p[k] = c ?? theme[k];
    }
    this.palette = p;
    if (ignored.join() !== this.#ignored.join()) {
      this.#ignored = ignored;
      this.#applyTheme();
    }
  }

  #themeChanged(): void {
    this.#applyTheme();
    this.invalidate();
  }

  /** Schedules one redraw (on the next animation frame with time to spare). */
  invalidate(): void {
    if (this.#raf || !this.isConnected) return;
    this.#raf = -1;
    schedule(this, () => {
      this.#raf = 0;
      if (this.isConnected) this.renderNow();
    });
  }

  /**
   * Draws now if a redraw is queued (the first, or one a setter asked for): for what is worked out
   * from the last render (a plot's geometry, the token picked), which must follow the data as set.
   */
  protected renderPending(): void {
    if (this.#raf) this.renderNow();
  }

  /**
   * Redraws at once (tests and exports call this to read a settled view). A render that throws
   * leaves its message in the widget, not a blank box and an uncaught error.
   */
  renderNow(): void {
    // The redraw a setter queued would draw this same view again (twice per update).
    if (this.#raf) {
      unschedule(this);
      this.#raf = 0;
    }
    this.#readPalette();
    const w = this.#width();
    this.#lastWidth = w;
    this.#lastFont = this.#fontPx();
    this.textScale = this.#lastFont / 13;
    try {
      this.render(w);
      if (this.#announceFrom) {
        this.announce(this.#announceFrom);
        this.#announceFrom = null;
      }
      this.#showFault(this.problems());
      this.bar.hidden = !this.canExport();
    } catch (e) {
      this.#showFault([errorText(e)]);
      this.bar.hidden = true;
    }
  }

  #width(): number {
    return Math.max(120, Math.round(this.clientWidth || 480));
  }

  #fontPx(): number {
    return parseFloat(getComputedStyle(this.frame).fontSize) || 13;
  }

  /** How wide `text` is drawn `px` high in the widget's font: for SVG text that must fit a width. */
  protected textWidth(text: string, px: number): number {
    ruler ??= document.createElement('canvas').getContext('2d');
    if (!ruler) return text.length * px * 0.6;
    ruler.font = `${px}px ${getComputedStyle(this.frame).fontFamily}`;
    return ruler.measureText(text).width;
  }

  protected emit<T>(type: string, detail: T): void {
    this.dispatchEvent(new CustomEvent<T>(type, { detail, bubbles: true, composed: true }));
  }

  /** The picture as a standalone SVG document (colours inlined, background filled). */
  toSVG(): string {
    this.renderPending();
    const svg = this.exportTarget();
    if (!svg) return '';
    const copy = svg.cloneNode(true) as SVGSVGElement;
    copy.setAttribute('xmlns', SVG_NS);
    copy.querySelectorAll('[data-no-export]').forEach((n) => n.remove());
    const vb = svg.viewBox.baseVal;
    const bg = s('rect', { x: vb.x, y: vb.y, width: vb.width, height: vb.height, fill: this.palette.bg });
    copy.insertBefore(bg, copy.firstChild);
    copy.setAttribute('font-family', 'system-ui, -apple-system, Segoe UI, Roboto, sans-serif');
    return new XMLSerializer().serializeToString(copy);
  }

  /** The picture as a PNG, `scale` pixels per CSS pixel. */
  async toPNG(scale = 2): Promise<Blob> {
    // 0 or NaN failed as 'toBlob failed'; a negative scale gave a 1 x 1 PNG.
    if (typeof scale !== 'number' || !(scale > 0 && scale < Infinity)) throw new Error(`${this.localName}.toPNG: scale: expected a number above 0, got ${shown(scale)}`);
    const text = this.toSVG();
    const svg = this.exportTarget();
    if (!svg) throw new Error(`${this.localName}.toPNG: nothing to export yet`);
    const vb = svg.viewBox.baseVal;
    const url = URL.createObjectURL(new Blob([text], { type: 'image/svg+xml' }));
    try {
      const img = new Image();
      img.width = vb.width;
      img.height = vb.height;
      img.src = url;
      await img.decode();
      const canvas = document.createElement('canvas');
      canvas.width = Math.ceil(vb.width * scale);
      canvas.height = Math.ceil(vb.height * scale);
      const ctx = canvas.getContext('2d')!;
      ctx.scale(scale, scale);
      ctx.drawImage(img, 0, 0, vb.width, vb.height);
      return await new Promise<Blob>((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b)
        : reject(new Error(`${this.localName}.toPNG: the browser could not make a ${canvas.width} x ${canvas.height} px PNG (scale ${scale}); a smaller scale may do`))), 'image/png'));
    } finally {
      URL.revokeObjectURL(url);
    }
  }

  /** Saves the picture as a file: `${filename}.svg` or `.png`. */
  async download(kind: 'svg' | 'png', filename = this.getAttribute('filename') ?? this.localName): Promise<void> {
    // 'jpg' saved PNG bytes as a .jpg.
    if (kind !== 'svg' && kind !== 'png') throw new Error(`${this.localName}.download: kind: expected 'svg' or 'png', got ${shown(kind)}`);
    const text = this.toSVG();
    // An empty widget downloaded a 0-byte .svg.
    if (!text) throw new Error(`${this.localName}.download: nothing to export yet`);
    const blob = kind === 'svg' ? new Blob([text], { type: 'image/svg+xml' }) : await this.toPNG();
    const url = URL.createObjectURL(blob);
    const a = document.createElement('a');
    a.href = url;
    a.download = `${filename}.${kind}`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }
}

/** A value as an error message quotes it: 'jpg', 0, NaN, undefined, {"row":9,"col":0}. */
function shown(x: unknown): string {
  if (typeof x === 'string') return `'${x}'`;
  if (typeof x === 'function') return 'a function';
  if (typeof x !== 'object' || x === null) return String(x);
  let json: string | undefined;
  try {
    json = JSON.stringify(x);
  } catch {
    // A cycle: its kind will do.
  }
  json ??= Object.prototype.toString.call(x);
  return json.length > 60 ? `${json.slice(0, 59)}…` : json;
}

/**
 * The Error a widget's property or method throws for a bad argument, naming the call:
 * `attn-heatmap.pinned: expected …, got {"row":99,"col":0}`. The widget keeps what it had.
 */
export function badArg(el: Element, call: string, expected: string, got: unknown): Error {
  return new Error(`${el.localName}.${call}: expected ${expected}, got ${shown(got)}`);
}

/**
 * Labels (`name`, `got` of them) for the `n` rows or columns (`what`) of the data, named when the
 * counts differ, with what is drawn: the ones past the data are not shown; those missing, `missing`.
 */
export function labelCountFault(name: string, got: number, n: number, what: string, missing: string): string | null {
  if (got === n) return null;
  return `${name}: expected ${n} labels (one per ${what} of data), got ${got}; ${got < n ? `the ${what}s without one are ${missing}` : 'the rest are not shown'}`;
}

/** Labels given to a property: a list (each made a string) or null; anything else is refused. */
export function labelsArg(el: Element, call: string, l: unknown): string[] | null {
  if (l === null || l === undefined) return null;
  if (!Array.isArray(l)) throw badArg(el, call, 'null or an array of strings', l);
  return l.map(String);
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Registers a custom element once (a second bundle on the same page must not throw). */
export function define(name: string, ctor: CustomElementConstructor): void {
  if (typeof customElements !== 'undefined' && !customElements.get(name)) customElements.define(name, ctor);
}
