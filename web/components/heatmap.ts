// <attn-heatmap>: a matrix with row and column labels, a colour scale, a hover read-out and a
// pinned cell (click, or Enter on the keyboard cursor).
import { AttnElement, badArg, badAttr, count, define, fmt, h, jsonAttr, labelCountFault, labelsArg, labelsAttr, langTag, numberAttr, pixelsURL, s } from './base.js';
import { extent, toRows, type MatrixInput } from './matrix.js';
import { inkOn, rgbString, scaleRGB, type ScaleName } from './theme.js';

export interface CellDetail {
  row: number;
  col: number;
  value: number;
  rowLabel: string;
  colLabel: string;
  masked: boolean;
}

const SCALES: readonly ScaleName[] = ['viridis', 'blues', 'diverging'];
/**
 * Above this many cells (or whenever values are not printed in the cells) the matrix is drawn as
 * one image rather than one rect per cell: thousands of SVG nodes would cost a frame each redraw.
 */
const RECT_LIMIT = 1600;
const IMAGE_ABOVE = 300;
/** Column labels that do not fit their cells are drawn this many degrees up from the horizontal. */
const TILT = 50;
const SIN = Math.sin(TILT * Math.PI / 180);
const COS = Math.cos(TILT * Math.PI / 180);
/**
 * A line of text's reach above and below its baseline, in em: a little more than common sans
 * fonts' ascent and descent (0.9-0.93 and 0.21-0.24), as the layout cannot ask the font.
 */
const ASCENT = 0.95;
const DESCENT = 0.25;
/** Rows that Page Up and Page Down move the keyboard cursor by. */
const PAGE = 10;

export class AttnHeatmap extends AttnElement {
  static get observedAttributes(): string[] {
    return [...super.observedAttributes, 'data', 'mask', 'row-labels', 'col-labels', 'scale', 'min', 'max',
      'row-title', 'col-title', 'label', 'show-values', 'digits', 'cell-size', 'row-lang', 'col-lang'];
  }

  #rows: number[][] = [];
  #mask: boolean[][] | null = null;
  #rowLabels: string[] | null = null;
  #colLabels: string[] | null = null;
  #min: number | null = null;
  #max: number | null = null;
  #digits = 2;
  /** The cell-size attribute's, or null: 44 px at the usual text size, grown with it. */
  #cellSize: number | null = null;
  /** What is wrong with the matrix given (attribute or property); '' when nothing is. */
  #dataProblem = '';
  #cursor: { row: number; col: number } | null = null;
  #pinned: { row: number; col: number } | null = null;
  #svg: SVGSVGElement | null = null;
  #overlay: SVGGElement | null = null;
  #geom = { x0: 0, y0: 0, cw: 1, ch: 1 };
  #plot: HTMLDivElement;
  #readout: HTMLDivElement;

