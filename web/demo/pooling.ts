// Page 1: attention pooling (Nadaraya-Watson regression), with a trainable bandwidth.
import type { KernelName } from 'attnlab';
import '../components/heatmap';
import '../components/regression';
import type { AttnHeatmap } from '../components/heatmap';
import { bandwidthText, samplePoints, type AttnRegression, type Point, type RegressionResult } from '../components/regression';
import { lineChart, svgEl } from './site/chart';
import { $, checkbox, el, handOver, select, slider } from './site/dom';
import { frac, math, op, row, sub, sum, t, text } from './site/math';
import { getLib, initPage, showError } from './site/shell';
import { readHash, writeHash } from './site/state';
import { decodePoints, encodePoints, POOLING, poolingView } from './site/view-state';
import { looLoss } from './nw-loss';
import type { TrainMessage, TrainRequest } from './train.worker';
import { stopOnWorkerError } from './worker-error';

initPage('pooling.html');

const { hMin: H_MIN, hMax: H_MAX } = POOLING;
const toH = (v: number) => H_MIN * (H_MAX / H_MIN) ** (v / 100);
const toSlider = (h: number) => (100 * Math.log(h / H_MIN)) / Math.log(H_MAX / H_MIN);

// The hash's values within the controls' ranges (view-state.ts: the embed recipes read it too).
const state = poolingView(readHash());
const initialPoints = readHash().has('pts') ? decodePoints(readHash().get('pts')!) : undefined;

// --- layout --------------------------------------------------------------------------------
const kernel = select('kernel', 'Kernel', [['gaussian', 'Gaussian'], ['boxcar', 'Boxcar'], ['epanechnikov', 'Epanechnikov']], state.kernel);
const bw = slider({ id: 'bandwidth', label: 'Bandwidth', min: 0, max: 100, step: 0.5, value: toSlider(state.h), format: (v) => bandwidthText(toH(v)) });
const npts = slider({ id: 'npoints', label: 'Points', min: POOLING.nMin, max: POOLING.nMax, step: 1, value: state.n });
const reset = el('button', { type: 'button', id: 'reset', text: 'New sample' });
const sortKeys = checkbox('sorted', 'Sort keys by x', state.sorted);

const reg = document.createElement('attn-regression') as AttnRegression;
reg.id = 'regression';
reg.setAttribute('samples', '40');
reg.setAttribute('filename', 'nadaraya-watson');
reg.kernel = state.kernel;
reg.bandwidth = state.h;
reg.setAttribute('n', String(state.n));
reg.setAttribute('seed', String(state.seed));
if (initialPoints) reg.points = initialPoints;
/**
 * The slider's readout (and spoken value) is the widget's bandwidth, as its legend writes it: the
 * slider moves in 2 % steps, so a bandwidth from the URL or from training sits between two of its
 * positions (h = 0.5 read 0.495 beside the legend's 0.50).
 */
const showBandwidth = () => bw.show(bandwidthText(reg.bandwidth));
showBandwidth();

const heat = document.createElement('attn-heatmap') as AttnHeatmap;
heat.id = 'weights';
heat.setAttribute('label', 'Attention weights: queries (rows) by training keys (columns)');
heat.setAttribute('row-title', 'query x');
heat.setAttribute('col-title', 'key xᵢ');
heat.setAttribute('filename', 'nw-weights');
heat.setAttribute('cell-size', '14');

const lossOut = el('span', { id: 'loss', class: 'stat', text: '–' });
const trainBtn = el('button', { type: 'button', id: 'train', class: 'primary', text: 'Train the bandwidth' });
const cancelBtn = el('button', { type: 'button', id: 'cancel', text: 'Cancel', disabled: true });
const progress = el('progress', { id: 'train-progress', max: 1, value: 0, 'aria-label': 'Training progress' });
const trainStatus = el('span', { id: 'train-status', class: 'stat', 'aria-live': 'polite', text: 'Not trained yet.' });
const lossChart = svgEl('loss-chart');

