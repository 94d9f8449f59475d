// <attn-regression>: Nadaraya-Watson regression as attention pooling. Training points (keys and
// values) can be dragged, added and removed; the prediction curve is sum_i softmax-like weights
// alpha(x, x_i) y_i, computed by attnlab. Hovering (or the keyboard cursor) picks a query x and
// sizes each training point by its attention weight for that query.
import type { Attnlab, KernelName } from 'attnlab';
import { AttnElement, badArg, badAttr, cycle, define, fmt, h, jsonAttr, numberAttr, s } from './base.js';
import { gaussian, rng, sharedLib } from './lib.js';

export interface Point {
  x: number;
  y: number;
}

export interface RegressionResult {
  /** Query positions (the curve's x). */
  queries: Float32Array;
  /** Predictions at the queries. */
  output: Float32Array;
  /** Attention weights [queries, points]. */
  weights: Float32Array;
  kernel: KernelName;
  bandwidth: number;
}

const KERNELS: readonly KernelName[] = ['gaussian', 'boxcar', 'epanechnikov', 'triangular'];

/** A press that moves at most this far (CSS px), and a touch that lasts at most TAP_MS, is a tap. */
const TAP_SLOP = 10;
const TAP_MS = 500;
/**
 * A finger or pen down within this far (CSS px) of a point's centre takes the nearest point: the
 * points are 5 to 11 px across on a phone, far smaller than a fingertip (WCAG 2.5.8's 24 px).
 */
const TOUCH_REACH = 16;
/**
 * Two taps on the same point, the second down within this long (ms) of the first one's release,
 * remove it: a finger's dblclick needs both taps on the circle itself, and never comes while a
 * touch on a point prevents touchstart (see the constructor).
 */
const DOUBLE_TAP_MS = 350;

/**
 * The number attributes: default, what is expected, and the test. A value that fails it falls
 * back to the default and the widget says so (samples="abc" threw from nadarayaWatson inside
 * render, noise="abc" drew NaN circles; both left the widget on "loading attnlab…").
 */
const NUMBERS: Record<string, [number, string, (x: number) => boolean]> = {
  n: [40, 'a whole number from 0 to 10000', (x) => Number.isInteger(x) && x >= 0 && x <= 10000],
  seed: [0, 'an integer', Number.isInteger],
  noise: [0.5, 'a number, 0 or more', (x) => Number.isFinite(x) && x >= 0],
  samples: [60, 'a whole number from 2 to 400', (x) => Number.isInteger(x) && x >= 2 && x <= 400],
  bandwidth: [0.5, 'a number above 0', (x) => Number.isFinite(x) && x > 0],
};

/**
 * A bandwidth as the legend writes it, 'h = 0.495', for a page that shows it beside the widget.
 * Three decimals: on a log-scale slider of 2 % steps (the site's pooling page) two would read the
 * same for a third of the steps, all of them below h = 0.5.
 */
export const bandwidthText = (h: number): string => `h = ${fmt(h, 3)}`;

/** y = 2 sin x + x (+ noise): the d2l example. */
export const truthFn = (x: number): number => 2 * Math.sin(x) + x;

/** The d2l training set: n points, x uniform in [0, 5], y = 2 sin x + x + N(0, noise²). */
export function samplePoints(n: number, seed: number, noise = 0.5): Point[] {
  const r = rng(seed);
  const g = gaussian(r);
  const xs = Array.from({ length: n }, () => r() * 5).sort((a, b) => a - b);
  return xs.map((x) => ({ x, y: truthFn(x) + noise * g() }));
}

export class AttnRegression extends AttnElement {
  static get observedAttributes(): string[] {
    return [...super.observedAttributes, 'kernel', 'bandwidth', 'points', 'n', 'seed', 'noise', 'samples', 'readonly', 'label'];
  }

