// <attn-head-view>: tokens on two sides, a line from each query token (left) to each key token
// (right) weighted by attention, one colour per head. Click a head to toggle it, double-click
// (or Shift+Enter) to show it alone. Hover or arrow keys pick a token to show only its lines.
// Long inputs (more than COMPACT tokens a side, up to a 512-token model's) get a compact layout:
// rows a few pixels tall in a scrolling box, every k-th label (the picked token's always, in
// full in the readout), and the lines on a canvas, the strongest few per query token and head
// until a token is picked. At 512 tokens the plain layout was 11,000 px tall.
import { AttnElement, badArg, badAttr, count as countOf, cycle, define, fmt, h, jsonAttr, labelsArg, labelsAttr, langTag, numberAttr, s } from './base.js';
import { ATTENTION_ATTRIBUTES, AttributeFault, attentionFollower, namesAttention, type SentenceAttention } from './lib.js';
import { headsProblem, toMatrices, type TensorLike } from './matrix.js';

/** Tokens a side beyond which the layout is compact. */
const COMPACT = 64;
/** Compact layout without a picked token: lines per query token and head, the strongest. */
const TOP_LINES = 2;

export class AttnHeadView extends AttnElement {
  static get observedAttributes(): string[] {
    return [...super.observedAttributes, 'data', 'tokens', 'left-tokens', 'right-tokens', 'label', 'threshold', 'layer', 'heads', 'left-lang', 'right-lang', ...ATTENTION_ATTRIBUTES];
  }

