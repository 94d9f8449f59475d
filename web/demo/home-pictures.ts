// Small pictures for the guided path on the home page: plain inline SVG drawn with the page's
// colours (no WebAssembly needed, so the home page stays light).
const NS = 'http://www.w3.org/2000/svg';

function svg(label: string, w = 160, h = 100): SVGSVGElement {
  const e = document.createElementNS(NS, 'svg');
  e.setAttribute('viewBox', `0 0 ${w} ${h}`);
  e.setAttribute('role', 'img');
  e.setAttribute('aria-label', label);
  e.classList.add('pic');
  return e;
}

function add(parent: Element, tag: string, attrs: Record<string, string | number>): SVGElement {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  parent.append(e);
  return e;
}

const viridis = ['#440154', '#3b528b', '#21918c', '#5ec962', '#fde725'];
const cell = (t: number) => viridis[Math.max(0, Math.min(4, Math.round(t * 4)))];

export function poolingPicture(): SVGSVGElement {
  const s = svg('Points and a smooth curve through them');
  const f = (x: number) => 2 * Math.sin(x) + x;
  const X = (x: number) => 8 + x * 29;
  const Y = (y: number) => 92 - y * 11;
  const xs = [0.3, 0.7, 1.1, 1.5, 1.9, 2.4, 2.8, 3.3, 3.7, 4.2, 4.6];
  const noise = [0.4, -0.5, 0.3, 0.6, -0.2, 0.5, -0.6, 0.2, -0.4, 0.5, -0.3];
  let d = '';
  for (let i = 0; i <= 50; i++) {
    const x = (i / 50) * 5;
    let num = 0;
    let den = 0;
    xs.forEach((xi, j) => {
      const w = Math.exp(-(((x - xi) / 0.5) ** 2) / 2);
      num += w * (f(xi) + noise[j]);
      den += w;
    });
    d += `${i ? 'L' : 'M'}${X(x).toFixed(1)},${Y(num / den).toFixed(1)}`;
  }
  add(s, 'path', { d, fill: 'none', stroke: 'var(--accent)', 'stroke-width': 2.5 });
  xs.forEach((x, j) => add(s, 'circle', { cx: X(x), cy: Y(f(x) + noise[j]), r: 3.5, fill: 'none', stroke: '#d9480f', 'stroke-width': 1.5 }));
  return s;
}

export function scoringPicture(): SVGSVGElement {
  const s = svg('Two small weight matrices, one sharp and one smooth');
  const sharp = [[0.9, 0.05, 0.05, 0], [0.05, 0.1, 0.8, 0.05], [0, 0.95, 0.05, 0], [0.1, 0, 0.1, 0.8]];
  const soft = [[0.4, 0.2, 0.3, 0.1], [0.2, 0.3, 0.35, 0.15], [0.2, 0.45, 0.2, 0.15], [0.25, 0.2, 0.2, 0.35]];
  [sharp, soft].forEach((m, k) => m.forEach((r, i) => r.forEach((v, j) => add(s, 'rect', { x: 10 + k * 80 + j * 16, y: 14 + i * 18, width: 16, height: 18, fill: cell(v) }))));
  return s;
}

export function headsPicture(): SVGSVGElement {
  const s = svg('Lines between two columns of tokens, in three colours');
  const cols = ['#3559e0', '#d9480f', '#2b8a3e'];
  const links = [[0, 1, 0], [1, 0, 1], [2, 3, 0], [3, 2, 2], [4, 4, 1], [0, 4, 2], [2, 2, 1], [4, 3, 0]];
  for (const [i, j, hd] of links) add(s, 'line', { x1: 36, y1: 14 + i * 18, x2: 124, y2: 14 + j * 18, stroke: cols[hd], 'stroke-width': 2, 'stroke-opacity': 0.7 });
  for (let i = 0; i < 5; i++) {
    add(s, 'rect', { x: 8, y: 9 + i * 18, width: 24, height: 10, rx: 2, style: 'fill: var(--muted)', opacity: 0.5 });
    add(s, 'rect', { x: 128, y: 9 + i * 18, width: 24, height: 10, rx: 2, style: 'fill: var(--muted)', opacity: 0.5 });
  }
  return s;
}

