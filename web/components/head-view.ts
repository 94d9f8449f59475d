// <attn-head-view>: tokens on two sides, a line from each query token (left) to each key token
// (right) weighted by attention, one colour per head. Click a head to toggle it, double-click
// (or Shift+Enter) to show it alone. Hover or arrow keys pick a token to show only its lines.
import { AttnElement, define, fmt, h, jsonAttr, labelsAttr, s } from './base.js';
import { ATTENTION_ATTRIBUTES, attentionFollower, type SentenceAttention } from './lib.js';
import { toMatrices, type TensorLike } from './matrix.js';

export class AttnHeadView extends AttnElement {
  static get observedAttributes(): string[] {
    return [...super.observedAttributes, 'data', 'tokens', 'left-tokens', 'right-tokens', 'label', 'threshold', 'layer', 'heads', ...ATTENTION_ATTRIBUTES];
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
  #sentence: SentenceAttention | null = null;
  /** What is wrong with the `heads` attribute, shown in the readout; '' when nothing is. */
  #headsProblem = '';
  /** model/src + text attributes: the shipped Transformer's attention on that sentence. */
  #follow = attentionFollower(this, (a) => {
    this.#sentence = a;
    this.#showLayer();
    this.emit<SentenceAttention>('attn-loaded', a);
  }, (e) => (this.#readout.textContent = e.message));

  constructor() {
    super();
    this.#buttons = h('div', { className: 'heads', role: 'group', 'aria-label': 'Heads' });
    this.#plot = h('div', { className: 'plot', tabIndex: 0, role: 'application', 'aria-roledescription': 'head view' });
    this.#readout = h('div', { className: 'readout', 'aria-live': 'polite' });
    this.frame.append(this.#buttons, this.#plot, this.#readout);
    this.#plot.addEventListener('pointermove', (e) => {
      const t = (e.target as Element).closest?.('[data-side]');
      const f = t ? { side: t.getAttribute('data-side') as 'left' | 'right', index: Number(t.getAttribute('data-index')) } : null;
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
.heads button .sw { width: 10px; height: 10px; border-radius: 2px; display: inline-block; }
.heads button[aria-pressed="false"] { opacity: 0.6; text-decoration: line-through; }
.plot { outline: none; border-radius: 4px; }
.plot:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }`;
  }

  /** Attention per head: [H, L, S] tensor or nested arrays ([L, S] is one head). */
  set data(t: TensorLike | number[][][] | number[][] | null) {
    const mats = Array.isArray(t) && Array.isArray(t[0]) && !Array.isArray((t as number[][][])[0][0])
      ? [t as number[][]]
      : toMatrices(t as TensorLike | number[][][] | null);
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
  set leftTokens(t: string[] | null) { this.#left = t; this.invalidate(); }
  get leftTokens(): string[] { return this.#left ?? (this.#heads[0] ?? []).map((_, i) => String(i)); }
  /** Key tokens (right); defaults to the left tokens (self-attention). */
  set rightTokens(t: string[] | null) { this.#right = t; this.invalidate(); }
  get rightTokens(): string[] { return this.#right ?? this.#left ?? (this.#heads[0]?.[0] ?? []).map((_, j) => String(j)); }
  /** Both sides at once (self-attention). */
  set tokens(t: string[] | null) { this.#left = t; this.#right = null; this.invalidate(); }

  /** Indices of the heads shown. */
  get activeHeads(): number[] {
    return this.#active.flatMap((a, i) => (a ? [i] : []));
  }
  set activeHeads(list: number[]) {
    this.#active = this.#heads.map((_, i) => list.includes(i));
    this.#syncButtons();
    this.invalidate();
  }

  /**
   * The heads the `heads` attribute names (1-based, e.g. "1 3", as an embed recipe writes the
   * heads chosen on the site), else all. A number that is no head here is left out, and said so.
   */
  #headsFromAttribute(): boolean[] {
    const attr = this.getAttribute('heads');
    this.#headsProblem = '';
    if (attr === null || !this.#heads.length) return this.#heads.map(() => true);
    const words = attr.split(/[\s,]+/).filter(Boolean);
    const H = this.#heads.length;
    const bad = words.filter((w) => !/^\d+$/.test(w) || Number(w) < 1 || Number(w) > H);
    if (bad.length) this.#headsProblem = `${this.localName}: the heads attribute: expected head numbers from 1 to ${H}, got '${bad.join(' ')}'. `;
    const shown = new Set(words.filter((w) => !bad.includes(w)).map((w) => Number(w) - 1));
    return this.#heads.map((_, i) => shown.size === 0 || shown.has(i));
  }

  /** Lines drawn in the last render. */
  get lineCount(): number {
    return this.#lines;
  }

  /** The `layer` attribute's layer (1-based; default the last) of the sentence's attention. */
  #showLayer(): void {
    const a = this.#sentence;
    if (!a) return;
    const n = a.layers.length;
    const layer = Math.max(1, Math.min(n, Math.round(Number(this.getAttribute('layer') ?? n)) || n));
    this.data = a.layers[layer - 1];
    this.leftTokens = a.queries;
    this.rightTokens = a.keys;
  }

  protected attributeChanged(name: string): void {
    if (ATTENTION_ATTRIBUTES.includes(name)) this.#follow();
    else if (name === 'layer') this.#showLayer();
    else if (name === 'heads') {
      this.#active = this.#headsFromAttribute();
      this.#syncButtons();
      this.invalidate();
    }
    else if (name === 'data') this.data = jsonAttr<number[][][]>(this, 'data') ?? null;
    else if (name === 'tokens') this.tokens = labelsAttr(this, 'tokens') ?? null;
    else if (name === 'left-tokens') this.leftTokens = labelsAttr(this, 'left-tokens') ?? null;
    else if (name === 'right-tokens') this.rightTokens = labelsAttr(this, 'right-tokens') ?? null;
    else this.invalidate();
  }

  toggleHead(i: number): void {
    this.#active[i] = !this.#active[i];
    this.#changed();
  }

  soloHead(i: number): void {
    const alone = this.#active.every((a, k) => a === (k === i));
    this.#active = this.#heads.map((_, k) => (alone ? true : k === i));
    this.#changed();
  }

  #changed(): void {
    this.#syncButtons();
    this.invalidate();
    this.emit<{ active: number[] }>('attn-heads', { active: this.activeHeads });
  }

  #buildButtons(): void {
    const p = this.palette;
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

  protected exportTarget(): SVGSVGElement | null {
    return this.#svg;
  }

  protected render(width: number): void {
    this.#syncButtons();
    const p = this.palette;
    const L = this.leftTokens;
    const R = this.rightTokens;
    const label = this.getAttribute('label') ?? 'Attention head view';
    this.#plot.setAttribute('aria-label', `${label}: ${L.length} query tokens on the left, ${R.length} key tokens on the right. Up and down arrows pick a query token; Escape shows all.`);
    const rowH = 22;
    const n = Math.max(L.length, R.length);
    const H = n * rowH + 12;
    const textW = Math.min(150, Math.max(40, 7.2 * Math.max(1, ...L.map((t) => t.length), ...R.map((t) => t.length)) + 10));
    const W = Math.max(260, Math.min(width, 560));
    const xl = textW;
    const xr = W - textW;
    const yl = (i: number) => 6 + i * rowH + rowH / 2;
    const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': label });
    svg.append(s('title', {}, label));
    const active = this.activeHeads;
    const threshold = Number(this.getAttribute('threshold') ?? 0.01);
    const lines = s('g', { 'stroke-linecap': 'round' });
    let count = 0;
    const focus = this.#focus;
    for (const hd of active) {
      const m = this.#heads[hd];
      const color = p.heads[hd % p.heads.length];
      for (let i = 0; i < m.length; i++) {
        if (focus?.side === 'left' && focus.index !== i) continue;
        for (let j = 0; j < (m[i]?.length ?? 0); j++) {
          if (focus?.side === 'right' && focus.index !== j) continue;
          const w = m[i][j];
          if (!(w > threshold)) continue;
          count++;
          lines.append(s('line', {
            x1: xl + 4, y1: yl(i), x2: xr - 4, y2: yl(j), stroke: color,
            'stroke-width': (1 + 3 * w).toFixed(2), 'stroke-opacity': Math.min(1, w * (focus ? 1.2 : 0.9) / Math.sqrt(active.length)).toFixed(3),
          }));
        }
      }
    }
    this.#lines = count;
    svg.append(lines);
    const text = s('g', { 'font-size': 13, fill: p.fg });
    L.forEach((t, i) => text.append(s('text', {
      x: xl - 6, y: yl(i) + 4, 'text-anchor': 'end', 'data-side': 'left', 'data-index': i,
      'font-weight': focus?.side === 'left' && focus.index === i ? 'bold' : undefined,
    }, t)));
    R.forEach((t, j) => text.append(s('text', {
      x: xr + 6, y: yl(j) + 4, 'data-side': 'right', 'data-index': j,
      'font-weight': focus?.side === 'right' && focus.index === j ? 'bold' : undefined,
    }, t)));
    svg.append(text);
    this.#svg = svg;
    this.#plot.replaceChildren(svg);
    if (focus && this.#heads.length) {
      const parts = active.slice(0, 4).map((hd) => {
        const m = this.#heads[hd];
        const row = focus.side === 'left' ? m[focus.index] ?? [] : m.map((r) => r[focus.index]);
        const names = focus.side === 'left' ? R : L;
        const best = row.reduce((b, v, k) => (v > row[b] ? k : b), 0);
        return `head ${hd + 1}: ${names[best] ?? best} (${fmt(row[best] ?? NaN, 2)})`;
      });
      const tok = (focus.side === 'left' ? L : R)[focus.index];
      this.#readout.textContent = `${focus.side === 'left' ? 'query' : 'key'} “${tok}” — strongest ${focus.side === 'left' ? 'key' : 'query'} per head: ${parts.join('; ')}`;
    } else {
      this.#readout.textContent = `${this.#headsProblem}${active.length} of ${this.#heads.length} heads shown, ${count} lines above ${threshold}.`;
    }
  }

  #key(e: KeyboardEvent): void {
    const n = this.leftTokens.length;
    if (!n) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      const cur = this.#focus?.side === 'left' ? this.#focus.index : -1;
      const next = e.key === 'ArrowDown' ? (cur + 1) % n : (cur - 1 + n) % n;
      this.#focus = { side: 'left', index: next };
    } else if (e.key === 'Escape') this.#focus = null;
    else if (/^Digit[1-9]$/.test(e.code) && Number(e.code.slice(5)) <= this.#heads.length) {
      const k = Number(e.code.slice(5));
      if (e.shiftKey) this.soloHead(k - 1);
      else this.toggleHead(k - 1);
    } else return;
    e.preventDefault();
    this.invalidate();
  }
}

define('attn-head-view', AttnHeadView);

declare global {
  interface HTMLElementTagNameMap {
    'attn-head-view': AttnHeadView;
  }
}
