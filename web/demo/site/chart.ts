// A small line chart in inline SVG for the pages (loss curves, saturation, benchmarks). It draws
// with the page's CSS variables, so it follows the theme without redrawing.
const NS = 'http://www.w3.org/2000/svg';

export interface Series {
  name: string;
  color: string;
  points: [number, number][];
  dashed?: boolean;
}

function node<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

function ticks(lo: number, hi: number, log: boolean): number[] {
  if (!(Number.isFinite(lo) && Number.isFinite(hi))) return [];
  if (log) {
    if (lo <= 0) return [];
    const out: number[] = [];
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
      for (const m of [1, 2, 5]) {
        const v = m * 10 ** e;
        if (v >= lo * 0.999 && v <= hi * 1.001) out.push(v);
      }
    }
    return out;
  }
  const span = hi - lo || 1;
  const step = 10 ** Math.floor(Math.log10(span / 4));
  const nice = [1, 2, 5, 10].map((m) => m * step).find((s) => span / s <= 6) ?? step * 10;
  const out: number[] = [];
  for (let v = Math.ceil(lo / nice) * nice; v <= hi + 1e-9; v += nice) out.push(Number(v.toPrecision(6)));
  return out;
}

/**
 * A tick's label: thousands as 'k' (2000 -> '2k'); other whole numbers in full (the sizes 1024 and
 * 2048 read '1.024k' and '2.048k', and past the chart's edge, where the 'k' was cut, as 2.048).
 */
const fmtTick = (v: number) => (Math.abs(v) >= 1000 && v % 1000 === 0 ? `${v / 1000}k` : Math.abs(v) >= 1000 && Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(3))));

export interface ChartOptions {
  /** The drawing's size where there is room for it (it is scaled up to fill up to 38rem). */
  width?: number;
  height?: number;
  xLabel?: string;
  yLabel?: string;
  xLog?: boolean;
  yLog?: boolean;
  yMin?: number;
  yMax?: number;
  label: string;
  /** The x range to show while there are no points (an axis of 1 to 10 said nothing), and the note then written on the plot. */
  xEmpty?: [number, number];
  emptyNote?: string;
  /** Where to mark the x axis (the sizes measured) instead of 1-2-5 steps. */
  xTicks?: readonly number[];
}

/**
 * What a chart shows, as text: its <desc>, the picture's accessible description. The label alone
 * told a screen reader what was plotted and none of the numbers (only the benchmark has a table).
 * A long series (a loss curve) is summed up by its ends and its lowest point.
 */
function dataText(series: Series[], opts: ChartOptions): string {
  const n = (v: number) => String(Number(v.toPrecision(3)));
  const at = ([x, y]: [number, number]) => `${n(y)} at ${n(x)}`;
  const parts = series.map((s) => ({ name: s.name, p: s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y)) }))
    .filter((s) => s.p.length)
    .map(({ name, p }) => (p.length <= 12 ? `${name}: ${p.map(at).join(', ')}`
      : `${name}, ${p.length} points: ${at(p[0])}, ${at(p[p.length - 1])}, lowest ${at(p.reduce((a, b) => (b[1] < a[1] ? b : a)))}`));
  if (!parts.length) return opts.emptyNote ?? 'Nothing plotted yet.';
  return `${opts.yLabel && opts.xLabel ? `${opts.yLabel} by ${opts.xLabel}. ` : ''}${parts.join('; ')}.`;
}

/** Each chart's width as drawn and how to draw it again, for a container that changes width. */
const drawn = new WeakMap<SVGSVGElement, { width: number; redraw: () => void }>();
// The redraw waits for the next frame: drawn inside the observer's callback, the chart's new
// height resized the observed box again, and the browser reported that as an uncaught error
// ('ResizeObserver loop completed with undelivered notifications'), which the site shows as an alert.
const resized = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver((entries) => {
  for (const e of entries) {
    const svg = e.target as SVGSVGElement;
    const d = drawn.get(svg);
    if (d && Math.abs(svg.clientWidth - d.width) > 8) requestAnimationFrame(() => { if (drawn.get(svg) === d) d.redraw(); });
  }
});

/**
 * Draws the chart. Where its box is narrower than `width` (a phone), it is drawn at the box's
 * width in CSS px rather than shrunk: shrunk, its 11 px text was 7-8 px at 360 px. Text and
 * margins follow the reader's font size (the chart's own, over 16 px).
 */
