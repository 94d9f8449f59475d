// <attn-beam-tree>: the hypotheses of a beam search as a prefix tree, left to right. Shared
// prefixes merge; the chosen hypothesis is drawn bold; each leaf shows its score.
import { AttnElement, badArg, badAttr, count, cycle, define, fmt, h, jsonAttr, langTag, s } from './base.js';

export interface BeamHypothesis {
  tokens: string[];
  /** Log-probability (or any score: higher is better). */
  score: number;
}

interface Node {
  token: string;
  depth: number;
  children: Node[];
  leaves: number[];
  y: number;
}

export class AttnBeamTree extends AttnElement {
  static get observedAttributes(): string[] {
    return [...super.observedAttributes, 'data', 'chosen', 'label', 'token-lang'];
  }

  #beams: BeamHypothesis[] = [];
  /** What is wrong with the hypotheses given; '' when nothing is. */
  #dataProblem = '';
  #focus = -1;
  /** Set by a key: the next render scrolls the picked hypothesis's leaf into view (not on hover). */
  #reveal = false;
  #svg: SVGSVGElement | null = null;
  #plot: HTMLDivElement;
  #readout: HTMLDivElement;

  constructor() {
    super();
    this.#plot = h('div', { className: 'plot', tabIndex: 0, role: 'application', 'aria-roledescription': 'beam tree' });
    // Not live: it follows the pointer. Keys are announced.
    this.#readout = h('div', { className: 'readout' });
    this.frame.append(this.#plot, this.#readout);
    this.#plot.addEventListener('keydown', (e) => {
      const n = this.#beams.length;
      if (!n) return;
      if (e.key === 'ArrowDown' || e.key === 'ArrowRight') this.#focus = cycle(this.#focus, 1, n);
      else if (e.key === 'ArrowUp' || e.key === 'ArrowLeft') this.#focus = cycle(this.#focus, -1, n);
      else if (e.key === 'Home' || e.key === 'End') this.#focus = e.key === 'Home' ? 0 : n - 1;
      // Escape clears a selection; with none it is not ours (a dialog around the widget closes).
      else if (e.key === 'Escape' && this.#focus >= 0) this.#focus = -1;
      else return;
      e.preventDefault();
      this.#reveal = true;
      this.announceAfterRender(this.#readout);
      this.invalidate();
      if (this.#focus >= 0) this.emit('attn-beam', { index: this.#focus, ...this.#beams[this.#focus] });
    });
    this.#plot.addEventListener('pointermove', (e) => {
      const leaf = (e.target as Element).closest?.('[data-leaf]');
      const i = leaf ? Number(leaf.getAttribute('data-leaf')) : -1;
      if (i !== this.#focus) {
        this.#focus = i;
        this.invalidate();
      }
    });
    // The hovered hypothesis stayed highlighted after the pointer left.
    this.#plot.addEventListener('pointerleave', () => {
      if (this.#focus >= 0 && this.root.activeElement !== this.#plot) {
        this.#focus = -1;
        this.invalidate();
      }
    });
  }

  protected css(): string {
    // A deep tree scrolls sideways at its drawn size: shrunk to a phone's width its text was 5 px.
    return `.plot { outline: none; border-radius: 4px; overflow-x: auto; }
.plot svg { max-width: none; }
.plot:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }`;
  }

  /** Final hypotheses, best first unless `chosen` says otherwise. */
  set data(b: BeamHypothesis[] | null) {
    // Checked, not trusted: [{"score":1}] threw "x.tokens is not iterable" and kept the old tree;
    // tokens as a string split into characters; a missing score was a NaN label.
    this.#dataProblem = '';
    const list: unknown[] = b === null || b === undefined ? [] : Array.isArray(b) ? b : [];
    if (!Array.isArray(b) && b !== null && b !== undefined) this.#dataProblem = 'data: expected a list of {"tokens": [...], "score": number} hypotheses';
    const beams: BeamHypothesis[] = [];
    let bad = 0;
    for (const x of list) {
      const o = x as { tokens?: unknown; score?: unknown } | null;
      const tokens = typeof o?.tokens === 'string' ? o.tokens.split(/\s+/).filter(Boolean) : Array.isArray(o?.tokens) ? o.tokens.map(String) : null;
      const score = typeof o?.score === 'number' || typeof o?.score === 'string' ? Number(o.score) : NaN;
      if (tokens && Number.isFinite(score)) beams.push({ tokens, score });
      else bad++;
    }
    if (bad) this.#dataProblem = `data: expected each hypothesis to have tokens (a list) and a numeric score; ${bad} of ${list.length} left out`;
    this.#beams = beams;
    this.#focus = -1;
    this.invalidate();
  }
  get data(): BeamHypothesis[] {
    return this.#beams;
  }

  /** The hypothesis drawn as chosen, 0-based: the `chosen` attribute, which null removes (then the highest score). */
  set chosen(i: number | null) {
    if (i === null || i === undefined) {
      this.removeAttribute('chosen');
      return;
    }
    // Before the data any hypothesis number is taken (as the attribute is); once it is there, one of them.
    const n = this.#beams.length;
    if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || (n > 0 && i >= n)) {
      throw badArg(this, 'chosen', `null or a hypothesis number${n ? ` from 0 to ${n - 1}` : ''} (0-based)`, i);
    }
    this.setAttribute('chosen', String(i));
  }
  get chosen(): number {
    const a = this.#chosenAttribute();
    if (a !== null) return a;
    let best = 0;
    this.#beams.forEach((b, i) => { if (b.score > this.#beams[best].score) best = i; });
    return best;
  }

  /** `chosen` (0-based) when it names one of the hypotheses, else null (the best is drawn). */
  #chosenAttribute(): number | null {
    const a = this.getAttribute('chosen');
    if (a === null || a.trim() === '') return null;
    const i = Number(a);
    return Number.isInteger(i) && i >= 0 && i < this.#beams.length ? i : null;
  }

  protected problems(): string[] {
    const out = [...super.problems(), ...(this.#dataProblem ? [this.#dataProblem] : [])];
    const a = this.getAttribute('chosen');
    // chosen="5" of 3 read: chosen: “undefined”.
    if (a !== null && a.trim() !== '' && this.#beams.length && this.#chosenAttribute() === null) {
      out.push(`${badAttr('chosen', `a hypothesis number from 0 to ${this.#beams.length - 1} (0-based)`, a)}; the best score is drawn as chosen`);
    }
    return out;
  }

  protected attributeChanged(name: string, value: string | null): void {
    if (name === 'data') this.data = jsonAttr<BeamHypothesis[]>(this, 'data', this.attrProblems) ?? null;
    else {
      if (name === 'token-lang') {
        if (value === null || langTag(value)) this.attrProblems.delete(name);
        else this.attrProblems.set(name, `${badAttr(name, "a language tag such as 'fr' or 'en-GB'", value)}; using the page's`);
      }
      this.invalidate();
    }
  }

  protected defaultLabel(): string {
    return 'Beam search hypotheses';
  }

  protected exportTarget(): SVGSVGElement | null {
    return this.#beams.length ? this.#svg : null;
  }

  protected render(width: number): void {
    const p = this.palette;
    const label = this.getAttribute('label') ?? this.defaultLabel();
    this.#plot.setAttribute('aria-label', `${label}: ${count(this.#beams.length, 'hypothesis', 'hypotheses')}. Arrow keys step through them, Home and End go to the first and last.`);
    const root: Node = { token: '<bos>', depth: 0, children: [], leaves: [], y: 0 };
    this.#beams.forEach((b, i) => {
      let node = root;
      node.leaves.push(i);
      b.tokens.forEach((t, d) => {
        let next = node.children.find((c) => c.token === t);
        if (!next) {
          next = { token: t, depth: d + 1, children: [], leaves: [], y: 0 };
          node.children.push(next);
        }
        next.leaves.push(i);
        node = next;
      });
    });
    // Leaves in order get rows; an inner node sits at the mean of its children.
    let row = 0;
    const place = (n: Node): number => {
      if (!n.children.length) n.y = row++;
      else n.y = n.children.map(place).reduce((a, b) => a + b, 0) / n.children.length;
      return n.y;
    };
    place(root);
    const depth = Math.max(1, ...this.#beams.map((b) => b.tokens.length));
    const k = this.textScale;
    const rowH = 26 * k;
    const colW = k * Math.max(64, Math.min(110, (width / k - 90) / (depth + 1)));
    const W = Math.ceil(colW * (depth + 1) + 90 * k);
    const H = Math.max(40, row * rowH + 16);
    const X = (d: number) => 10 + d * colW;
    const Y = (y: number) => 12 + y * rowH + rowH / 2;
    const chosen = this.chosen;
    // The tokens' language, where given: a screen reader reads French tokens in the page's English
    // voice otherwise. The scores and the words around the read-out's tokens are the page's.
    const lang = langTag(this.getAttribute('token-lang'));
    const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': label });
    svg.append(s('title', {}, label));
    const edges = s('g', { fill: 'none' });
    const nodes = s('g', { 'font-size': 12 * k });
    const walk = (n: Node) => {
      const onChosen = n.leaves.includes(chosen);
      const onFocus = n.leaves.includes(this.#focus);
      for (const c of n.children) {
        const cOn = c.leaves.includes(chosen);
        const cF = c.leaves.includes(this.#focus);
        edges.append(s('path', {
          d: `M${X(n.depth) + 44 * k},${Y(n.y)} C${X(n.depth) + colW * 0.7},${Y(n.y)} ${X(c.depth) - colW * 0.3},${Y(c.y)} ${X(c.depth) - 2},${Y(c.y)}`,
          stroke: cF ? p.highlight : cOn ? p.accent : p.line, 'stroke-width': cOn || cF ? 2.5 : 1.2,
        }));
        walk(c);
      }
      nodes.append(s('text', {
        x: X(n.depth), y: Y(n.y) + 4 * k, fill: onFocus ? p.highlight : onChosen ? p.fg : p.muted,
        'font-weight': onChosen ? 'bold' : undefined, lang,
      }, n.token.length > 10 ? `${n.token.slice(0, 9)}…` : n.token));
      if (!n.children.length && n.leaves.length) {
        const i = n.leaves[0];
        nodes.append(s('text', { x: X(n.depth) + Math.min(colW - 6, k * (7.5 * n.token.length + 6)), y: Y(n.y) + 4 * k, fill: p.muted, 'font-size': 11 * k, 'data-leaf': i }, fmt(this.#beams[i].score, 2)));
        nodes.append(s('rect', { x: X(n.depth) - 4, y: Y(n.y) - rowH / 2, width: colW + 40 * k, height: rowH, fill: 'transparent', 'data-leaf': i }));
      }
    };
    walk(root);
    svg.append(edges, nodes);
    this.#svg = svg;
    this.#plot.replaceChildren(svg);
    if (this.#reveal) this.#scrollTo(this.#focus);
    this.#reveal = false;
    const f = this.#beams[this.#focus];
    const words = (b: BeamHypothesis) => ['“', lang ? h('span', { lang, textContent: b.tokens.join(' ') }) : b.tokens.join(' '), '”'];
    if (f) this.#readout.replaceChildren(`hypothesis ${this.#focus + 1}: `, ...words(f), `, score ${fmt(f.score, 3)}${this.#focus === chosen ? ' (chosen)' : ''}`);
    else if (this.#beams.length) this.#readout.replaceChildren(`${this.#beams.length} ${this.#beams.length === 1 ? 'hypothesis' : 'hypotheses'}; chosen: `, ...words(this.#beams[chosen]));
    else this.#readout.textContent = 'No beams yet';
  }

  /**
   * Scrolls the plot sideways to hypothesis i's leaf (its last token and score). A tree wider than
   * the widget scrolls, and the arrow keys pick hypotheses rather than scroll: a keyboard user saw
   * a leaf past the right edge highlighted out of sight, with no key that reached it.
   */
  #scrollTo(i: number): void {
    const leaf = this.#svg?.querySelector(`rect[data-leaf="${i}"]`);
    if (!leaf) return;
    const plot = this.#plot;
    const box = leaf.getBoundingClientRect();
    const left = box.left - plot.getBoundingClientRect().left + plot.scrollLeft;
    let to = plot.scrollLeft;
    if (left + box.width > to + plot.clientWidth) to = left + box.width - plot.clientWidth;
    // A leaf wider than the plot shows its start: its token.
    if (left < to) to = left;
    plot.scrollLeft = to;
  }
}

define('attn-beam-tree', AttnBeamTree);

declare global {
  interface HTMLElementTagNameMap {
    'attn-beam-tree': AttnBeamTree;
  }
}