const K = (name: string, body: Element) => el('div', {}, el('h3', { text: name }), body);
/** |x| with its bars as fences: a flat '|u|' spaced the second bar as an operator, '|u | ≤ 1'. */
const abs = (x: string) => {
  const [open, close] = [op('|'), op('|')];
  open.setAttribute('form', 'prefix');
  close.setAttribute('form', 'postfix');
  return row(open, t(x), close);
};
const equations = el('div', { class: 'panel eq' },
  el('h2', { text: 'The equations' }),
  math('f of x equals the sum over i from 1 to n of alpha of x and x i times y i',
    t('f(x) ='), sum(t('i=1'), t('n')), t('α(x, '), sub('x', 'i'), t(')'), sub('y', 'i')),
  math('alpha of x and x i equals K of x minus x i over h, divided by the sum over j of K of x minus x j over h',
    t('α(x, '), sub('x', 'i'), t(') ='), frac(row(t('K('), frac(row(t('x -'), sub('x', 'i')), 'h'), t(')')), row(sum(t('j')), t('K('), frac(row(t('x -'), sub('x', 'j')), 'h'), t(')')))),
  el('p', { text: 'The query is x, the keys are the training inputs xᵢ, the values are the targets yᵢ. Kernels, with u = (x − xᵢ)/h:' }),
  K('Gaussian', math('K of u equals exp of minus u squared over 2', t('K(u) = exp(-'), frac(row(t('u'), t('²')), '2'), t(')'))),
  K('Boxcar', math('K of u equals 1 if absolute u at most 1, else 0', t('K(u) = 1'), text('\u00a0 if \u00a0'), abs('u'), op('≤'), t('1'), text(',\u00a0 else \u00a0'), t('0'))),
  K('Epanechnikov', math('K of u equals max of 0 and 1 minus u squared', t('K(u) = max(0, 1 - u²)'))),
  el('p', { class: 'stat', text: 'd2l’s code gives this name to max(0, 1 − |u|), the triangular kernel; this page’s is Epanechnikov’s own.' }),
  el('p', { text: 'Where no training point lies inside a boxcar’s window (|u| ≤ 1) or an Epanechnikov one (|u| < 1), every K is 0 and α is 0/0 (NaN in d2l’s code): attnlab gives every weight 0 and f(x) = 0, which the plot does not draw as a prediction (its line breaks).' }),
  el('p', { text: 'Training minimises the leave-one-out loss: each yᵢ predicted from the other points, (1/n) Σ (f₋ᵢ(xᵢ) − yᵢ)², by gradient descent on log h. A point with no other point inside its window counts as predicted 0 (attnlab’s f there), so a bandwidth that leaves points alone costs their yᵢ².' }));

$('app').append(
  el('div', { class: 'controls' }, kernel.wrap, bw.wrap, npts.wrap, reset, sortKeys.wrap),
  el('div', { class: 'side' },
    el('section', { class: 'panel', 'aria-labelledby': 'h-plot' }, el('h2', { id: 'h-plot', text: 'Regression' }), reg),
    equations),
  el('div', { class: 'grid2', style: 'margin-top: 1rem' },
    el('section', { class: 'panel', 'aria-labelledby': 'h-weights' }, el('h2', { id: 'h-weights', text: 'Weights (queries × keys)' }), heat),
    el('section', { class: 'panel', 'aria-labelledby': 'h-train' },
      el('h2', { id: 'h-train', text: 'Learn the bandwidth' }),
      el('div', { class: 'controls' }, trainBtn, cancelBtn, progress),
      el('p', { class: 'stat' }, 'Leave-one-out loss at this h: ', lossOut),
      trainStatus, lossChart)));

// --- behaviour -----------------------------------------------------------------------------
let lib: Awaited<ReturnType<typeof getLib>> | null = null;
let lossHistory: [number, number][] = [];
const TRAIN_STEPS = 80;

function drawLoss(): void {
  lineChart(lossChart, [{ name: 'leave-one-out loss', color: 'var(--accent)', points: lossHistory }], {
    width: 420, height: 200, xLabel: 'step', yLabel: 'loss', label: 'Training loss by step',
    xEmpty: [0, TRAIN_STEPS], emptyNote: 'Train the bandwidth to plot its loss here.',
  });
}
drawLoss();

function updateLoss(): void {
  if (!lib) return;
  const loss = looLoss(lib, reg.points, reg.kernel, reg.bandwidth);
  lossOut.textContent = Number.isFinite(loss) ? loss.toFixed(4) : '–';
  lossOut.dataset.value = String(loss);
}