export function lineChart(svg: SVGSVGElement, series: Series[], opts: ChartOptions): void {
  const k = (parseFloat(getComputedStyle(svg).fontSize) || 16) / 16;
  const box = svg.clientWidth;
  const W = box > 0 ? Math.min(box, (opts.width ?? 420) * k) : (opts.width ?? 420) * k;
  drawn.set(svg, { width: box, redraw: () => lineChart(svg, series, opts) });
  resized?.observe(svg);
  const H = (opts.height ?? 220) * k;
  const left = 52 * k;
  // Room for half the last x label, centred on the right edge (about 0.6 em a character).
  const lastX = opts.xTicks?.length ? opts.xTicks[opts.xTicks.length - 1] : undefined;
  const right = Math.max(12, lastX === undefined ? 0 : fmtTick(lastX).length * 3.3 + 3) * k;
  const top = 12 * k;
  const bottom = (40 + (series.length > 1 ? 18 * Math.ceil(series.length / 2) : 0)) * k;
  const all = series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y) && (!opts.xLog || x > 0) && (!opts.yLog || y > 0));
  let [x0, x1] = all.length ? [Math.min(...all.map((p) => p[0])), Math.max(...all.map((p) => p[0]))] : opts.xEmpty ?? [1, 10];
  let [y0, y1] = all.length ? [Math.min(...all.map((p) => p[1])), Math.max(...all.map((p) => p[1]))] : [opts.yLog ? 1 : 0, 10];
  if (opts.yMin !== undefined) y0 = opts.yMin;
  if (opts.yMax !== undefined) y1 = Math.max(y1, opts.yMax);
  if (x1 <= x0) x1 = x0 + 1;
  if (y1 <= y0) y1 = y0 + (Math.abs(y0) || 1);
  const fx = (x: number) => (opts.xLog ? Math.log10(x) : x);
  const fy = (y: number) => (opts.yLog ? Math.log10(y) : y);
  const X = (x: number) => left + ((fx(x) - fx(x0)) / (fx(x1) - fx(x0) || 1)) * (W - left - right);
  const Y = (y: number) => top + (1 - (fy(y) - fy(y0)) / (fy(y1) - fy(y0) || 1)) * (H - top - bottom);
  svg.replaceChildren();
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', opts.label);
  svg.append(node('title', {}, opts.label), node('desc', {}, dataText(series, opts)));
  const g = node('g', { 'font-size': 11 * k, style: 'fill: var(--muted)' });
  for (const t of opts.xTicks?.filter((v) => v >= x0 && v <= x1) ?? ticks(x0, x1, Boolean(opts.xLog))) {
    g.append(node('line', { x1: X(t), x2: X(t), y1: top, y2: H - bottom, style: 'stroke: var(--line)', 'stroke-width': 0.6 }));
    g.append(node('text', { x: X(t), y: H - bottom + 14 * k, 'text-anchor': 'middle' }, fmtTick(t)));
  }
  for (const t of ticks(y0, y1, Boolean(opts.yLog))) {
    g.append(node('line', { x1: left, x2: W - right, y1: Y(t), y2: Y(t), style: 'stroke: var(--line)', 'stroke-width': 0.6 }));
    g.append(node('text', { x: left - 5 * k, y: Y(t) + 4 * k, 'text-anchor': 'end' }, fmtTick(t)));
  }
  g.append(node('rect', { x: left, y: top, width: W - left - right, height: H - top - bottom, fill: 'none', style: 'stroke: var(--line)' }));
  if (opts.xLabel) g.append(node('text', { x: (left + W - right) / 2, y: H - bottom + 30 * k, 'text-anchor': 'middle' }, opts.xLabel));
  if (opts.yLabel) g.append(node('text', { x: 12 * k, y: (top + H - bottom) / 2, transform: `rotate(-90 ${12 * k} ${(top + H - bottom) / 2})`, 'text-anchor': 'middle' }, opts.yLabel));
  if (!all.length && opts.emptyNote) g.append(node('text', { x: (left + W - right) / 2, y: (top + H - bottom) / 2, 'text-anchor': 'middle', 'data-empty': '' }, opts.emptyNote));
  svg.append(g);
  series.forEach((s, i) => {
    const pts = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y) && (!opts.xLog || x > 0) && (!opts.yLog || y > 0));
    if (!pts.length) return;
    // The numbers ride along on the drawing (data-points, data-x/y): a test or a curious visitor
    // reads back exactly what is plotted.
    svg.append(node('path', {
      d: pts.map(([x, y], i) => `${i ? 'L' : 'M'}${X(x).toFixed(1)},${Y(y).toFixed(1)}`).join(''),
      fill: 'none', stroke: s.color, 'stroke-width': 2, 'stroke-dasharray': s.dashed ? '5 4' : 'none',
      'data-series': s.name, 'data-points': JSON.stringify(pts),
    }));
    if (pts.length < 12) for (const [x, y] of pts) svg.append(node('circle', { cx: X(x), cy: Y(y), r: 3 * k, fill: s.color, 'data-series': s.name, 'data-x': x, 'data-y': y }));
    // Legend under the plot (two per row), or inside the top left for a single series.
    const lx = series.length > 1 ? left + (i % 2) * ((W - left) / 2) : left + 8 * k;
    const ly = series.length > 1 ? H - bottom + 48 * k + Math.floor(i / 2) * 18 * k : top + 10 * k;
    svg.append(node('line', { x1: lx, x2: lx + 16 * k, y1: ly, y2: ly, stroke: s.color, 'stroke-width': 2, 'stroke-dasharray': s.dashed ? '5 4' : 'none' }));
    svg.append(node('text', { x: lx + 20 * k, y: ly + 4 * k, 'font-size': 11 * k, style: 'fill: var(--fg)' }, s.name));
  });
}

export function svgEl(id?: string): SVGSVGElement {
  const e = document.createElementNS(NS, 'svg');
  if (id) e.id = id;
  e.classList.add('chart');
  return e;
}