  #heads: number[][][] = [];
  #left: string[] | null = null;
  #right: string[] | null = null;
  #active: boolean[] = [];
  #focus: { side: 'left' | 'right'; index: number } | null = null;
  #svg: SVGSVGElement | null = null;
  #buttons: HTMLDivElement;
  #plot: HTMLDivElement;
  #readout: HTMLDivElement;
  #lines = 0;
  #canvas: HTMLCanvasElement | null = null;
  /** The last render's geometry, for the pointer over rows without a label. */
  #geom = { rowH: 22, W: 0, n: 0, compact: false };
  #sentence: SentenceAttention | null = null;
  /** What is wrong with the attention given (attribute or property); '' when nothing is. */
  #dataProblem = '';
  /**
   * What the model/src + text attributes came to, shown in the readout until they change: written
   * straight into it, it was gone at the next render (a hover, a resize).
   */
  #modelStatus = '';
  /** model/src + text attributes: the shipped Transformer's attention on that sentence. */
  #follow = attentionFollower(this, this.attrProblems, (a) => {
    this.#sentence = a;
    this.#modelStatus = '';
    this.#showLayer();
    this.emit<SentenceAttention>('attn-loaded', a);
  }, (e) => {
    // An attribute's fault is named under the widget (an alert) with the others; a failed load stays in the readout.
    if (e instanceof AttributeFault) {
      this.attrProblems.set(e.attribute, e.message);
      this.#modelStatus = '';
    } else {
      this.#modelStatus = e.message;
      this.announce(e.message);
    }
    this.invalidate();
  });

  constructor() {
    super();
    this.#buttons = h('div', { className: 'heads', role: 'group', 'aria-label': 'Heads' });
    this.#plot = h('div', { className: 'plot', tabIndex: 0, role: 'application', 'aria-roledescription': 'head view' });
    // Not live: every render rewrites it. What a key or a head button changed is announced.
    this.#readout = h('div', { className: 'readout' });
    this.frame.append(this.#buttons, this.#plot, this.#readout);
    this.#plot.addEventListener('pointermove', (e) => {
      const t = (e.target as Element).closest?.('[data-side]');
      const f = t ? { side: t.getAttribute('data-side') as 'left' | 'right', index: Number(t.getAttribute('data-index')) } : this.#rowAt(e);
      if (f?.side !== this.#focus?.side || f?.index !== this.#focus?.index) {
        this.#focus = f;
        this.invalidate();
      }
    });
    this.#plot.addEventListener('pointerleave', () => {
      this.#focus = null;
      this.invalidate();
    });
    this.#plot.addEventListener('keydown', (e) => this.#key(e));
  }

  protected css(): string {
    return `.heads { display: flex; flex-wrap: wrap; gap: 4px; margin-bottom: 6px; align-items: center; }
.heads button { display: inline-flex; align-items: center; gap: 4px; }
.heads button .sw { width: calc(10em / 11); height: calc(10em / 11); border-radius: 2px; display: inline-block; }
/* Forced colours (Windows contrast themes) blank a background, and the swatch is the only key
   from a head to its lines' colour, which the SVG keeps. */
.heads button .sw { forced-color-adjust: none; }
.heads button[aria-pressed="false"] { opacity: 0.6; text-decoration: line-through; }
.plot { outline: none; border-radius: 4px; }
.plot:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.plot.compact { max-height: 640px; overflow-y: auto; }
.stack { position: relative; }
.stack canvas, .stack svg { position: absolute; left: 0; top: 0; }`;
  }

  /** Attention per head: [H, L, S] tensor or nested arrays ([L, S] is one head). */
  set data(t: TensorLike | number[][][] | number[][] | null) {
    const heads = Array.isArray(t) && Array.isArray(t[0]) && !Array.isArray((t as number[][][])[0][0]) ? [t as number[][]] : t;
    const problem = headsProblem(heads);
    this.#dataProblem = problem && `data: ${problem}`;
    const mats = problem ? [] : toMatrices(heads as TensorLike | number[][][] | null);
    const keep = this.#active.length === mats.length;
    this.#heads = mats;
    if (!keep) this.#active = this.#headsFromAttribute();
    this.#buildButtons();
    this.invalidate();
  }
  get data(): number[][][] {
    return this.#heads;
  }

  /** Query tokens (left). */
  set leftTokens(t: string[] | null) { this.#left = labelsArg(this, 'leftTokens', t); this.invalidate(); }
  get leftTokens(): string[] { return this.#left ?? (this.#heads[0] ?? []).map((_, i) => String(i)); }
  /** Key tokens (right); defaults to the left tokens (self-attention). */
  set rightTokens(t: string[] | null) { this.#right = labelsArg(this, 'rightTokens', t); this.invalidate(); }
  get rightTokens(): string[] { return this.#right ?? this.#left ?? (this.#heads[0]?.[0] ?? []).map((_, j) => String(j)); }
  /** Both sides at once (self-attention). */
  set tokens(t: string[] | null) { this.#left = labelsArg(this, 'tokens', t); this.#right = null; this.invalidate(); }

  /** Indices of the heads shown. */
  get activeHeads(): number[] {
    return this.#active.flatMap((a, i) => (a ? [i] : []));
  }
  set activeHeads(list: number[]) {
    // 'x' or [99] showed no head, without a word.
    if (!Array.isArray(list) || !list.every((i) => this.#isHead(i))) throw badArg(this, 'activeHeads', this.#headsExpected('an array of head indices'), list);
    this.#active = this.#heads.map((_, i) => list.includes(i));
    this.#syncButtons();
    this.invalidate();
  }

  /**
   * The heads shown, 1-based, as the `heads` attribute names them; setting it sets the attribute
   * (null removes it: every head). README's widget table lists it as a property too, which did nothing.
   */
  get heads(): number[] {
    return this.activeHeads.map((i) => i + 1);
  }
  set heads(list: number[] | null) {
    if (list === null || list === undefined) this.removeAttribute('heads');
    else {
      // Before the data any head number is taken, as the attribute is; once it is there, one of its heads.
      const H = this.#heads.length;
      const ok = (x: unknown) => Number.isInteger(x) && (x as number) >= 1 && (!H || (x as number) <= H);
      if (!Array.isArray(list) || !list.every(ok)) throw badArg(this, 'heads', `null or an array of head numbers${H ? ` from 1 to ${H}` : ''} (1-based)`, list);
      this.setAttribute('heads', list.join(' '));
    }
    // The attribute may already say so while heads were toggled since: it would not change, nor they.
    this.#applyHeadsAttribute();
  }

  /** The weakest line drawn: the `threshold` attribute's, default 0.01; setting it sets the attribute (null removes it). */
  get threshold(): number {
    return this.#threshold().value;
  }
  set threshold(t: number | null) {
    if (t === null || t === undefined) {
      this.removeAttribute('threshold');
      return;
    }
    if (typeof t !== 'number' || !(t >= 0 && t <= 1)) throw badArg(this, 'threshold', 'null or a number from 0 to 1', t);
    this.setAttribute('threshold', String(t));
  }

  #applyHeadsAttribute(): void {
    this.#active = this.#headsFromAttribute();
    this.#syncButtons();
    this.invalidate();
  }

  /**
   * The heads the `heads` attribute names (1-based, e.g. "1 3", as an embed recipe writes the
   * heads chosen on the site), else all. A number that is no head here is left out, and said so.
   */
  #headsFromAttribute(): boolean[] {
    const attr = this.getAttribute('heads');
    this.attrProblems.delete('heads');
    if (attr === null || !this.#heads.length) return this.#heads.map(() => true);
    const words = attr.split(/[\s,]+/).filter(Boolean);
    const H = this.#heads.length;
    const bad = words.filter((w) => !/^\d+$/.test(w) || Number(w) < 1 || Number(w) > H);
    const shown = new Set(words.filter((w) => !bad.includes(w)).map((w) => Number(w) - 1));
    // Named under the widget, as every attribute is: it sat in the readout, where a hover hid it.
    if (bad.length) {
      this.attrProblems.set('heads', `${badAttr('heads', `head numbers from 1 to ${H}`, bad.join(' '))}; showing ${shown.size ? `head${shown.size > 1 ? 's' : ''} ${[...shown].map((i) => i + 1).join(' ')}` : 'every head'}`);
    }
    return this.#heads.map((_, i) => shown.size === 0 || shown.has(i));
  }

  /** Lines drawn in the last render. */
  get lineCount(): number {
    return this.#lines;
  }

  /** The vertical centre of token i's row in the plot, in CSS pixels from its top. */
  rowCenter(i: number): number {
    return 6 + i * this.#geom.rowH + this.#geom.rowH / 2;
  }

  /** In the compact layout, the token under the pointer by its row (labels are thinned there). */
  #rowAt(e: PointerEvent): { side: 'left' | 'right'; index: number } | null {
    const g = this.#geom, svg = this.#svg;
    if (!g.compact || !svg || !g.n) return null;
    const r = svg.getBoundingClientRect();
    const index = Math.floor((e.clientY - r.top - 6) / g.rowH);
    if (index < 0 || index >= g.n) return null;
    const side = e.clientX - r.left < g.W / 2 ? 'left' : 'right';
    return index < (side === 'left' ? this.leftTokens : this.rightTokens).length ? { side, index } : null;
  }

  /** The `layer` attribute's layer (1-based; default the last) of the sentence's attention. */
  #showLayer(): void {
    const a = this.#sentence;
    if (!a) return;
    const n = a.layers.length;
    // layer="abc" or "99" silently showed the last layer.
    const r = numberAttr(this, 'layer', n, `a layer number from 1 to ${n}`, (x) => Number.isInteger(x) && x >= 1 && x <= n);
    if (r.problem) this.attrProblems.set('layer', r.problem);
    else this.attrProblems.delete('layer');
    const layer = r.value;
    this.data = a.layers[layer - 1];
    this.leftTokens = a.queries;
    this.rightTokens = a.keys;
  }

  protected attributeChanged(name: string, value: string | null): void {
    if (ATTENTION_ATTRIBUTES.includes(name)) {
      this.#modelStatus = namesAttention(this) ? 'Loading the model…' : '';
      this.#follow();
      this.invalidate();
    }
    else if (name === 'layer') this.#showLayer();
    else if (name === 'heads') this.#applyHeadsAttribute();
    else if (name === 'data') this.data = jsonAttr<number[][][]>(this, 'data', this.attrProblems) ?? null;
    else if (name === 'tokens') this.tokens = labelsAttr(this, 'tokens', this.attrProblems) ?? null;
    else if (name === 'left-tokens') this.leftTokens = labelsAttr(this, 'left-tokens', this.attrProblems) ?? null;
    else if (name === 'right-tokens') this.rightTokens = labelsAttr(this, 'right-tokens', this.attrProblems) ?? null;
    else {
      if (name === 'left-lang' || name === 'right-lang') {
        if (value === null || langTag(value)) this.attrProblems.delete(name);
        else this.attrProblems.set(name, `${badAttr(name, "a language tag such as 'fr' or 'en-GB'", value)}; using the page's`);
      }
      this.invalidate();
    }
  }

  /**
   * A side's tokens' language: its attribute's (the keys default to the queries', as their
   * tokens do), else the loaded model's (model/src + text), else null (the page's).
   */
  #lang(side: 'left' | 'right'): string | null {
    const own = this.getAttribute(`${side}-lang`) ?? (side === 'right' ? this.getAttribute('left-lang') : null);
    if (own !== null) return langTag(own);
    return langTag(side === 'left' ? this.#sentence?.queryLang : this.#sentence?.keyLang);
  }

  /** Whether `i` is a head's index (0-based). */
  #isHead(i: unknown): boolean {
    return Number.isInteger(i) && (i as number) >= 0 && (i as number) < this.#heads.length;
  }

  #headsExpected(what: string): string {
    return this.#heads.length ? `${what} from 0 to ${this.#heads.length - 1} (0-based)` : `${what} (there is no data yet)`;
  }

  toggleHead(i: number): void {
    if (!this.#isHead(i)) throw badArg(this, 'toggleHead', this.#headsExpected('a head index'), i);
    this.#active[i] = !this.#active[i];
    this.#changed();
  }

  soloHead(i: number): void {
    if (!this.#isHead(i)) throw badArg(this, 'soloHead', this.#headsExpected('a head index'), i);
    const alone = this.#active.every((a, k) => a === (k === i));
    this.#active = this.#heads.map((_, k) => (alone ? true : k === i));
    this.#changed();
  }

  #changed(): void {
    this.#syncButtons();
    this.announceAfterRender(this.#readout);
    this.invalidate();
    this.emit<{ active: number[] }>('attn-heads', { active: this.activeHeads });
  }

  #buildButtons(): void {
    const p = this.palette;
    // Kept while the number of heads stays: new data for the same heads (each token a model
    // generates) replaced them, and dropped a keyboard user's focus on one to the page.
    if (this.#heads.length > 1 && this.#buttons.querySelectorAll('button[data-head]').length === this.#heads.length) {
      if (p) this.#syncButtons();
      return;
    }
    this.#buttons.replaceChildren(...(this.#heads.length > 1 ? [h('span', { className: 'readout', textContent: 'Heads:' })] : []));
    if (this.#heads.length <= 1) return;
    this.#heads.forEach((_, i) => {
      const b = h('button', { type: 'button', title: 'Click: show or hide. Double-click or Shift+Enter: this head alone.' },
        h('span', { className: 'sw', 'aria-hidden': 'true' }), `${i + 1}`);
      b.setAttribute('aria-label', `Head ${i + 1}`);
      b.dataset.head = String(i);
      b.addEventListener('click', (e) => {
        if (e.detail === 2) return; // the second click of a double-click: dblclick handles it
        this.toggleHead(i);
      });
      b.addEventListener('dblclick', () => this.soloHead(i));
      b.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' && e.shiftKey) {
          e.preventDefault();
          this.soloHead(i);
        }
      });
      this.#buttons.append(b);
    });
    if (p) this.#syncButtons();
  }

  #syncButtons(): void {
    const p = this.palette;
    this.#buttons.querySelectorAll<HTMLButtonElement>('button[data-head]').forEach((b) => {
      const i = Number(b.dataset.head);
      b.setAttribute('aria-pressed', String(Boolean(this.#active[i])));
      const sw = b.querySelector<HTMLElement>('.sw');
      if (sw && p) sw.style.background = p.heads[i % p.heads.length];
    });
  }

  // Not exportTarget(): after every render that would copy the compact layout's canvas.
  protected canExport(): boolean {
    return this.#svg !== null && this.#heads.length > 0;
  }

  protected defaultLabel(): string {
    return 'Attention head view';
  }

  protected exportTarget(): SVGSVGElement | null {
    // The compact layout's lines are on a canvas: exported as an image under the labels.
    const img = this.#svg?.querySelector('image[data-lines]');
    if (img && this.#canvas) img.setAttribute('href', this.#canvas.toDataURL());
    return this.#svg;
  }

  protected problems(): string[] {
    const out = [...super.problems(), ...(this.#dataProblem ? [this.#dataProblem] : [])];
    const rows = this.#heads[0]?.length ?? 0, cols = this.#heads[0]?.[0]?.length ?? 0;
    // Lines went to rows with no label, and nothing said why.
    if (this.#left && rows && this.#left.length !== rows) out.push(badAttr('tokens', `${rows} query tokens (one per row of data)`, `${this.#left.length}`));
    if (this.#right && cols && this.#right.length !== cols) out.push(badAttr('right-tokens', `${cols} key tokens (one per column of data)`, `${this.#right.length}`));
    const t = this.#threshold();
    if (t.problem) out.push(t.problem);
    return out;
  }

  #threshold(): { value: number; problem: string } {
    return numberAttr(this, 'threshold', 0.01, 'a number from 0 to 1', (x) => x >= 0 && x <= 1);
  }

  /** Query rows and key columns that have both a token and data. */
  #extent(): [number, number] {
    return [Math.min(this.leftTokens.length, this.#heads[0]?.length ?? 0), Math.min(this.rightTokens.length, this.#heads[0]?.[0]?.length ?? 0)];
  }

  protected render(width: number): void {
    this.#syncButtons();
    const p = this.palette;
    const L = this.leftTokens;
    const R = this.rightTokens;
    // A token picked before the data or tokens shrank read "query “undefined” … (NaN)".
    const f = this.#focus;
    if (f && f.index >= this.#extent()[f.side === 'left' ? 0 : 1]) this.#focus = null;
    const label = this.getAttribute('label') ?? this.defaultLabel();
    this.#plot.setAttribute('aria-label', `${label}: ${countOf(L.length, 'query token')} on the left, ${countOf(R.length, 'key token')} on the right. Up and down arrows pick a query token (Page Up and Page Down: 10 at a time, Home and End: the first and last), left and right arrows switch between query and key tokens; Escape shows all.`);
    const n = Math.max(L.length, R.length);
    const compact = n > COMPACT;
    const k = this.textScale;
    const rowH = compact ? Math.max(4, Math.min(22, Math.floor(1600 / n))) : 22 * k;
    const step = compact ? Math.ceil(13 * k / rowH) : 1;  // every step-th label
    const H = n * rowH + 12;
    const textW = k * Math.min(150, Math.max(40, 7.2 * Math.max(1, ...L.map((t) => t.length), ...R.map((t) => t.length)) + 10));
    const W = Math.max(260, Math.min(width, 560 * k));
    this.#geom = { rowH, W, n, compact };
    const xl = textW;
    const xr = W - textW;
    const yl = (i: number) => this.rowCenter(i);
    const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': label });
    svg.append(s('title', {}, label));
    const active = this.activeHeads;
    const threshold = this.#threshold().value;
    let count = 0;
    const focus = this.#focus;
    // Each line: query i -> key j of head hd with weight w.
    const each = (draw: (hd: number, color: string, i: number, j: number, w: number) => void) => {
      for (const hd of active) {
        const m = this.#heads[hd];
        const color = p.heads[hd % p.heads.length];
        for (let i = 0; i < m.length; i++) {
          if (focus?.side === 'left' && focus.index !== i) continue;
          const row = m[i] ?? [];
          if (compact && !focus) {
            for (const j of strongest(row, TOP_LINES, threshold)) draw(hd, color, i, j, row[j]);
            continue;
          }
          for (let j = 0; j < row.length; j++) {
            if (focus?.side === 'right' && focus.index !== j) continue;
            if (row[j] > threshold) draw(hd, color, i, j, row[j]);
          }
        }
      }
    };
    const opacity = (w: number) => Math.min(1, w * (focus ? 1.2 : 0.9) / Math.sqrt(active.length));
    let stack: HTMLDivElement | null = null;
    if (compact) {
      // Lines on a canvas under the labels' SVG: thousands of SVG lines made every hover slow.
      const dpr = Math.min(2, globalThis.devicePixelRatio || 1);
      const canvas = this.#canvas ?? h('canvas', { 'aria-hidden': 'true' });
      this.#canvas = canvas;
      canvas.width = Math.ceil(W * dpr);
      canvas.height = Math.ceil(H * dpr);
      canvas.style.width = `${W}px`;
      canvas.style.height = `${H}px`;
      const ctx = canvas.getContext('2d')!;
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, W, H);
      ctx.lineCap = 'round';
      each((_, color, i, j, w) => {
        count++;
        ctx.strokeStyle = color;
        ctx.globalAlpha = opacity(w);
        ctx.lineWidth = 0.5 + 2 * w;
        ctx.beginPath();
        ctx.moveTo(xl + 4, yl(i));
        ctx.lineTo(xr - 4, yl(j));
        ctx.stroke();
      });
      svg.append(s('image', { 'data-lines': '', x: 0, y: 0, width: W, height: H, preserveAspectRatio: 'none' }));
      stack = h('div', { className: 'stack' });
      stack.style.width = `${W}px`;
      stack.style.height = `${H}px`;
    } else {
      this.#canvas = null;
      const lines = s('g', { 'stroke-linecap': 'round' });
      each((_, color, i, j, w) => {
        count++;
        lines.append(s('line', {
          x1: xl + 4, y1: yl(i), x2: xr - 4, y2: yl(j), stroke: color,
          'stroke-width': (1 + 3 * w).toFixed(2), 'stroke-opacity': opacity(w).toFixed(3),
        }));
      });
      svg.append(lines);
    }
    this.#lines = count;
    const text = s('g', { 'font-size': (compact ? 11 : 13) * k, fill: p.fg });
    // A side's labels: every step-th, and the picked token's always (backed, in the compact layout,
    // so it reads over the lines), in the side's language (a screen reader's voice).
    const labels = (side: 'left' | 'right', tokens: string[], x: number, anchor: 'end' | undefined, back: [number, number]) => {
      const g = text.appendChild(s('g', { lang: this.#lang(side) }));
      tokens.forEach((t, i) => {
        const picked = focus?.side === side && focus.index === i;
        if (i % step !== 0 && !picked) return;
        if (compact && picked) g.append(s('rect', { x: back[0], y: yl(i) - 8 * k, width: back[1], height: 16 * k, fill: p.bg, 'fill-opacity': 0.9 }));
        g.append(s('text', {
          x, y: yl(i) + 4 * k, 'text-anchor': anchor, 'data-side': side, 'data-index': i,
          'font-weight': picked ? 'bold' : undefined,
        }, t));
      });
    };
    labels('left', L, xl - 6, 'end', [0, xl - 2]);
    labels('right', R, xr + 6, undefined, [xr + 2, W - xr - 2]);
    svg.append(text);
    this.#svg = svg;
    this.#plot.classList.toggle('compact', compact);
    if (stack && this.#canvas) {
      stack.append(this.#canvas, svg);
      this.#plot.replaceChildren(stack);
      // Keep the picked token's row in view as the arrow keys move it.
      if (focus) {
        const y = yl(focus.index), top = this.#plot.scrollTop, vis = this.#plot.clientHeight;
        if (vis && (y < top + 20 || y > top + vis - 20)) this.#plot.scrollTop = Math.max(0, y - vis / 2);
      }
    } else {
      this.#plot.replaceChildren(svg);
    }
    if (this.#modelStatus) {
      this.#readout.textContent = this.#modelStatus;
    } else if (focus && this.#heads.length) {
      // The tokens in their languages, as the labels are: the announcement is a copy of this.
      const word = (w: string, lang: string | null) => (lang ? h('span', { lang, textContent: w }) : w);
      const other = this.#lang(focus.side === 'left' ? 'right' : 'left');
      const parts = active.slice(0, 4).flatMap((hd, n) => {
        const m = this.#heads[hd];
        const row = focus.side === 'left' ? m[focus.index] ?? [] : m.map((r) => r[focus.index]);
        const names = focus.side === 'left' ? R : L;
        const best = row.reduce((b, v, k) => (v > row[b] ? k : b), 0);
        return [`${n ? '; ' : ''}head ${hd + 1}: `, word(names[best] ?? String(best), other), ` (${fmt(row[best] ?? NaN, 2)})`];
      });
      const tok = (focus.side === 'left' ? L : R)[focus.index];
      this.#readout.replaceChildren(`${focus.side === 'left' ? 'query' : 'key'} “`, word(tok, this.#lang(focus.side)),
        `” — strongest ${focus.side === 'left' ? 'key' : 'query'} per head: `, ...parts);
    } else {
      this.#readout.textContent = `${active.length} of ${this.#heads.length} heads shown, ${count} lines above ${threshold}` +
        (compact ? ` (the strongest ${TOP_LINES} per query token and head; hover or use the arrow keys for all of one token's).` : '.');
    }
  }

  #key(e: KeyboardEvent): void {
    // Render drops a picked token the data no longer has: right after the data shrank, a key
    // moved on from it (the fifth of five, then three: down went to the third, not the first).
    this.renderPending();
    const [nq, nk] = this.#extent();
    // Up and down move on the side picked; left and right pick a side (the key tokens were
    // reachable only by hovering them).
    const side = this.#focus?.side ?? 'left';
    const n = side === 'left' ? nq : nk;
    if (!n) return;
    const moves: Record<string, number> = { ArrowDown: 1, ArrowUp: -1, PageDown: 10, PageUp: -10 };
    if (e.key in moves) {
      const cur = this.#focus ? this.#focus.index : -1;
      const d = moves[e.key];
      const next = d === 1 || d === -1 ? cycle(cur, d, n) : Math.max(0, Math.min(n - 1, (cur < 0 ? 0 : cur) + d));
      this.#focus = { side, index: next };
    } else if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
      const to = e.key === 'ArrowLeft' ? 'left' : 'right';
      const m = to === 'left' ? nq : nk;
      if (!m) return;
      this.#focus = { side: to, index: Math.min(this.#focus?.index ?? 0, m - 1) };
    } else if (e.key === 'Home' || e.key === 'End') {
      this.#focus = { side, index: e.key === 'Home' ? 0 : n - 1 };
    } else if (e.key === 'Escape') this.#focus = null;
    else if (/^Digit[1-9]$/.test(e.code) && Number(e.code.slice(5)) <= this.#heads.length) {
      const k = Number(e.code.slice(5));
      if (e.shiftKey) this.soloHead(k - 1);
      else this.toggleHead(k - 1);
    } else return;
    e.preventDefault();
    this.announceAfterRender(this.#readout);
    this.invalidate();
  }
}

/** Indices of the k largest entries of row above threshold, largest first. */
function strongest(row: number[], k: number, threshold: number): number[] {
  const best: number[] = [];
  for (let j = 0; j < row.length; j++) {
    if (!(row[j] > threshold)) continue;
    let at = best.length;
    while (at > 0 && row[best[at - 1]] < row[j]) at--;
    if (at < k) {
      best.splice(at, 0, j);
      if (best.length > k) best.pop();
    }
  }
  return best;
}

define('attn-head-view', AttnHeadView);

declare global {
  interface HTMLElementTagNameMap {
    'attn-head-view': AttnHeadView;
  }
}