  constructor() {
    super();
    this.#plot = h('div', { className: 'plot', tabIndex: 0, role: 'application', 'aria-roledescription': 'heatmap' });
    // Not live: it follows the pointer. Keyboard moves and pins are announced (see #key).
    this.#readout = h('div', { className: 'readout' });
    this.frame.append(this.#plot, this.#readout);
    this.#plot.addEventListener('pointermove', (e) => this.#pointer(e, false));
    this.#plot.addEventListener('pointerleave', () => {
      this.#cursor = null;
      this.#drawOverlay();
    });
    this.#plot.addEventListener('click', (e) => this.#pointer(e, true));
    this.#plot.addEventListener('keydown', (e) => this.#key(e));
    this.#plot.addEventListener('focus', () => {
      if (!this.#cursor && this.rowCount) this.#cursor = this.#pinned ?? { row: 0, col: 0 };
      this.#drawOverlay();
    });
    this.#plot.addEventListener('blur', () => {
      this.#cursor = null;
      this.#drawOverlay();
    });
  }

  protected css(): string {
    return `.plot { outline: none; border-radius: 4px; }
.plot:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.cells { cursor: crosshair; }`;
  }

  // --- data ---------------------------------------------------------------------------------

  /** The matrix: nested arrays or a tensor (its first [rows, cols] slice). */
  set data(m: MatrixInput) {
    this.#dataProblem = '';
    const tensor = m !== null && typeof m === 'object' && !Array.isArray(m) && Array.isArray(m.shape) && typeof m.data?.length === 'number';
    if (Array.isArray(m) ? !m.every(Array.isArray) : m !== null && m !== undefined && !tensor) {
      // A flat list drew as a column of NaN cells coloured like the minimum; an object or a string, "No data".
      this.#dataProblem = 'data: expected a 2-D array (a list of rows of numbers)';
      m = [];
    }
    let rows = toRows(m);
    const lengths = new Set(rows.map((r) => r.length));
    if (lengths.size > 1) {
      this.#dataProblem = `data: expected rows of equal length, got lengths ${[...lengths].join(', ')}`;
      rows = [];
    }
    const bad = rows.reduce((n, r) => n + r.filter((v) => !Number.isFinite(v)).length, 0);
    if (bad) this.#dataProblem = `data: ${bad} ${bad === 1 ? 'value is' : 'values are'} not a finite number; hatched like masked cells`;
    this.#rows = rows;
    if (this.#pinned && (this.#pinned.row >= this.rowCount || this.#pinned.col >= this.colCount)) this.#pinned = null;
    this.invalidate();
  }
  get data(): number[][] {
    return this.#rows;
  }

  /** Cells to draw as masked (hatched): true = masked. */
  set mask(m: boolean[][] | null) {
    this.#mask = m;
    this.invalidate();
  }
  get mask(): boolean[][] | null {
    return this.#mask;
  }

  set rowLabels(l: string[] | null) {
    this.#rowLabels = labelsArg(this, 'rowLabels', l);
    this.invalidate();
  }
  get rowLabels(): string[] {
    return this.#rowLabels ?? this.#rows.map((_, i) => String(i));
  }

  set colLabels(l: string[] | null) {
    this.#colLabels = labelsArg(this, 'colLabels', l);
    this.invalidate();
  }
  get colLabels(): string[] {
    return this.#colLabels ?? (this.#rows[0] ?? []).map((_, j) => String(j));
  }

  /** Colour scale bounds; null = from the data (0..1 when every value lies there). */
  set min(v: number | null) { this.#min = this.#bound('min', v); this.invalidate(); }
  get min(): number | null { return this.#min; }
  set max(v: number | null) { this.#max = this.#bound('max', v); this.invalidate(); }
  get max(): number | null { return this.#max; }

  /** A bound given: a finite number or null (a string labelled the colour bar with it and coloured every cell wrong). */
  #bound(name: 'min' | 'max', v: unknown): number | null {
    if (v === null || v === undefined) return null;
    if (typeof v !== 'number' || !Number.isFinite(v)) throw badArg(this, name, 'null or a finite number', v);
    return v;
  }

  get rowCount(): number { return this.#rows.length; }
  get colCount(): number { return this.#rows[0]?.length ?? 0; }

  valueAt(row: number, col: number): number {
    return this.#rows[row]?.[col] ?? NaN;
  }

  /** The pinned cell, or null. Setting it pins (or, with null, unpins) without an event. */
  get pinned(): CellDetail | null {
    return this.#pinned ? this.#detail(this.#pinned.row, this.#pinned.col) : null;
  }
  set pinned(c: { row: number; col: number } | null) {
    const R = this.rowCount, C = this.colCount;
    // A cell outside the data read '99 → 0: NaN (pinned)'.
    const inside = (i: unknown, n: number) => Number.isInteger(i) && (i as number) >= 0 && (i as number) < n;
    if (c !== null && c !== undefined && !(inside(c.row, R) && inside(c.col, C))) {
      throw badArg(this, 'pinned', R && C ? `null or { row, col } with row from 0 to ${R - 1} and col from 0 to ${C - 1}` : 'null (there is no data yet)', c);
    }
    this.#pinned = c ? { row: c.row, col: c.col } : null;
    this.#drawOverlay();
  }

  protected attributeChanged(name: string, value: string | null): void {
    const problems = this.attrProblems;
    switch (name) {
      case 'data': this.data = jsonAttr<number[][]>(this, 'data', problems) ?? []; return;
      case 'mask': this.mask = jsonAttr<boolean[][]>(this, 'mask', problems) ?? null; return;
      case 'row-labels': this.rowLabels = labelsAttr(this, 'row-labels', problems) ?? null; return;
      case 'col-labels': this.colLabels = labelsAttr(this, 'col-labels', problems) ?? null; return;
      case 'min':
      case 'max': {
        // A bound that is no number labelled the colour bar NaN and coloured every cell wrong.
        const x = value === null || value.trim() === '' ? null : Number(value);
        const ok = x === null || Number.isFinite(x);
        if (ok) problems.delete(name);
        else problems.set(name, `${badAttr(name, 'a number', value!)}; using the data's range`);
        this[name] = ok ? x : null;
        return;
      }
      case 'digits': {
        // digits="200" threw in toFixed and, before renders were caught, blanked every widget
        // queued after this one.
        const r = numberAttr(this, name, 2, 'an integer from 0 to 100', (x) => Number.isInteger(x) && x >= 0 && x <= 100);
        this.#digits = r.value;
        if (r.problem) problems.set(name, r.problem);
        else problems.delete(name);
        break;
      }
      case 'cell-size': {
        const r = numberAttr(this, name, 0, 'a number of pixels above 0', (x) => x > 0);
        this.#cellSize = r.problem || !r.value ? null : r.value;
        if (r.problem) problems.set(name, this.#cellSizeProblem());
        else problems.delete(name);
        break;
      }
      case 'row-lang':
      case 'col-lang':
        if (value === null || langTag(value)) problems.delete(name);
        else problems.set(name, `${badAttr(name, "a language tag such as 'fr' or 'en-GB'", value)}; using the page's`);
        break;
      case 'scale':
        if (value === null || SCALES.includes(value as ScaleName)) problems.delete(name);
        else problems.set(name, `${badAttr(name, SCALES.map((x) => `'${x}'`).join(', '), value)}; using 'viridis'`);
        break;
    }
    this.invalidate();
  }

  protected problems(): string[] {
    const out = [...super.problems(), ...(this.#dataProblem ? [this.#dataProblem] : [])];
    const R = this.rowCount, C = this.colCount;
    if (!R || !C) return out;
    // Labels or a mask of another size than the data were used as far as they went, without a word.
    for (const [name, labels, n, what] of [['row-labels', this.#rowLabels, R, 'row'], ['col-labels', this.#colLabels, C, 'column']] as const) {
      const fault = labels && labelCountFault(name, labels.length, n, what, 'unlabelled');
      if (fault) out.push(fault);
    }
    const m: unknown = this.#mask;
    if (m !== null && m !== undefined && !(Array.isArray(m) && m.length === R && m.every((r) => Array.isArray(r) && r.length === C))) {
      out.push(`mask: expected ${R} rows of ${C} true or false (one per cell of data); cells without one are not masked`);
    }
    return out;
  }

  /** A bad cell-size's warning, naming the size drawn instead: the default grows with the text. */
  #cellSizeProblem(): string {
    const px = Math.round(44 * this.textScale * 10) / 10;
    return `${badAttr('cell-size', 'a number of pixels above 0', this.getAttribute('cell-size') ?? '')}; using the default, ${px} px (44 px at the usual text size, grown with it)`;
  }

  #lang(name: 'row-lang' | 'col-lang'): string | null {
    return langTag(this.getAttribute(name));
  }

  get #scale(): ScaleName {
    const v = this.getAttribute('scale') as ScaleName | null;
    return v && SCALES.includes(v) ? v : 'viridis';
  }

  /** Drawn hatched, as masked cells are: a missing value must not read as the minimum. */
  #hidden(i: number, j: number): boolean {
    return Boolean(this.#mask?.[i]?.[j]) || !Number.isFinite(this.#rows[i][j]);
  }

  #bounds(): [number, number] {
    let [lo, hi] = extent(this.#rows, this.#mask ?? undefined);
    if (this.#min === null && this.#max === null && lo >= 0 && hi <= 1) [lo, hi] = [0, 1];
    if (this.#scale === 'diverging' && this.#min === null && this.#max === null) {
      const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
      [lo, hi] = [-m, m];
    }
    lo = this.#min ?? lo;
    hi = this.#max ?? hi;
    if (!(hi > lo)) hi = lo + 1;
    return [lo, hi];
  }

  #detail(row: number, col: number): CellDetail {
    return {
      row, col, value: this.valueAt(row, col),
      rowLabel: this.rowLabels[row] ?? String(row),
      colLabel: this.colLabels[col] ?? String(col),
      masked: Boolean(this.#mask?.[row]?.[col]),
    };
  }

  // --- drawing ------------------------------------------------------------------------------

  protected defaultLabel(): string {
    return 'Attention weights';
  }

  protected exportTarget(): SVGSVGElement | null {
    return this.#svg;
  }

  protected render(width: number): void {
    const p = this.palette;
    const R = this.rowCount;
    const C = this.colCount;
    const label = this.getAttribute('label') ?? this.defaultLabel();
    this.#plot.setAttribute('aria-label', `${label}: ${count(R, 'row')} by ${count(C, 'column')}. Arrow keys, Page Up and Down, Home and End (with Control: first and last cell) move, Enter pins a cell, Escape unpins.`);
    if (!R || !C) {
      this.#svg = null;
      this.#plot.replaceChildren(h('div', { className: 'readout', textContent: 'No data' }));
      return;
    }
    const rowLabels = this.rowLabels;
    const colLabels = this.colLabels;
    const k = this.textScale;
    if (this.attrProblems.has('cell-size')) this.attrProblems.set('cell-size', this.#cellSizeProblem());
    const font = 12 * k;
    const charW = font * 0.6;
    const rowTitle = this.getAttribute('row-title');
    const colTitle = this.getAttribute('col-title');
    const maxRow = Math.min(14, Math.max(1, ...rowLabels.map((l) => l.length)));
    // Each character measured once (its widths summed, kerning aside): thousands of labels each
    // measured took as long as the rest of the drawing.
    const charWidths = new Map<string, number>();
    const colW = colLabels.map((l) => [...clip(l)].reduce((w, c) => {
      if (!charWidths.has(c)) charWidths.set(c, this.textWidth(c, font));
      return w + charWidths.get(c)!;
    }, 0));
    const maxColW = Math.max(0, ...colW);
    const [lo, hi] = this.#bounds();
    // The colour bar (12 px off the grid, 10 wide) and its end values 4 px right of it.
    const legendW = Math.max(56 * k, 28 + Math.max(...[hi, lo].map((x) => this.textWidth(fmt(x, 2), 10 * k))));
    const left = maxRow * charW + 8 + (rowTitle ? 18 * k : 0);
    const maxCell = this.#cellSize ?? 44 * k;
    let cw = Math.max(2, Math.min(maxCell, (width - left - legendW - 4) / C));
    const rotate = maxColW > cw - 2;
    // A tilted label's baseline starts right of its cell's centre, so that the middle of its
    // glyphs (not their foot) points at the cell, and it leans further right by its width's run
    // and its descent's: the last ones past the grid, more than the colour bar when they are long.
    const shift = (ASCENT - DESCENT) / 2 * font / SIN;
    const lean = shift + maxColW * COS + DESCENT * font * SIN;
    if (rotate && lean > legendW) cw = Math.max(2, Math.min(maxCell, (width - left - lean - 4) / C));
    // Tilted labels, baseline 5 px above the grid, rise by their width's and their ascent's rise.
    const labelsH = rotate ? 5 + maxColW * SIN + ASCENT * font * COS + 2 : font + 8;
    const top = labelsH + (colTitle ? 18 * k : 0);
    const ch = cw;
    // Thin the labels when cells are smaller than the text: every step-th one. Row labels lie
    // step * ch apart, tilted ones step * cw * sin(TILT) across their lines; either must hold a
    // line of text. The step is a round one, so that the labels shown read as a count (0, 5, 10, …).
    const rowStep = roundUp((ASCENT + DESCENT) * font / ch);
    const colStep = rotate ? roundUp((ASCENT + DESCENT) * font / (cw * SIN)) : Math.max(1, Math.ceil(13 * k / cw));
    const gw = cw * C;
    const gh = ch * R;
    let right = left + gw + legendW;
    if (rotate) {
      for (let j = 0; j < C; j += colStep) right = Math.max(right, left + (j + 0.5) * cw + shift + colW[j] * COS + DESCENT * font * SIN + 1);
    }
    const W = Math.ceil(right);
    // Below the grid: the colour bar (at least 40 px) with its low value, and the last row label.
    const lh = Math.max(40, gh);
    const lastRow = R - 1 - (R - 1) % rowStep;
    const rowTitleW = rowTitle ? this.textWidth(rowTitle, font) : 0;
    // The row title, centred on the grid but not above the picture when the grid is shorter.
    const rowTitleY = Math.max(top + gh / 2, rowTitleW / 2 + 1);
    const H = Math.ceil(Math.max(top + gh + 4, top + lh + DESCENT * 10 * k + 1,
      top + lastRow * ch + ch / 2 + 4 * k + DESCENT * font + 1, rowTitleY + rowTitleW / 2 + 1));
    this.#geom = { x0: left, y0: top, cw, ch };
    const scale = this.#scale;
    const t = (v: number) => (v - lo) / (hi - lo);

    const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': label });
    svg.append(s('title', {}, label));
    const cells = s('g', { class: 'cells' });
    const masked: [number, number][] = [];
    const asRects = R * C <= (this.hasAttribute('show-values') ? RECT_LIMIT : IMAGE_ABOVE);
    if (asRects) {
      const showValues = this.hasAttribute('show-values') && cw >= 30 * k;
      const digits = this.#digits;
      for (let i = 0; i < R; i++) {
        for (let j = 0; j < C; j++) {
          const x = left + j * cw;
          const y = top + i * ch;
          if (this.#hidden(i, j)) {
            masked.push([i, j]);
            continue;
          }
          const rgb = scaleRGB(scale, t(this.#rows[i][j]), p.dark);
          cells.append(s('rect', { x: x.toFixed(2), y: y.toFixed(2), width: (cw + 0.3).toFixed(2), height: (ch + 0.3).toFixed(2), fill: rgbString(rgb) }));
          if (showValues) {
            cells.append(s('text', { x: (x + cw / 2).toFixed(1), y: (y + ch / 2 + 4 * k).toFixed(1), 'text-anchor': 'middle', 'font-size': 10 * k, fill: inkOn(rgb), 'pointer-events': 'none' }, fmt(this.#rows[i][j], digits)));
          }
        }
      }
    } else {
      const href = pixelsURL(C, R, (j, i) => {
        if (!this.#hidden(i, j)) return scaleRGB(scale, t(this.#rows[i][j]), p.dark);
        masked.push([i, j]);
        return paletteRGB(p.masked);
      });
      cells.append(s('image', { x: left, y: top, width: gw, height: gh, href, preserveAspectRatio: 'none', 'image-rendering': 'pixelated' }));
    }
    // Masked cells: a neutral fill with a diagonal hatch, so "hidden" never reads as "zero".
    if (masked.length) {
      const defs = s('defs');
      const pid = `hatch-${Math.random().toString(36).slice(2, 8)}`;
      defs.append(s('pattern', { id: pid, patternUnits: 'userSpaceOnUse', width: 6, height: 6, patternTransform: 'rotate(45)' },
        s('rect', { width: 6, height: 6, fill: p.masked }),
        s('line', { x1: 0, y1: 0, x2: 0, y2: 6, stroke: p.hatch, 'stroke-width': 1.5 })));
      svg.append(defs);
      if (asRects || masked.length < 4000) {
        for (const [i, j] of masked) {
          cells.append(s('rect', { x: (left + j * cw).toFixed(2), y: (top + i * ch).toFixed(2), width: (cw + 0.3).toFixed(2), height: (ch + 0.3).toFixed(2), fill: `url(#${pid})`, 'data-masked': '' }));
        }
      }
    }
    svg.append(cells, s('rect', { x: left, y: top, width: gw, height: gh, fill: 'none', stroke: p.line }));

    // The labels' languages, where given: a screen reader reads French tokens in the page's
    // English voice otherwise. The titles are the page's words, in its language.
    const labels = s('g', { 'font-size': font, fill: p.fg });
    const rowG = s('g', { lang: this.#lang('row-lang') });
    const colG = s('g', { lang: this.#lang('col-lang') });
    labels.append(rowG, colG);
    rowLabels.forEach((l, i) => i % rowStep === 0 && rowG.append(s('text', { x: left - 5, y: top + i * ch + ch / 2 + 4 * k, 'text-anchor': 'end', 'data-row': i }, clip(l))));
    colLabels.forEach((l, j) => {
      if (j % colStep !== 0) return;
      const x = left + j * cw + cw / 2 + (rotate ? shift : 0);
      colG.append(rotate
        ? s('text', { x, y: top - 5, transform: `rotate(${-TILT} ${x} ${top - 5})`, 'text-anchor': 'start', 'data-col': j }, clip(l))
        : s('text', { x, y: top - 5, 'text-anchor': 'middle', 'data-col': j }, clip(l)));
    });
    if (rowTitle) {
      const y = rowTitleY;
      labels.append(s('text', { x: 12 * k, y, transform: `rotate(-90 ${12 * k} ${y})`, 'text-anchor': 'middle', fill: p.muted }, rowTitle));
    }
    if (colTitle) {
      // Centred on the grid, but inside the picture when it is wider than the grid.
      const half = this.textWidth(colTitle, font) / 2 + 1;
      labels.append(s('text', { x: clamp(left + gw / 2, Math.min(half, W / 2), Math.max(W - half, W / 2)), y: 12 * k, 'text-anchor': 'middle', fill: p.muted }, colTitle));
    }
    svg.append(labels);

    // Colour bar.
    const lx = left + gw + 12;
    const gid = `grad-${Math.random().toString(36).slice(2, 8)}`;
    const grad = s('linearGradient', { id: gid, x1: 0, y1: 1, x2: 0, y2: 0 });
    for (let k = 0; k <= 8; k++) grad.append(s('stop', { offset: k / 8, 'stop-color': rgbString(scaleRGB(scale, k / 8, p.dark)) }));
    svg.append(s('defs', {}, grad),
      s('rect', { x: lx, y: top, width: 10, height: lh, fill: `url(#${gid})`, stroke: p.line }),
      s('text', { x: lx + 14, y: top + 9 * k, 'font-size': 10 * k, fill: p.muted }, fmt(hi, 2)),
      s('text', { x: lx + 14, y: top + lh, 'font-size': 10 * k, fill: p.muted }, fmt(lo, 2)));

    this.#overlay = s('g', { 'pointer-events': 'none' });
    svg.append(this.#overlay);
    this.#svg = svg;
    this.#plot.replaceChildren(svg);
    this.#drawOverlay();
  }

  #drawOverlay(): void {
    const g = this.#overlay;
    if (!g || !this.#svg) return;
    const p = this.palette;
    const { x0, y0, cw, ch } = this.#geom;
    g.replaceChildren();
    const box = (c: { row: number; col: number }, color: string, width: number, dashed: boolean, exportIt: boolean) => {
      const r = s('rect', { x: x0 + c.col * cw, y: y0 + c.row * ch, width: cw, height: ch, fill: 'none', stroke: color, 'stroke-width': width, 'stroke-dasharray': dashed ? '3 2' : undefined });
      if (!exportIt) r.setAttribute('data-no-export', '');
      g.append(r);
    };
    if (this.#pinned) box(this.#pinned, p.highlight, 2.5, false, true);
    if (this.#cursor) box(this.#cursor, p.fg, 1.5, true, false);
    this.#svg.querySelectorAll('text[data-row], text[data-col]').forEach((t) => t.removeAttribute('font-weight'));
    const focus = this.#cursor ?? this.#pinned;
    if (focus) {
      this.#svg.querySelector(`text[data-row="${focus.row}"]`)?.setAttribute('font-weight', 'bold');
      this.#svg.querySelector(`text[data-col="${focus.col}"]`)?.setAttribute('font-weight', 'bold');
    }
    const shown = this.#cursor ?? this.#pinned;
    if (shown) {
      const d = this.#detail(shown.row, shown.col);
      const pin = this.#pinned && this.#pinned.row === shown.row && this.#pinned.col === shown.col ? ' (pinned)' : '';
      // The tokens in their languages, as the labels are (see render).
      const word = (text: string, lang: string | null) => (lang ? h('span', { lang, textContent: text }) : text);
      this.#readout.replaceChildren(word(d.rowLabel, this.#lang('row-lang')), ' → ', word(d.colLabel, this.#lang('col-lang')),
        `: ${d.masked ? 'masked' : fmt(d.value, 4)}${pin}`);
    } else {
      this.#readout.textContent = '\u00a0';
    }
  }

  // --- interaction --------------------------------------------------------------------------

  #cellAt(e: MouseEvent): { row: number; col: number } | null {
    if (!this.#svg) return null;
    const r = this.#svg.getBoundingClientRect();
    const vb = this.#svg.viewBox.baseVal;
    const x = ((e.clientX - r.left) * vb.width) / r.width;
    const y = ((e.clientY - r.top) * vb.height) / r.height;
    const { x0, y0, cw, ch } = this.#geom;
    const col = Math.floor((x - x0) / cw);
    const row = Math.floor((y - y0) / ch);
    if (row < 0 || col < 0 || row >= this.rowCount || col >= this.colCount) return null;
    return { row, col };
  }

  #pointer(e: MouseEvent, click: boolean): void {
    const c = this.#cellAt(e);
    if (click) {
      if (!c) return;
      this.#togglePin(c);
      this.announce(this.#readout);
      return;
    }
    const same = c && this.#cursor && c.row === this.#cursor.row && c.col === this.#cursor.col;
    this.#cursor = c;
    this.#drawOverlay();
    if (c && !same) this.emit<CellDetail>('attn-hover', this.#detail(c.row, c.col));
  }

  #togglePin(c: { row: number; col: number }): void {
    const same = this.#pinned && this.#pinned.row === c.row && this.#pinned.col === c.col;
    this.#pinned = same ? null : { ...c };
    this.#drawOverlay();
    this.emit<CellDetail | null>('attn-pin', this.#pinned ? this.#detail(c.row, c.col) : null);
  }

  #key(e: KeyboardEvent): void {
    // The overlay draws on the view as rendered: before the first frame there is none (the readout
    // announced was blank), and right after data was set it is the old data's. A key can come that
    // soon after the widget is added, under load.
    this.renderPending();
    if (!this.rowCount) return;
    const c = this.#cursor ?? { row: 0, col: 0 };
    // As the WAI-ARIA grid pattern has them: Page Up/Down a page of rows (10, as the head view's),
    // Home/End the row's ends, Ctrl+Home/End the first and last cells.
    const moves: Record<string, [number, number]> = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1], PageUp: [-PAGE, 0], PageDown: [PAGE, 0] };
    const corner = e.ctrlKey || e.metaKey;
    if (e.key in moves) {
      const [dr, dc] = moves[e.key];
      this.#cursor = { row: clamp(c.row + dr, 0, this.rowCount - 1), col: clamp(c.col + dc, 0, this.colCount - 1) };
    } else if (e.key === 'Home') this.#cursor = { row: corner ? 0 : c.row, col: 0 };
    else if (e.key === 'End') this.#cursor = { row: corner ? this.rowCount - 1 : c.row, col: this.colCount - 1 };
    else if (e.key === 'Enter' || e.key === ' ') this.#togglePin(c);
    else if (e.key === 'Escape' && this.#pinned) {
      this.#pinned = null;
      this.emit('attn-pin', null);
    } else return;
    e.preventDefault();
    this.#drawOverlay();
    this.announce(this.#readout);
    if (this.#cursor) this.emit<CellDetail>('attn-hover', this.#detail(this.#cursor.row, this.#cursor.col));
  }
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

/** The smallest of 1, 2, 5, 10, 20, 50, … that is at least x. */
function roundUp(x: number): number {
  for (let p = 1; ; p *= 10) {
    for (const m of [1, 2, 5]) if (m * p >= x) return m * p;
  }
}

function clip(l: string): string {
  return l.length > 14 ? `${l.slice(0, 13)}…` : l;
}

/** A palette colour's red, green and blue: `#rrggbb`, or an author's translucent `rgba(…)` (the picture's pixels are opaque: its alpha is dropped). */
function paletteRGB(c: string): [number, number, number] {
  if (c.startsWith('#')) {
    const n = parseInt(c.slice(1), 16);
    return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  }
  const [r, g, b] = c.slice(c.indexOf('(') + 1).split(',').map(Number);
  return [r, g, b];
}

define('attn-heatmap', AttnHeatmap);

declare global {
  interface HTMLElementTagNameMap {
    'attn-heatmap': AttnHeatmap;
  }
}
