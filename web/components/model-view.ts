// <attn-model-view>: every layer and head at a glance, a grid of thumbnails (rows: layers,
// columns: heads). Click (or Enter on) a thumbnail to enlarge it as a labelled heatmap.
import { AttnElement, badArg, count, define, h, jsonAttr, labelCountFault, labelsArg, labelsAttr, langTag, pixelsURL, s } from './base.js';
// Registered here, not only by index.js: a page that imports this widget alone must get the
// elements it builds (a type-only import would be dropped from the output).
import './heatmap.js';
import type { AttnHeatmap } from './heatmap.js';
import { ATTENTION_ATTRIBUTES, AttributeFault, attentionFollower, namesAttention, type SentenceAttention } from './lib.js';
import { headsProblem, toMatrices, type TensorLike } from './matrix.js';
import { scaleRGB } from './theme.js';

export interface ModelSelection {
  layer: number;
  head: number;
}

export class AttnModelView extends AttnElement {
  static get observedAttributes(): string[] {
    return [...super.observedAttributes, 'data', 'tokens', 'row-labels', 'col-labels', 'label', 'layer-name', ...ATTENTION_ATTRIBUTES];
  }

  #layers: number[][][][] = [];
  #rowLabels: string[] | null = null;
  #colLabels: string[] | null = null;
  /** The attributes the row and column labels came from, as a count that differs from the data names them. */
  #rowName = 'tokens';
  #colName = 'tokens';
  #selected: ModelSelection | null = null;
  /** The thumbnail in the Tab order (roving tabindex): one Tab stop for the grid, not one per head. */
  #current: ModelSelection = { layer: 0, head: 0 };
  #svg: SVGSVGElement | null = null;
  #grid: HTMLDivElement;
  #detail: HTMLDivElement;
  #heatmap: AttnHeatmap;
  #status: HTMLDivElement;
  /** What is wrong with the attention given (attribute or property); '' when nothing is. */
  #dataProblem = '';
  /** model/src + text attributes: every layer and head of the shipped Transformer on that sentence. */
  #follow = attentionFollower(this, this.attrProblems, (a) => {
    this.#status.hidden = true;
    this.data = a.layers;
    this.rowLabels = a.queries;
    this.colLabels = a.keys;
    // The enlarged head's labels and read-out in the model's languages (a screen reader's voice).
    for (const [name, lang] of [['row-lang', langTag(a.queryLang)], ['col-lang', langTag(a.keyLang)]] as const) {
      if (lang) this.#heatmap.setAttribute(name, lang);
      else this.#heatmap.removeAttribute(name);
    }
    this.emit<SentenceAttention>('attn-loaded', a);
  }, (e) => {
    // An attribute's fault is named under the widget with the others; a failed load stays in the status.
    if (e instanceof AttributeFault) this.attrProblems.set(e.attribute, e.message);
    else this.#status.textContent = e.message;
    this.#status.hidden = e instanceof AttributeFault;
    this.invalidate();
  });

  constructor() {
    super();
    this.#grid = h('div', { className: 'grid' });
    this.#heatmap = document.createElement('attn-heatmap') as AttnHeatmap;
    this.#heatmap.setAttribute('no-export', '');
    // Focused when a thumbnail opens it (see render), named by its title.
    this.#detail = h('div', { className: 'detail', hidden: true, role: 'region', tabIndex: -1, 'aria-labelledby': 'dtitle' });
    const close = h('button', { type: 'button', textContent: 'Close', onclick: () => this.select(null) });
    this.#detail.append(h('div', { className: 'dhead' }, h('strong', { className: 'dtitle', id: 'dtitle' }), close), this.#heatmap);
    // Escape closes it, unless the heatmap inside used it (to unpin a cell).
    this.#detail.addEventListener('keydown', (e) => {
      if (e.key !== 'Escape' || e.defaultPrevented || !this.#selected) return;
      e.preventDefault();
      this.select(null);
    });
    // Only a model loading or that did not load (model/src attributes) has something to say here.
    this.#status = h('div', { className: 'readout', 'aria-live': 'polite', hidden: true });
    this.frame.append(this.#status, this.#grid, this.#detail);
  }

  protected css(): string {
    return `.grid svg g[role=button] { cursor: pointer; outline: none; }
.grid svg g[role=button]:focus-visible rect.frame-r { stroke: var(--accent); stroke-width: 3; }
.detail { margin-top: 8px; border-top: 1px solid var(--line); padding-top: 6px; }
.dhead { display: flex; justify-content: space-between; align-items: center; margin-bottom: 4px; }`;
  }

  /** Per layer, per head attention: an array of [H, L, S] tensors, or [layers][heads][L][S]. */
  set data(d: (TensorLike | number[][][])[] | null) {
    const list: unknown = d ?? [];
    let problem = Array.isArray(list) ? '' : 'expected a list of layers, each [heads][queries][keys] or a tensor';
    if (Array.isArray(list)) {
      const i = list.findIndex((l) => headsProblem(l));
      if (i >= 0) problem = `layer ${i + 1}: ${headsProblem(list[i])}`;
    }
    this.#dataProblem = problem && `data: ${problem}`;
    this.#layers = problem ? [] : (list as (TensorLike | number[][][])[]).map((l) => toMatrices(l));
    if (this.#selected && !this.#layers[this.#selected.layer]?.[this.#selected.head]) this.#selected = null;
    if (!this.#layers[this.#current.layer]?.[this.#current.head]) this.#current = { layer: 0, head: 0 };
    this.invalidate();
  }
  get data(): number[][][][] {
    return this.#layers;
  }
  set tokens(t: string[] | null) {
    this.#rowLabels = labelsArg(this, 'tokens', t);
    this.#colLabels = null;
    this.#rowName = this.#colName = 'tokens';
    this.invalidate();
  }
  set rowLabels(t: string[] | null) { this.#rowLabels = labelsArg(this, 'rowLabels', t); this.#rowName = 'row-labels'; this.invalidate(); }
  set colLabels(t: string[] | null) { this.#colLabels = labelsArg(this, 'colLabels', t); this.#colName = 'col-labels'; this.invalidate(); }

  get selected(): ModelSelection | null {
    return this.#selected;
  }

  /** Enlarges one thumbnail (null closes the enlarged view). */
  select(sel: ModelSelection | null): void {
    // Layer 9 of 2 was 'selected' and showed nothing.
    if (sel !== null && sel !== undefined && !this.#layers[sel.layer]?.[sel.head]) {
      const nl = this.#layers.length, nh = Math.max(0, ...this.#layers.map((l) => l.length));
      throw badArg(this, 'select', nl && nh ? `null or { layer, head } with layer from 0 to ${nl - 1} and head from 0 to ${nh - 1} (0-based)` : 'null (there is no data yet)', sel);
    }
    const was = this.#selected;
    // Close (focused inside the enlarged view) hid itself and sent focus to the top of the page:
    // back to the thumbnail that was open.
    const closing = !sel && was && this.#detail.contains(this.root.activeElement);
    this.#selected = sel;
    if (sel) this.#current = sel;
    if (closing) {
      this.#current = was;
      this.renderNow();
      this.#thumb(was)?.focus();
    } else this.invalidate();
    const name = this.getAttribute('layer-name') ?? 'Layer';
    const target = sel ?? was;
    if (target) this.announce(`${name} ${target.layer + 1}, head ${target.head + 1} ${sel ? 'enlarged' : 'closed'}`);
    this.emit<ModelSelection | null>('attn-select', sel);
  }

  #thumb(at: ModelSelection): SVGGElement | null {
    return this.#grid.querySelector(`g[data-layer="${at.layer}"][data-head="${at.head}"]`);
  }

  protected attributeChanged(name: string): void {
    if (ATTENTION_ATTRIBUTES.includes(name)) {
      // An empty 64 x 20 box while several MB download looked broken.
      this.#status.textContent = 'Loading the model…';
      this.#status.hidden = !namesAttention(this);
      this.#follow();
      this.invalidate();  // shows what the attributes' new values have wrong with them
    }
    else if (name === 'data') this.data = jsonAttr<number[][][][]>(this, 'data', this.attrProblems) ?? null;
    else if (name === 'tokens') this.tokens = labelsAttr(this, 'tokens', this.attrProblems) ?? null;
    else if (name === 'row-labels') this.rowLabels = labelsAttr(this, 'row-labels', this.attrProblems) ?? null;
    else if (name === 'col-labels') this.colLabels = labelsAttr(this, 'col-labels', this.attrProblems) ?? null;
    else this.invalidate();
  }

  protected defaultLabel(): string {
    return 'Attention by layer and head';
  }

  protected problems(): string[] {
    const out = [...super.problems(), ...(this.#dataProblem ? [this.#dataProblem] : [])];
    // Only the enlarged heatmap said so, as row-labels, and only once a head was enlarged.
    const m = this.#layers[0]?.[0];
    const R = m?.length ?? 0, C = m?.[0]?.length ?? 0;
    if (!R || !C) return out;
    const cols = this.#colLabels ?? this.#rowLabels;
    for (const [name, labels, n, what] of [[this.#rowName, this.#rowLabels, R, 'row'], [this.#colLabels ? this.#colName : this.#rowName, cols, C, 'column']] as const) {
      // tokens given once for both sides are named once.
      const fault = labels && !out.some((l) => l.startsWith(`${name}:`)) && labelCountFault(name, labels.length, n, what, 'numbered');
      if (fault) out.push(fault);
    }
    return out;
  }

  protected exportTarget(): SVGSVGElement | null {
    return this.#layers.length ? this.#svg : null;
  }

  protected render(width: number): void {
    const p = this.palette;
    const layers = this.#layers;
    const nl = layers.length;
    const nh = Math.max(0, ...layers.map((l) => l.length));
    const label = this.getAttribute('label') ?? this.defaultLabel();
    const layerName = this.getAttribute('layer-name') ?? 'Layer';
    const k = this.textScale;
    const left = 64 * k;
    const top = 20 * k;
    const gap = 8;
    const cell = Math.max(36 * k, Math.min(110, (width - left - 4) / Math.max(1, nh) - gap));
    const W = Math.ceil(left + nh * (cell + gap));
    const H = Math.ceil(top + nl * (cell + gap));
    const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'group', 'aria-label': `${label}: ${count(nl, 'layer')} by ${count(nh, 'head')}. Choose a thumbnail to enlarge it.` });
    // The exported file's title, as every other widget's picture has (the export had none).
    svg.append(s('title', {}, label));
    const text = s('g', { 'font-size': 12 * k, fill: p.muted });
    // 'Head 1' over each column where the widest ('Head 12') fits one; else 'Head' in the corner and
    // the numbers over the columns: the titles ran into each other (many heads, a narrow screen, large text).
    const titled = nh > 0 && this.textWidth(`Head ${nh}`, 12 * k) + 4 <= cell + gap;
    if (!titled && nh > 0) text.append(s('text', { x: left - 8, y: 13 * k, 'text-anchor': 'end' }, 'Head'));
    for (let hd = 0; hd < nh; hd++) text.append(s('text', { x: left + hd * (cell + gap) + cell / 2, y: 13 * k, 'text-anchor': 'middle' }, `${titled ? 'Head ' : ''}${hd + 1}`));
    for (let l = 0; l < nl; l++) text.append(s('text', { x: left - 8, y: top + l * (cell + gap) + cell / 2 + 4 * k, 'text-anchor': 'end' }, `${layerName} ${l + 1}`));
    svg.append(text);
    layers.forEach((heads, l) => heads.forEach((m, hd) => {
      const x = left + hd * (cell + gap);
      const y = top + l * (cell + gap);
      const current = this.#current.layer === l && this.#current.head === hd;
      const g = s('g', { role: 'button', tabindex: current ? 0 : -1, 'aria-label': `${layerName} ${l + 1}, head ${hd + 1}`, 'data-layer': l, 'data-head': hd });
      g.append(s('image', { x, y, width: cell, height: cell, href: thumb(m, p.dark), preserveAspectRatio: 'none', 'image-rendering': 'pixelated' }));
      const sel = this.#selected?.layer === l && this.#selected?.head === hd;
      g.append(s('rect', { class: 'frame-r', x, y, width: cell, height: cell, fill: 'none', stroke: sel ? p.highlight : p.line, 'stroke-width': sel ? 3 : 1 }));
      const open = () => {
        // Whether it is open now, not when the grid was drawn: after a select() whose redraw had
        // not come yet, Enter (or a click) on the head it opened opened it a second time, not closed it.
        const opened = this.#selected?.layer === l && this.#selected?.head === hd;
        this.select(opened ? null : { layer: l, head: hd });
        // Into what opened, where a keyboard or screen reader user wants to be next; Close and
        // Escape bring focus back here (see select).
        if (!opened) {
          this.renderNow();
          this.#detail.focus();
        }
      };
      g.addEventListener('click', open);
      g.addEventListener('keydown', (e) => {
        const moves: Record<string, [number, number]> = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
        if (e.key === 'Enter' || e.key === ' ') {
          e.preventDefault();
          open();
        } else if (e.key in moves) {
          e.preventDefault();
          const [dl, dh] = moves[e.key];
          const to = { layer: l + dl, head: hd + dh };
          const next = this.#thumb(to);
          if (!next) return;
          g.setAttribute('tabindex', '-1');
          next.setAttribute('tabindex', '0');
          this.#current = to;
          next.focus();
        }
      });
      svg.append(g);
    }));
    const focused = this.root.activeElement as Element | null;
    const refocus = focused?.getAttribute?.('data-layer') !== null && focused?.getAttribute?.('data-layer') !== undefined
      ? `g[data-layer="${focused.getAttribute('data-layer')}"][data-head="${focused.getAttribute('data-head')}"]` : null;
    this.#svg = svg;
    this.#grid.replaceChildren(svg);
    if (refocus) (this.#grid.querySelector(refocus) as SVGGElement | null)?.focus();

    const sel = this.#selected;
    this.#detail.hidden = !sel;
    if (sel) {
      const m = layers[sel.layer][sel.head];
      this.#detail.querySelector('.dtitle')!.textContent = `${layerName} ${sel.layer + 1}, head ${sel.head + 1}`;
      this.#heatmap.setAttribute('label', `${layerName} ${sel.layer + 1}, head ${sel.head + 1}`);
      const theme = this.getAttribute('theme');
      // Only a valid one: the enlarged heatmap would name a bad one a second time.
      if (theme === 'light' || theme === 'dark') this.#heatmap.setAttribute('theme', theme);
      else this.#heatmap.removeAttribute('theme');
      // Fitted to the head, so that the heatmap does not name a wrong count a second time (see problems()).
      this.#heatmap.rowLabels = fitted(this.#rowLabels, m.length);
      this.#heatmap.colLabels = fitted(this.#colLabels ?? this.#rowLabels, m[0]?.length ?? 0);
      this.#heatmap.data = m;
    }
  }
}

/** `n` labels: `labels`' first, the rest numbered as the heatmap numbers unlabelled rows; null stays null. */
function fitted(labels: string[] | null, n: number): string[] | null {
  return labels && Array.from({ length: n }, (_, i) => labels[i] ?? String(i));
}

/** Thumbnails already drawn, per matrix and theme: selecting a head redraws the grid, not them. */
const thumbs = new WeakMap<number[][], Map<boolean, string>>();
/** Longest side of a thumbnail in pixels: the grid shows them at most 110 px wide. */
const THUMB_MAX = 128;

/**
 * A matrix as a tiny PNG data URL (viridis, 0..max): one pixel per cell up to THUMB_MAX cells a
 * side, beyond that each pixel the largest of the cells it covers, so a sharp diagonal or a
 * column of first-token attention stays visible at 512 tokens. Written as pixels: the per-cell
 * fillRect it replaces took 63 s for GPT-2's 144 heads at 512 tokens.
 */
function thumb(m: number[][], dark: boolean): string {
  const cached = thumbs.get(m)?.get(dark);
  if (cached) return cached;
  const R = m.length;
  const C = m[0]?.length ?? 0;
  const ph = Math.max(1, Math.min(R, THUMB_MAX)), pw = Math.max(1, Math.min(C, THUMB_MAX));  // pixels
  const pooled = new Float32Array(pw * ph);
  const col = Int32Array.from({ length: C }, (_, j) => Math.floor((j * pw) / C));
  for (let i = 0; i < R; i++) {
    const base = Math.floor((i * ph) / R) * pw, row = m[i];
    for (let j = 0; j < C; j++) {
      const v = row[j], k = base + col[j];
      if (v > pooled[k]) pooled[k] = v;
    }
  }
  let hi = 0;
  for (let k = 0; k < pw * ph; k++) if (pooled[k] > hi) hi = pooled[k];
  hi = hi > 0 ? hi : 1;
  const url = pixelsURL(pw, ph, (x, y) => scaleRGB('viridis', pooled[y * pw + x] / hi, dark));
  if (!thumbs.has(m)) thumbs.set(m, new Map());
  thumbs.get(m)!.set(dark, url);
  return url;
}

define('attn-model-view', AttnModelView);

declare global {
  interface HTMLElementTagNameMap {
    'attn-model-view': AttnModelView;
  }
}