  #points: Point[] | null = null;
  #lib: Attnlab | null = null;
  #loading = false;
  #result: RegressionResult | null = null;
  #dirty = true;
  #query: number | null = null;
  #selected = -1;
  #drag: { index: number; id: number; x: number; y: number; t: number } | null = null;
  /**
   * The last finger or pen tap on a point (index, release time): a second one removes it. `added`:
   * the tap added the point on empty space (or followed such a tap quickly), so quick taps after
   * it keep it: two or three quick taps on empty space mean one point there, not one taken away.
   */
  #tap: { index: number; t: number; added: boolean } | null = null;
  /** The last release's pointer type: a finger's or pen's dblclick is a double tap, handled in #up. */
  #upType = '';
  /** The point the last release added (else -1), and the one a double-click's first click added. */
  #upAdded = -1;
  #clickAdded = -1;
  /** A press on empty space: released where it began, it adds a point there (see #up). */
  #press: { id: number; x: number; y: number; t: number } | null = null;
  #svg: SVGSVGElement | null = null;
  #plot: HTMLDivElement;
  #readout: HTMLDivElement;
  #geom = { x0: 0, x1: 1, y0: 0, y1: 1, left: 0, top: 0, w: 1, h: 1 };
  #error = '';
  /** Points given that are not two finite numbers: left out, and said so. */
  #pointsProblem = '';