function onResult(r: RegressionResult): void {
  const pts = reg.points;
  const N = pts.length;
  const Q = r.queries.length;
  const order = pts.map((_, i) => i);
  if (sortKeys.input.checked) order.sort((a, b) => pts[a].x - pts[b].x);
  const rows: number[][] = [];
  for (let q = 0; q < Q; q++) rows.push(order.map((j) => r.weights[q * N + j]));
  heat.rowLabels = Array.from(r.queries, (x) => x.toFixed(2));
  heat.colLabels = order.map((j) => pts[j].x.toFixed(2));
  heat.data = rows;
  heat.dataset.kernel = r.kernel;
  heat.dataset.bandwidth = String(r.bandwidth);
  updateLoss();
  document.body.dataset.result = 'ok';
}

reg.addEventListener('attn-change', (e) => onResult((e as CustomEvent<RegressionResult>).detail));
reg.addEventListener('attn-points', (e) => writeHash({ pts: encodePoints((e as CustomEvent<{ points: Point[] }>).detail.points) }));

kernel.input.addEventListener('change', () => {
  reg.kernel = kernel.input.value as KernelName;
  writeHash({ kernel: kernel.input.value });
});
bw.input.addEventListener('input', () => {
  const h = toH(Number(bw.input.value));
  reg.bandwidth = h;  // the slider's own readout already says bandwidthText(h)
  writeHash({ h: h.toFixed(3) });
});
npts.input.addEventListener('change', () => {
  reg.setAttribute('n', npts.input.value);
  writeHash({ n: npts.input.value, pts: null });
});
reset.addEventListener('click', () => {
  const seed = Math.floor(Math.random() * 1e6);
  reg.setAttribute('seed', String(seed));
  reg.points = samplePoints(Number(npts.input.value), seed);
  writeHash({ seed, pts: null });
});
sortKeys.input.addEventListener('change', () => {
  writeHash({ sorted: sortKeys.input.checked });
  const r = reg.result;
  if (r) onResult(r);
});

let worker: Worker | null = null;
function stopTraining(message: string): void {
  worker?.terminate();
  worker = null;
  handOver(cancelBtn, trainBtn);
  trainStatus.textContent = message;
}

trainBtn.addEventListener('click', () => {
  if (worker) return;
  lossHistory = [];
  worker = new Worker(new URL('./train.worker.ts', import.meta.url), { type: 'module' });
  handOver(trainBtn, cancelBtn);
  progress.value = 0;
  delete trainStatus.dataset.done;
  delete trainStatus.dataset.cancelled;
  trainStatus.dataset.step = '0';
  trainStatus.textContent = 'Training in a Worker…';
  const start = reg.bandwidth;
  if (lib) lossHistory.push([0, looLoss(lib, reg.points, reg.kernel, start)]);
  worker.onmessage = (e: MessageEvent<TrainMessage>) => {
    const m = e.data;
    if (m.type === 'error') {
      stopTraining(`Training failed: ${m.message}`);
      showError(new Error(m.message));
      return;
    }
    if (m.type === 'step') {
      lossHistory.push([m.step, m.loss]);
      progress.value = m.step / m.steps;
      reg.bandwidth = m.bandwidth;
      // The thumb follows; the bandwidth stays the trained one, not the nearest slider position.
      bw.input.value = String(toSlider(m.bandwidth));
      showBandwidth();
      writeHash({ h: m.bandwidth.toFixed(3) });
      trainStatus.textContent = `step ${m.step}/${m.steps}: ${bandwidthText(m.bandwidth)}, loss ${m.loss.toFixed(4)}`;
      trainStatus.dataset.step = String(m.step);
      drawLoss();
      return;
    }
    progress.value = 1;
    stopTraining(`Done: ${bandwidthText(m.bandwidth)} (from ${start.toFixed(3)}), leave-one-out loss ${m.loss.toFixed(4)}.`);
    trainStatus.dataset.done = '1';
  };
  stopOnWorkerError(worker, stopTraining, 'Training failed to start.', 'training worker failed');
  const req: TrainRequest = { points: reg.points, kernel: reg.kernel, bandwidth: start, steps: TRAIN_STEPS, lr: 0.08, range: [H_MIN, H_MAX], delayMs: 20 };
  worker.postMessage(req);
});
cancelBtn.addEventListener('click', () => {
  // Terminating the Worker stops it between steps; the bandwidth stays where training left it.
  stopTraining(`Cancelled after step ${trainStatus.dataset.step ?? 0}: h stays ${reg.bandwidth.toFixed(3)}.`);
  trainStatus.dataset.cancelled = '1';
});

getLib().then((l) => {
  lib = l;
  reg.lib = l;
}).catch(showError);
