// Page 2: scoring functions side by side, softmax saturation with d, and masks.
import type { Attnlab, AttentionOptions, ScoreName, Tensor } from 'attnlab';
import '../components/heatmap';
import type { AttnHeatmap } from '../components/heatmap';
import { rng } from '../components/lib';
import { lineChart, svgEl } from './site/chart';
import { $, checkbox, el, slider } from './site/dom';
import { frac, math, row, sqrt, sub, sup, t } from './site/math';
import { getLib, initPage, showError } from './site/shell';
import { bool, num, param, writeHash } from './site/state';

initPage('scoring.html');

const SQ = 6;
const SK = 8;
const DMAX = 512;
const HIDDEN = 8;
const PAD = 2;

const state = {
  logd: param('logd', 3, num(1, 9)),
  seed: param('seed', 1, num(0, 1e9)),
  vl: param('vl', SK, num(0, SK)),
  pad: param('pad', false, bool),
  causal: param('causal', false, bool),
};

interface Panel {
  score: ScoreName;
  title: string;
  eq: Element;
  heat: AttnHeatmap;
  stat: HTMLElement;
}

const q = (...a: Parameters<typeof t>) => t(...a);
const PANELS: Omit<Panel, 'heat' | 'stat'>[] = [
  { score: 'dot', title: 'Dot product', eq: math('a of q and k equals q transpose k', q('a(q, k) ='), sup('q', 'T'), t('k')) },
  { score: 'scaled_dot', title: 'Scaled dot product', eq: math('a of q and k equals q transpose k over square root of d', q('a(q, k) ='), frac(row(sup('q', 'T'), t('k')), sqrt('d'))) },
  { score: 'general', title: 'General (Luong)', eq: math('a of q and k equals q transpose W k', q('a(q, k) ='), sup('q', 'T'), t('W k')) },
  { score: 'additive', title: 'Additive (Bahdanau)', eq: math('a of q and k equals w v transpose tanh of W q q plus W k k', q('a(q, k) ='), sup(sub('w', 'v'), 'T'), t('tanh('), sub('W', 'q'), t('q +'), sub('W', 'k'), t('k)')) },
];

// --- inputs (seeded; every d takes the first d components of fixed DMAX-dim draws, so the
// picture changes smoothly with d, and the draws are made once per seed, not per slider step) ---
/** n draws from N(0, sd²): Box-Muller, both of each pair used, into a preallocated array. */
function normals(n: number, seed: number, sd = 1): Float32Array {
  const r = rng(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i += 2) {
    const m = Math.sqrt(-2 * Math.log(Math.max(1e-12, r()))) * sd;
    const a = 2 * Math.PI * r();
    out[i] = m * Math.cos(a);
    if (i + 1 < n) out[i + 1] = m * Math.sin(a);
  }
  return out;
}

interface Draws { seed: number; Q: Float32Array; K: Float32Array; W: Float32Array; Wq: Float32Array; Wk: Float32Array; wv: Float32Array }
let draws: Draws | null = null;
function drawsFor(seed: number): Draws {
  if (draws?.seed !== seed) {
    draws = {
      seed,
      Q: normals(SQ * DMAX, seed * 7 + 1), K: normals(SK * DMAX, seed * 7 + 2), W: normals(DMAX * DMAX, seed * 7 + 3),
      Wq: normals(HIDDEN * DMAX, seed * 7 + 4), Wk: normals(HIDDEN * DMAX, seed * 7 + 5), wv: normals(HIDDEN, seed * 7 + 6),
    };
  }
  return draws;
}

/** The first `cols` of each of `rows` rows of a [rows, DMAX] draw, times `scale`. */
function block(src: Float32Array, rows: number, cols: number, scale = 1): Float32Array {
  const out = new Float32Array(rows * cols);
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) out[i * cols + j] = src[i * DMAX + j] * scale;
  return out;
}

function inputs(d: number, seed: number): { q: Tensor; k: Tensor; params: Record<ScoreName, AttentionOptions['params']> } {
  const r = drawsFor(seed);
  const s = 1 / Math.sqrt(d);
  return {
    q: { data: block(r.Q, SQ, d), shape: [1, SQ, d] },
    k: { data: block(r.K, SK, d), shape: [1, SK, d] },
    params: {
      dot: undefined, scaled_dot: undefined,
      general: { W: { data: block(r.W, d, d, s), shape: [d, d] } },
      additive: { Wq: { data: block(r.Wq, HIDDEN, d, s), shape: [HIDDEN, d] }, Wk: { data: block(r.Wk, HIDDEN, d, s), shape: [HIDDEN, d] }, wv: { data: r.wv, shape: [HIDDEN] } },
    },
  };
}

// --- layout --------------------------------------------------------------------------------
const dim = slider({ id: 'dim', label: 'Dimension d', min: 1, max: 9, step: 1, value: state.logd, format: (v) => String(2 ** v) });
const vl = slider({ id: 'valid', label: 'Valid length', min: 0, max: SK, step: 1, value: state.vl, format: (v) => (v >= SK ? `${v} (all)` : String(v)) });
const pad = checkbox('pad', `Last ${PAD} keys are padding`, state.pad);
const causal = checkbox('causal', 'Causal', state.causal);
const reseed = el('button', { type: 'button', id: 'reseed', text: 'New queries and keys' });

const panels: Panel[] = PANELS.map((p) => {
  const heat = document.createElement('attn-heatmap') as AttnHeatmap;
  heat.id = `heat-${p.score}`;
  heat.setAttribute('label', `${p.title} attention weights`);
  heat.setAttribute('show-values', '');
  heat.setAttribute('digits', '2');
  heat.setAttribute('cell-size', '40');
  heat.setAttribute('filename', `scores-${p.score}`);
  heat.rowLabels = Array.from({ length: SQ }, (_, i) => `q${i + 1}`);
  const stat = el('p', { class: 'stat', id: `stat-${p.score}` });
  return { ...p, heat, stat };
});