  constructor() {
    super();
    this.#plot = h('div', { className: 'plot', tabIndex: 0, role: 'application', 'aria-roledescription': 'regression plot' });
    // Not live: it follows the pointer. Keyboard actions are announced (see #key).
    this.#readout = h('div', { className: 'readout' });
    this.frame.append(this.#plot, this.#readout);
    this.#plot.addEventListener('pointerdown', (e) => this.#down(e));
    this.#plot.addEventListener('pointermove', (e) => this.#move(e));
    this.#plot.addEventListener('pointerup', (e) => this.#up(e, false));
    this.#plot.addEventListener('pointercancel', (e) => this.#up(e, true));
    // A touch that starts on a point drags it instead of scrolling the page. Chromium ignores
    // touch-action on SVG shapes, so the point cannot say so in CSS.
    this.#plot.addEventListener('touchstart', (e) => {
      if (this.#drag) e.preventDefault();
    }, { passive: false });
    this.#plot.addEventListener('pointerleave', () => {
      if (!this.#drag) {
        this.#query = null;
        this.invalidate();
      }
    });
    this.#plot.addEventListener('click', (e) => {
      if (e.detail <= 1) this.#clickAdded = this.#upAdded;
    });
    this.#plot.addEventListener('dblclick', (e) => {
      // The point under the pointer, not e.target: a press on a point captures the pointer (the
      // drag), so the click and dblclick go to the plot. A double-click on empty space adds one
      // point: its second click does not remove the point its first added.
      const i = this.#hit(this.root.elementFromPoint(e.clientX, e.clientY));
      if (i >= 0 && i !== this.#clickAdded && !this.hasAttribute('readonly') && this.#upType === 'mouse') this.#remove(i);
    });
    this.#plot.addEventListener('keydown', (e) => this.#key(e));
  }

  protected css(): string {
    // A finger on the plot scrolls the page (touch-action: none held the page still, and added a
    // point wherever a swipe began); on a point it drags the point (see the touchstart handler).
    return `.plot { outline: none; border-radius: 4px; touch-action: pan-y pinch-zoom; }
.plot:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
:host(:not([readonly])) .pt { cursor: grab; }`;
  }

  // --- data ---------------------------------------------------------------------------------

  /** An attnlab instance to compute with; without one the widget loads its own on first draw. */
  set lib(l: Attnlab | null) {
    // Anything else failed at every draw as 'lib.nadarayaWatson is not a function'.
    if (l !== null && l !== undefined && typeof l.nadarayaWatson !== 'function') throw badArg(this, 'lib', "null or an attnlab instance (load()'s)", l);
    this.#lib = l ?? null;
    this.#dirty = true;
    this.invalidate();
  }
  get lib(): Attnlab | null {
    return this.#lib;
  }

  /**
   * Training points (keys x, values y): `{ x, y }` objects or `[x, y]` pairs, as the attribute
   * takes them. Default: the d2l set, `n` points from `seed`.
   */
  set points(p: readonly (Point | readonly [number, number])[] | null) {
    // A string failed as 'p.map is not a function'. null, as removing the attribute, gives the n/seed points.
    if (p !== null && p !== undefined && !Array.isArray(p)) throw badArg(this, 'points', 'null or an array of [x, y] pairs or { x, y } objects', p);
    if (p) {
      const all = p.map((q): Point => (Array.isArray(q) ? { x: Number(q[0]), y: Number(q[1]) } : { x: Number((q as Point)?.x), y: Number((q as Point)?.y) }));
      this.#points = all.filter((q) => Number.isFinite(q.x) && Number.isFinite(q.y));
      const left = all.length - this.#points.length;
      this.#pointsProblem = left ? `points: expected finite x and y, ${left} of ${all.length} ${left === 1 ? 'is' : 'are'} not; left out` : '';
    } else {
      this.#points = null;
      this.#pointsProblem = '';
    }
    this.#selected = Math.min(this.#selected, this.points.length - 1);
    this.#dirty = true;
    this.invalidate();
  }
  get points(): Point[] {
    if (!this.#points) {
      this.#points = samplePoints(this.#number('n'), this.#number('seed'), this.#number('noise'));
    }
    return this.#points.map((p) => ({ ...p }));
  }

  #number(name: string): number {
    const [fallback, expected, ok] = NUMBERS[name];
    return numberAttr(this, name, fallback, expected, ok).value;
  }

  get kernel(): KernelName {
    const k = this.getAttribute('kernel') as KernelName | null;
    return k && KERNELS.includes(k) ? k : 'gaussian';
  }
  set kernel(k: KernelName) {
    // As the other widgets' properties: 'gauss' set from code was taken, and only named under the plot.
    if (!KERNELS.includes(k)) throw badArg(this, 'kernel', KERNELS.map((n) => `'${n}'`).join(', '), k);
    this.setAttribute('kernel', k);
  }

  get bandwidth(): number {
    return this.#number('bandwidth');
  }
  set bandwidth(b: number) {
    if (typeof b !== 'number' || !NUMBERS.bandwidth[2](b)) throw badArg(this, 'bandwidth', NUMBERS.bandwidth[1], b);
    this.setAttribute('bandwidth', String(b));
  }

  /** The last computed curve and weights (null before the first draw). */
  get result(): RegressionResult | null {
    this.#compute();
    return this.#result;
  }

  /** The prediction at x, from the curve (nearest sample). */
  predictionAt(x: number): number {
    const r = this.result;
    if (!r) return NaN;
    let best = 0;
    for (let i = 1; i < r.queries.length; i++) if (Math.abs(r.queries[i] - x) < Math.abs(r.queries[best] - x)) best = i;
    return r.output[best];
  }

  protected attributeChanged(name: string, value: string | null): void {
    const problems = this.attrProblems;
    if (name === 'points') {
      const p = jsonAttr<unknown>(this, 'points', problems);
      if (Array.isArray(p)) {
        this.points = p as Point[];
        return;
      }
      if (p !== undefined) problems.set(name, 'points: expected a list of [x, y] pairs or {"x", "y"} objects');
      // Removed (or unusable): the n/seed points again, not the last ones given.
      this.#points = null;
      this.#pointsProblem = '';
    } else if (name in NUMBERS) {
      const [fallback, expected, ok] = NUMBERS[name];
      const r = numberAttr(this, name, fallback, expected, ok);
      if (r.problem) problems.set(name, r.problem);
      else problems.delete(name);
      if ((name === 'n' || name === 'seed' || name === 'noise') && !this.hasAttribute('points')) this.#points = null;
    } else if (name === 'kernel') {
      if (value === null || KERNELS.includes(value as KernelName)) problems.delete(name);
      else problems.set(name, `${badAttr(name, KERNELS.map((k) => `'${k}'`).join(', '), value)}; using 'gaussian'`);
    }
    this.#dirty = true;
    this.invalidate();
  }

  protected problems(): string[] {
    return [...super.problems(), ...(this.#pointsProblem ? [this.#pointsProblem] : [])];
  }

  #compute(): void {
    if (!this.#dirty) return;
    const lib = this.#lib;
    if (!lib) {
      if (!this.#loading) {
        this.#loading = true;
        sharedLib().then((l) => {
          this.#lib ??= l;
          this.#dirty = true;
          this.invalidate();
        }, (e: unknown) => {
          this.#error = `attnlab failed to load: ${e instanceof Error ? e.message : String(e)}`;
          this.invalidate();
        });
      }
      return;
    }
    const pts = this.points;
    const n = this.#number('samples');
    const [x0, x1] = this.#xDomain(pts);
    const queries = Float32Array.from({ length: n }, (_, i) => x0 + ((x1 - x0) * i) / (n - 1));
    const kernel = this.kernel;
    const bandwidth = this.bandwidth;
    if (pts.length === 0) {
      this.#result = { queries, output: new Float32Array(n), weights: new Float32Array(0), kernel, bandwidth };
    } else {
      const keys = { data: Float32Array.from(pts, (p) => p.x), shape: [pts.length] };
      const values = { data: Float32Array.from(pts, (p) => p.y), shape: [pts.length] };
      const r = lib.nadarayaWatson({ data: queries, shape: [n] }, keys, values, { kernel, bandwidth });
      this.#result = { queries, output: r.output.data, weights: r.weights.data, kernel, bandwidth };
    }
    this.#dirty = false;
    this.emit<RegressionResult>('attn-change', this.#result);
  }

  #xDomain(pts: Point[]): [number, number] {
    const lo = Math.min(0, ...pts.map((p) => p.x));
    const hi = Math.max(5, ...pts.map((p) => p.x));
    return [lo, hi];
  }

  // --- drawing ------------------------------------------------------------------------------

  protected defaultLabel(): string {
    return 'Nadaraya-Watson regression';
  }

  protected exportTarget(): SVGSVGElement | null {
    return this.#svg;
  }

  protected render(width: number): void {
    this.#compute();
    const p = this.palette;
    const pts = this.points;
    const r = this.#result;
    const label = this.getAttribute('label') ?? this.defaultLabel();
    // A readonly plot refuses edits: its name and readout do not offer them (they did).
    const editable = !this.hasAttribute('readonly');
    this.#plot.setAttribute('aria-label', `${label}, ${this.kernel} kernel, bandwidth ${fmt(this.bandwidth, 3)}, ${pts.length} training points${editable ? '' : ', read-only'}. `
      + (editable ? 'Left and right arrows move the query; Page Up and Page Down pick a point; with a point picked, arrows move it; A adds a point, Delete removes it.'
        : 'Left and right arrows move the query; Page Up and Page Down pick a point.'));
    const k = this.textScale;
    const W = width;
    const left = 40 * k;
    const top = 10;
    const w = W - left - 12;
    // The legend: in the plot's top left, wrapped to its width; under the plot, across the whole
    // width, where a word of it would not fit there (a narrow phone, or large text).
    let fs = 11 * k, lineH = 16 * k;
    const sample = 24 * k;
    const legend = [
      { text: `prediction (${this.kernel}, ${bandwidthText(this.bandwidth)})`, stroke: p.accent, width: 2.5, dash: undefined },
      { text: 'truth 2 sin x + x', stroke: p.muted, width: 1.5, dash: '5 4' },
    ];
    let lx = left + 10;
    let lines = legend.map((e) => this.#wrap(e.text, left + w - 4 - lx - sample, fs));
    const inside = lines.every((l) => l !== null);
    if (!inside) {
      lx = 4;
      const room = W - 4 - lx - sample;
      // Narrower than a word of it (a 180 px screen at 200% text): smaller, not off the screen.
      const widest = Math.max(...legend.flatMap((e) => e.text.split(' ').map((word) => this.textWidth(word, fs))));
      if (widest > room) {
        fs *= (0.97 * room) / widest;
        lineH *= (0.97 * room) / widest;
      }
      lines = legend.map((e) => this.#wrap(e.text, room, fs) ?? [e.text]);
    }
    const below = inside ? 0 : lines.reduce((n, l) => n + l!.length, 0) * lineH + 4 * k;
    const H = Math.round(Math.min(420, Math.max(220, width * 0.55)) + below);
    const hgt = H - top - 28 * k - below;
    const [x0, x1] = this.#xDomain(pts);
    const ys = [...pts.map((q) => q.y), ...(r ? Array.from(r.output) : []), -1, 7];
    const y0 = Math.floor(Math.min(...ys));
    const y1 = Math.ceil(Math.max(...ys));
    this.#geom = { x0, x1, y0, y1, left, top, w, h: hgt };
    const X = (x: number) => left + ((x - x0) / (x1 - x0)) * w;
    const Y = (y: number) => top + (1 - (y - y0) / (y1 - y0)) * hgt;

    const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': label });
    svg.append(s('title', {}, label));
    // Axes and grid.
    const axes = s('g', { 'font-size': 11 * k, fill: p.muted });
    for (let t = Math.ceil(x0); t <= x1; t++) {
      axes.append(s('line', { x1: X(t), x2: X(t), y1: top, y2: top + hgt, stroke: p.grid }),
        s('text', { x: X(t), y: top + hgt + 16 * k, 'text-anchor': 'middle' }, String(t)));
    }
    const ystep = y1 - y0 > 12 ? 4 : 2;
    for (let t = Math.ceil(y0 / ystep) * ystep; t <= y1; t += ystep) {
      axes.append(s('line', { x1: left, x2: left + w, y1: Y(t), y2: Y(t), stroke: p.grid }),
        s('text', { x: left - 6, y: Y(t) + 4 * k, 'text-anchor': 'end' }, String(t)));
    }
    axes.append(s('rect', { x: left, y: top, width: w, height: hgt, fill: 'none', stroke: p.line }));
    svg.append(axes);
    // Truth.
    const truth: string[] = [];
    for (let i = 0; i <= 100; i++) {
      const x = x0 + ((x1 - x0) * i) / 100;
      truth.push(`${i ? 'L' : 'M'}${X(x).toFixed(1)},${Y(truthFn(x)).toFixed(1)}`);
    }
    svg.append(s('path', { d: truth.join(''), fill: 'none', stroke: p.muted, 'stroke-width': 1.5, 'stroke-dasharray': '5 4' }));
    // Query line and weights.
    let qi = -1;
    if (r && this.#query !== null) {
      qi = Math.round(((this.#query - x0) / (x1 - x0)) * (r.queries.length - 1));
      qi = Math.max(0, Math.min(r.queries.length - 1, qi));
      const qx = r.queries[qi];
      svg.append(s('line', { x1: X(qx), x2: X(qx), y1: top, y2: top + hgt, stroke: p.highlight, 'stroke-width': 1, 'stroke-dasharray': '2 3', 'data-no-export': '' }));
    }
    // Prediction.
    // A query that no training point reaches (a compact kernel narrower than the gap: every
    // weight 0) has no prediction; the library's 0 there is not one, so the line breaks.
    const reached = (i: number) => r!.weights.subarray(i * pts.length, (i + 1) * pts.length).some((x) => x > 0);
    if (r && pts.length) {
      let d = '', pen = 'M';
      r.queries.forEach((x, i) => {
        if (!reached(i)) {
          pen = 'M';
          return;
        }
        d += `${pen}${X(x).toFixed(1)},${Y(r.output[i]).toFixed(1)}`;
        pen = 'L';
      });
      svg.append(s('path', { d, fill: 'none', stroke: p.accent, 'stroke-width': 2.5 }));
    }
    // Training points, sized by their weight for the current query.
    const N = pts.length;
    const g = s('g');
    pts.forEach((pt, i) => {
      const wgt = qi >= 0 && r ? r.weights[qi * N + i] : 0;
      const rad = qi >= 0 ? 3 + 9 * Math.sqrt(wgt) : 4.5;
      g.append(s('circle', {
        class: 'pt', cx: X(pt.x).toFixed(1), cy: Y(pt.y).toFixed(1), r: rad.toFixed(2),
        fill: qi >= 0 && wgt > 0 ? p.highlight : p.bg, 'fill-opacity': qi >= 0 ? Math.min(1, 0.25 + wgt * 3).toFixed(2) : 1,
        stroke: i === this.#selected ? p.fg : p.highlight, 'stroke-width': i === this.#selected ? 2.5 : 1.5, 'data-index': i,
      }));
    });
    svg.append(g);
    // Legend.
    const lg = s('g', { 'font-size': fs, fill: p.fg });
    let y = inside ? top + lineH : top + hgt + 28 * k + lineH;  // the first line's baseline
    legend.forEach((e, i) => {
      const ls = lines[i]!;
      lg.append(s('line', { x1: lx, x2: lx + 18 * k, y1: y - 4 * k, y2: y - 4 * k, stroke: e.stroke, 'stroke-width': e.width, 'stroke-dasharray': e.dash }),
        ls.length === 1 ? s('text', { x: lx + sample, y }, e.text)
          // Each line but the last ends in its space: the text reads as one sentence.
          : s('text', { x: lx + sample, y }, ...ls.map((l, j) => s('tspan', { x: lx + sample, dy: j ? lineH : 0 }, j < ls.length - 1 ? `${l} ` : l))));
      y += ls.length * lineH;
    });
    svg.append(lg);
    this.#svg = svg;
    this.#plot.replaceChildren(svg);

    if (this.#error) this.#readout.textContent = this.#error;
    else if (!r) this.#readout.textContent = 'loading attnlab…';
    else if (qi >= 0) {
      const top3 = Array.from({ length: N }, (_, i) => i).sort((a, b) => r.weights[qi * N + b] - r.weights[qi * N + a]).slice(0, 3);
      this.#readout.textContent = !reached(qi) ? `query x = ${fmt(r.queries[qi], 2)}: no training point within h, so no prediction`
        : `query x = ${fmt(r.queries[qi], 2)} → ŷ = ${fmt(r.output[qi], 3)}; largest weights: `
        + top3.map((i) => `${fmt(r.weights[qi * N + i], 3)} on (${fmt(pts[i].x, 2)}, ${fmt(pts[i].y, 2)})`).join(', ');
    } else if (this.#selected >= 0 && pts[this.#selected]) {
      const q = pts[this.#selected];
      this.#readout.textContent = `point ${this.#selected + 1} of ${N}: (${fmt(q.x, 2)}, ${fmt(q.y, 2)})`;
    } else {
      this.#readout.textContent = `${N} training point${N === 1 ? '' : 's'}. ${editable
        ? 'Drag a point, click (tap) empty space to add one, double-click (double-tap) one to remove it.'
        : 'Point at the plot to read the prediction there.'}`;
    }
  }

  /** `text` in lines at most `width` wide at `px`, broken between words; null if a word is wider. */
  #wrap(text: string, width: number, px: number): string[] | null {
    const lines: string[] = [];
    for (const word of text.split(' ')) {
      if (this.textWidth(word, px) > width) return null;
      const longer = lines.length ? `${lines[lines.length - 1]} ${word}` : '';
      if (longer && this.textWidth(longer, px) <= width) lines[lines.length - 1] = longer;
      else lines.push(word);
    }
    return lines;
  }

  // --- interaction --------------------------------------------------------------------------

  #toData(e: MouseEvent): Point {
    const rect = this.#svg!.getBoundingClientRect();
    const vb = this.#svg!.viewBox.baseVal;
    const sx = ((e.clientX - rect.left) * vb.width) / rect.width;
    const sy = ((e.clientY - rect.top) * vb.height) / rect.height;
    const { x0, x1, y0, y1, left, top, w, h: hh } = this.#geom;
    return { x: x0 + ((sx - left) / w) * (x1 - x0), y: y1 - ((sy - top) / hh) * (y1 - y0) };
  }

  #hit(t: EventTarget | null): number {
    const idx = (t as Element | null)?.getAttribute?.('data-index');
    return idx === null || idx === undefined ? -1 : Number(idx);
  }

  /** The point nearest a touch, if its centre is within TOUCH_REACH; else -1. */
  #nearest(e: PointerEvent): number {
    let best = -1;
    let bestD = TOUCH_REACH;
    this.#svg?.querySelectorAll('circle.pt').forEach((c) => {
      const r = c.getBoundingClientRect();
      const d = Math.hypot(e.clientX - (r.left + r.width / 2), e.clientY - (r.top + r.height / 2));
      if (d <= bestD) {
        best = Number(c.getAttribute('data-index'));
        bestD = d;
      }
    });
    return best;
  }

  #down(e: PointerEvent): void {
    if (!this.#svg || e.button !== 0) return;
    const hit = this.#hit(e.target);
    const i = hit < 0 && e.pointerType !== 'mouse' ? this.#nearest(e) : hit;
    if (this.hasAttribute('readonly')) return;
    if (i >= 0) {
      this.#selected = i;
      this.#drag = { index: i, id: e.pointerId, x: e.clientX, y: e.clientY, t: e.timeStamp };
      this.#plot.setPointerCapture(e.pointerId);
      e.preventDefault();
      return;
    }
    // Added on release, if this stays a tap: a swipe that scrolls the page past the plot begins
    // with a press too.
    this.#press = { id: e.pointerId, x: e.clientX, y: e.clientY, t: e.timeStamp };
  }

  #up(e: PointerEvent, cancelled: boolean): void {
    this.#upType = e.pointerType;
    this.#upAdded = -1;
    const drag = this.#drag;
    if (drag && drag.id === e.pointerId) {
      this.#drag = null;
      this.#plot.releasePointerCapture(e.pointerId);
      const tapped = !cancelled && e.pointerType !== 'mouse' && e.timeStamp - drag.t <= TAP_MS
        && Math.hypot(e.clientX - drag.x, e.clientY - drag.y) <= TAP_SLOP;
      const first = this.#tap;
      const again = tapped && first !== null && first.index === drag.index && drag.t - first.t <= DOUBLE_TAP_MS;
      this.#tap = tapped ? { index: drag.index, t: e.timeStamp, added: again && first.added } : null;
      if (again && !first.added) {
        this.#tap = null;
        this.#remove(drag.index);
      }
      return;
    }
    const press = this.#press;
    if (!press || press.id !== e.pointerId) return;
    this.#press = null;
    // Cancelled: the browser took the touch to scroll or zoom.
    if (cancelled || !this.#svg || Math.hypot(e.clientX - press.x, e.clientY - press.y) > TAP_SLOP) return;
    if (e.pointerType !== 'mouse' && e.timeStamp - press.t > TAP_MS) return;
    const q = this.#toData(e);
    const { x0, x1, y0, y1 } = this.#geom;
    if (q.x < x0 || q.x > x1 || q.y < y0 || q.y > y1) return;
    const pts = this.points;
    pts.push(q);
    this.#selected = pts.length - 1;
    this.#upAdded = this.#selected;
    this.#tap = e.pointerType === 'mouse' ? null : { index: this.#selected, t: e.timeStamp, added: true };
    this.#commit(pts);
  }

  #move(e: PointerEvent): void {
    if (!this.#svg) return;
    const q = this.#toData(e);
    if (this.#drag && this.#drag.id === e.pointerId) {
      const pts = this.points;
      const { x0, x1, y0, y1 } = this.#geom;
      pts[this.#drag.index] = { x: Math.min(x1, Math.max(x0, q.x)), y: Math.min(y1, Math.max(y0, q.y)) };
      this.#commit(pts);
      return;
    }
    this.#query = q.x >= this.#geom.x0 && q.x <= this.#geom.x1 ? q.x : null;
    this.invalidate();
  }

  #remove(i: number): void {
    const pts = this.points;
    pts.splice(i, 1);
    this.#selected = Math.min(i, pts.length - 1);
    this.#commit(pts);
  }

  #commit(pts: Point[]): void {
    this.points = pts;
    this.emit<{ points: Point[] }>('attn-points', { points: this.points });
  }

  #key(e: KeyboardEvent): void {
    // The steps, the clamps and the middle come from the plot as drawn: before the first frame it
    // was a 0..1 placeholder (a point moved up was pulled down to y = 1), and right after points
    // were set it was the old points' plot.
    this.renderPending();
    const pts = this.points;
    const { x0, x1, y0, y1 } = this.#geom;
    const dx = (x1 - x0) / 50;
    const dy = (y1 - y0) / 40;
    const editable = !this.hasAttribute('readonly');
    if (e.key === 'PageUp' || e.key === 'PageDown') {
      if (!pts.length) return;
      this.#selected = cycle(this.#selected, e.key === 'PageDown' ? 1 : -1, pts.length);
      this.#query = null;
    } else if (this.#selected >= 0 && editable && e.key.startsWith('Arrow')) {
      const q = pts[this.#selected];
      if (e.key === 'ArrowLeft') q.x = Math.max(x0, q.x - dx);
      if (e.key === 'ArrowRight') q.x = Math.min(x1, q.x + dx);
      if (e.key === 'ArrowUp') q.y = Math.min(y1, q.y + dy);
      if (e.key === 'ArrowDown') q.y = Math.max(y0, q.y - dy);
      this.#commit(pts);
    } else if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
      const cur = this.#query ?? (x0 + x1) / 2;
      this.#query = Math.min(x1, Math.max(x0, cur + (e.key === 'ArrowLeft' ? -dx : dx)));
    } else if (e.key === 'Escape') {
      this.#selected = -1;
      this.#query = null;
    } else if ((e.key === 'a' || e.key === 'A' || e.key === 'Insert') && editable) {
      const x = this.#query ?? (x0 + x1) / 2;
      pts.push({ x, y: truthFn(x) });
      this.#selected = pts.length - 1;
      this.#commit(pts);
    } else if ((e.key === 'Delete' || e.key === 'Backspace') && editable && this.#selected >= 0) {
      this.#remove(this.#selected);
    } else return;
    e.preventDefault();
    this.announceAfterRender(this.#readout);
    this.invalidate();
  }
}

define('attn-regression', AttnRegression);

declare global {
  interface HTMLElementTagNameMap {
    'attn-regression': AttnRegression;
  }
}