export function modelsPicture(): SVGSVGElement {
  const s = svg('A grid of small attention maps, layers by heads');
  for (let l = 0; l < 3; l++)
    for (let h = 0; h < 4; h++)
      for (let i = 0; i < 4; i++) {
        // Each thumbnail's one bright cell per row: a previous-token, first-token or diagonal head.
        const j = [Math.max(0, i - 1), 0, i][(l + h) % 3];
        add(s, 'rect', { x: 14 + h * 34 + j * 7, y: 6 + l * 31 + i * 7, width: 7, height: 7, fill: '#3559e0', opacity: 0.85 });
        add(s, 'rect', { x: 14 + h * 34, y: 6 + l * 31 + i * 7, width: 28, height: 7, style: 'fill: var(--muted)', opacity: 0.12 });
      }
  return s;
}

export function positionalPicture(): SVGSVGElement {
  const s = svg('Stripes of sines at falling frequencies');
  for (let p = 0; p < 12; p++) {
    for (let j = 0; j < 20; j++) {
      const w = 1 / 10000 ** ((2 * Math.floor(j / 2)) / 20);
      const v = j % 2 ? Math.cos(p * w) : Math.sin(p * w);
      const t = (v + 1) / 2;
      add(s, 'rect', { x: 10 + j * 7, y: 8 + p * 7, width: 7, height: 7, fill: `rgb(${Math.round(40 + 200 * t)},${Math.round(90 + 60 * (1 - Math.abs(v)))},${Math.round(240 - 200 * t)})` });
    }
  }
  return s;
}

export function performancePicture(): SVGSVGElement {
  const s = svg('Three bars of increasing height');
  [[0.25, '#868e96'], [0.55, '#3559e0'], [0.9, '#d9480f']].forEach(([h, c], i) => add(s, 'rect', { x: 30 + i * 38, y: 92 - Number(h) * 80, width: 26, height: Number(h) * 80, fill: String(c), rx: 2 }));
  add(s, 'line', { x1: 20, x2: 150, y1: 92, y2: 92, style: 'stroke: var(--muted)' });
  return s;
}

export function embedPicture(): SVGSVGElement {
  const s = svg('A page with a framed widget inside it');
  add(s, 'rect', { x: 14, y: 8, width: 132, height: 84, rx: 6, fill: 'none', style: 'stroke: var(--muted)' });
  for (let i = 0; i < 3; i++) add(s, 'rect', { x: 24, y: 18 + i * 8, width: 80 - i * 16, height: 4, rx: 2, style: 'fill: var(--muted)', opacity: 0.5 });
  add(s, 'rect', { x: 24, y: 46, width: 112, height: 38, rx: 4, fill: 'none', style: 'stroke: var(--accent)', 'stroke-width': 2 });
  for (let j = 0; j < 6; j++) add(s, 'rect', { x: 30 + j * 17, y: 52, width: 15, height: 26, fill: cell(((j * 3) % 5) / 4) });
  return s;
}

export function efficientPicture(): SVGSVGElement {
  const s = svg('A banded sparse mask: each row sees a window of keys, and a global first token sees and is seen by every other');
  const n = 12;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const on = Math.abs(i - j) <= 1 || j === 0 || i === 0;
      add(s, 'rect', { x: 34 + j * 7.5, y: 5 + i * 7.5, width: 7, height: 7, fill: on ? '#3559e0' : 'none', style: on ? '' : 'stroke: var(--line)', 'stroke-width': 0.6 });
    }
  }
  return s;
}

export function translationPicture(): SVGSVGElement {
  const s = svg('Source words along the top, output words down the side, and an alignment matrix between them, mostly diagonal with one swapped pair');
  // "le chat noir dort ." -> "the black cat sleeps .": noir/black and chat/cat swap places.
  const align = [[0.9, 0.05, 0.05, 0, 0], [0.05, 0.1, 0.8, 0.05, 0], [0.05, 0.85, 0.05, 0.05, 0], [0, 0.05, 0.05, 0.85, 0.05], [0, 0, 0, 0.1, 0.9]];
  const x0 = 52, y0 = 20, c = 16;
  for (let j = 0; j < 5; j++) add(s, 'rect', { x: x0 + j * c + 2, y: 6, width: c - 4, height: 8, rx: 2, style: 'fill: var(--muted)', opacity: 0.5 });
  for (let i = 0; i < 5; i++) add(s, 'rect', { x: 20, y: y0 + i * c + 4, width: 26, height: 8, rx: 2, fill: '#d9480f', opacity: 0.6 });
  align.forEach((r, i) => r.forEach((v, j) => add(s, 'rect', { x: x0 + j * c, y: y0 + i * c, width: c, height: c, fill: cell(v) })));
  add(s, 'path', { d: `M${x0 + 5 * c + 8},${y0 + 4} l10,0 l0,${4 * c} l-6,-6 m6,6 l6,-6`, fill: 'none', style: 'stroke: var(--accent)', 'stroke-width': 1.5 });
  return s;
}