const satChart = svgEl('saturation');
$('app').append(
  el('div', { class: 'controls' }, dim.wrap, vl.wrap, pad.wrap, causal.wrap, reseed),
  el('div', { class: 'grid2' }, ...panels.map((p) => el('section', { class: 'panel', 'aria-labelledby': `h-${p.score}` },
    el('h2', { id: `h-${p.score}`, text: p.title }), p.eq, p.heat, p.stat))),
  el('div', { class: 'grid2', style: 'margin-top: 1rem' },
    el('section', { class: 'panel', 'aria-labelledby': 'h-sat' },
      el('h2', { id: 'h-sat', text: 'Softmax saturates without 1/\u2060√d' }),
      el('p', { class: 'stat', text: 'The largest weight in each row, averaged over the queries, as d grows. Components of q and k are drawn from N(0, 1), so qᵀk has variance d: unscaled, the scores spread out and softmax picks one key. Dividing by √d keeps the variance at 1.' }),
      satChart),
    el('section', { class: 'panel eq', 'aria-labelledby': 'h-eq' },
      el('h2', { id: 'h-eq', text: 'Weights and masks' }),
      math('alpha i j equals exp of a of q i and k j divided by the sum over unmasked l of exp of a of q i and k l',
        sub('α', 'ij'), t('='), frac(row(t('exp(a('), sub('q', 'i'), t(','), sub('k', 'j'), t('))')), row(t('∑'), sub('', 'l ∉ mask'), t('exp(a('), sub('q', 'i'), t(','), sub('k', 'l'), t('))')))),
      el('p', { text: 'A masked key gets weight exactly 0 (drawn hatched). Valid length n: each query sees only the first n keys (d2l’s valid_lens). Padding: a boolean mask that hides <pad> keys. Causal: query i sees keys j ≤ i.' }))));

// --- compute -------------------------------------------------------------------------------
let lib: Attnlab | null = null;
let seed = state.seed;

function options(): { opts: AttentionOptions; mask: boolean[][] } {
  const valid = Number(vl.input.value);
  const opts: AttentionOptions = { returnWeights: true, causal: causal.input.checked };
  if (valid < SK) opts.validLens = Int32Array.of(valid);
  if (pad.input.checked) {
    opts.attnMask = { data: Uint8Array.from({ length: SQ * SK }, (_, i) => (i % SK < SK - PAD ? 1 : 0)), shape: [SQ, SK] };
  }
  const mask = Array.from({ length: SQ }, (_, i) => Array.from({ length: SK }, (_, j) =>
    j >= valid || (pad.input.checked && j >= SK - PAD) || (causal.input.checked && j > i)));
  return { opts, mask };
}

function meanMax(w: Float32Array): number {
  let s = 0;
  for (let i = 0; i < SQ; i++) s += Math.max(...w.subarray(i * SK, (i + 1) * SK));
  return s / SQ;
}

function entropy(w: Float32Array): number {
  let s = 0;
  for (const x of w) if (x > 0) s -= x * Math.log(x);
  return s / SQ;
}

function update(): void {
  if (!lib) return;
  const d = 2 ** Number(dim.input.value);
  const { q, k, params } = inputs(d, seed);
  const { opts, mask } = options();
  const keyLabels = Array.from({ length: SK }, (_, j) => (pad.input.checked && j >= SK - PAD ? '<pad>' : `k${j + 1}`));
  for (const p of panels) {
    const r = lib.attention(q, k, k, { ...opts, score: p.score, params: params[p.score] });
    const w = r.weights!.data;
    p.heat.colLabels = keyLabels;
    p.heat.mask = mask;
    p.heat.data = r.weights!;
    const mm = meanMax(w);
    p.stat.textContent = `mean largest weight ${mm.toFixed(3)} · mean entropy ${entropy(w).toFixed(3)} nats`;
    p.stat.dataset.meanMax = String(mm);
  }
  writeHash({ logd: dim.input.value, seed, vl: vl.input.value, pad: pad.input.checked, causal: causal.input.checked });
  document.body.dataset.result = 'ok';
}

let satRun = 0;
/** The saturation curves, one dimension per task so the page stays responsive. */
function saturation(): void {
  if (!lib) return;
  const run = ++satRun;
  const series = panels.map((p, idx) => ({ name: p.title, color: ['#d9480f', '#3559e0', '#2b8a3e', '#ae3ec9'][idx], dashed: p.score === 'general', points: [] as [number, number][] }));
  const step = (e: number) => {
    if (run !== satRun || !lib) return; // a newer run took over
    const d = 2 ** e;
    const { q, k, params } = inputs(d, seed);
    panels.forEach((p, idx) => {
      const r = lib!.attention(q, k, k, { score: p.score, params: params[p.score], returnWeights: true });
      series[idx].points.push([d, meanMax(r.weights!.data)]);
    });
    if (e < 9) setTimeout(() => step(e + 1), 0);
    else lineChart(satChart, series, { width: 460, height: 240, xLog: true, xLabel: 'dimension d', yLabel: 'mean largest weight', yMin: 0, yMax: 1, label: 'Mean largest attention weight against dimension for the four scores' });
  };
  step(1);
}

for (const input of [dim.input, vl.input]) input.addEventListener('input', update);
for (const input of [pad.input, causal.input]) input.addEventListener('change', update);
reseed.addEventListener('click', () => {
  seed = Math.floor(Math.random() * 1e6);
  update();
  saturation();
});

getLib().then((l) => {
  lib = l;
  update();
  saturation();
}).catch(showError);
