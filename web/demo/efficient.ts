// Page 6: efficient attention: sparse patterns drawn as masks, and their cost measured in the
// visitor's browser (in a Worker) as the sequence grows.
import '../components/heatmap';
import type { AttnHeatmap } from '../components/heatmap';
import { lineChart, svgEl, type Series } from './site/chart';
import { $, checkbox, el, slider } from './site/dom';
import { frac, math, row, sub, sup, t } from './site/math';
import { getLib, initPage, showError } from './site/shell';
import { bool, num, param, writeHash } from './site/state';
import { efficientApi, patternFor, type EfficientApi, type Method } from './efficient-api';
import type { CostMessage, CostRequest } from './efficient.worker';

initPage('efficient.html');

const METHODS: { method: Method; title: string; color: string; cost: string }[] = [
  // title: panel heading; the chart's legend uses the first word.
  { method: 'dense', title: 'Dense', color: '#868e96', cost: 'O(S²·d)' },
  { method: 'local', title: 'Local (sliding window)', color: '#3559e0', cost: 'O(S·w·d)' },
  { method: 'longformer', title: 'Longformer (window + global)', color: '#d9480f', cost: 'O(S·(w+g)·d)' },
  { method: 'bigbird', title: 'BigBird (blocks: window, global, random)', color: '#2b8a3e', cost: 'O(S·b·d)' },
  { method: 'linear', title: 'Linear (elu + 1 features)', color: '#ae3ec9', cost: 'O(S·d²)' },
];

const state = {
  S: param('S', 48, num(8, 128)),
  window: param('w', 3, num(0, 32)),
  block: param('b', 4, num(1, 32)),
  causal: param('causal', false, bool),
};

const S = slider({ id: 'seq', label: 'Tokens S', min: 8, max: 128, step: 8, value: state.S });
const win = slider({ id: 'window', label: 'Window w', min: 0, max: 16, step: 1, value: state.window });
const block = slider({ id: 'block', label: 'BigBird block', min: 2, max: 16, step: 1, value: state.block });
const causal = checkbox('causal', 'Causal', state.causal);
const note = el('p', { class: 'note', id: 'api-note', hidden: true });
const heats = new Map<Method, AttnHeatmap>();
const stats = new Map<Method, HTMLElement>();
for (const m of METHODS.filter((x) => x.method !== 'linear' && x.method !== 'dense')) {
  const h = document.createElement('attn-heatmap') as AttnHeatmap;
  h.id = `mask-${m.method}`;
  h.setAttribute('label', `${m.title}: which keys (columns) each query (rows) scores`);
  h.setAttribute('scale', 'blues');
  h.setAttribute('cell-size', '6');
  h.setAttribute('row-title', 'query');
  h.setAttribute('col-title', 'key');
  h.setAttribute('filename', `pattern-${m.method}`);
  heats.set(m.method, h);
  stats.set(m.method, el('p', { class: 'stat', id: `visible-${m.method}` }));
}
const runBtn = el('button', { type: 'button', id: 'run-cost', class: 'primary', text: 'Measure the cost' });
const cancelBtn = el('button', { type: 'button', id: 'cancel-cost', text: 'Cancel', disabled: true });
const progress = el('progress', { id: 'cost-progress', max: 1, value: 0, 'aria-label': 'Measurement progress' });
const costStatus = el('p', { class: 'stat', id: 'cost-status', 'aria-live': 'polite', text: 'Not measured yet.' });
const chart = svgEl('cost-chart');

const live = el('div', { id: 'live' });
$('app').append(note, live);
live.append(
  el('div', { class: 'controls' }, S.wrap, win.wrap, block.wrap, causal.wrap),
  el('div', { class: 'grid2' }, ...METHODS.filter((m) => heats.has(m.method)).map((m) => el('section', { class: 'panel', 'aria-labelledby': `h-${m.method}` },
    el('h2', { id: `h-${m.method}`, text: m.title }), heats.get(m.method)!, stats.get(m.method)!))),
  el('div', { class: 'side', style: 'margin-top: 1rem' },
    el('section', { class: 'panel', 'aria-labelledby': 'h-cost' },
      el('h2', { id: 'h-cost', text: 'Cost as S grows, measured here' }),
      el('div', { class: 'controls' }, runBtn, cancelBtn, progress), costStatus, chart),
    el('section', { class: 'panel eq', 'aria-labelledby': 'h-eq' },
      el('h2', { id: 'h-eq', text: 'The equations' }),
      math('sparse attention: softmax over the keys j in N of i', sub('o', 'i'), t('='), t('∑'), sub('', row(t('j ∈ N(i)'))), t('softmax('), sup(sub('q', 'i'), 'T'), sub('k', 'j'), t('/ √d)'), sub('v', 'j')),
      el('p', { text: 'A sparse pattern lets query i score only the keys in its neighbourhood N(i): a window, global tokens, blocks. The cost falls from S² to S times the neighbourhood.' }),
      math('linear attention: o i equals phi of q i transpose times the sum of phi of k j v j transpose, over phi of q i transpose times the sum of phi of k j',
        sub('o', 'i'), t('='), frac(
          row(sup(row(t('φ('), sub('q', 'i'), t(')')), 'T'), t('∑'), sub('', 'j'), t('φ('), sub('k', 'j'), t(')'), sup(sub('v', 'j'), 'T')),
          row(sup(row(t('φ('), sub('q', 'i'), t(')')), 'T'), t('∑'), sub('', 'j'), t('φ('), sub('k', 'j'), t(')')))),
      el('p', { text: 'Linear attention replaces exp(q·k) with a product of feature maps φ, so the sums over keys are computed once for all queries: no S × S matrix at all.' }),
      ...METHODS.map((m) => el('p', { class: 'stat', text: `${m.title}: ${m.cost}` })))));

let api: EfficientApi | null = null;

function draw(): void {
  if (!api) return;
  const n = Number(S.input.value);
  for (const [method, h] of heats) {
    const p = patternFor(method, Number(win.input.value), Number(block.input.value))!;
    const m = api.attentionPattern(p, n, n, { causal: causal.input.checked });
    const rows = Array.from({ length: n }, (_, i) => Array.from(m.data.subarray(i * n, (i + 1) * n), (x) => (x ? 1 : 0)));
    h.mask = rows.map((r) => r.map((x) => !x));
    h.data = rows;
    const visible = rows.flat().reduce<number>((a, b) => a + b, 0);
    stats.get(method)!.textContent = `${visible} of ${n * n} query-key pairs scored (${((100 * visible) / (n * n)).toFixed(1)}%).`;
    stats.get(method)!.dataset.visible = String(visible);
  }
  writeHash({ S: n, w: win.input.value, b: block.input.value, causal: causal.input.checked });
}

let worker: Worker | null = null;
const results = new Map<Method, [number, number][]>();
function stop(msg: string): void {
  worker?.terminate();
  worker = null;
  runBtn.disabled = !api;
  cancelBtn.disabled = true;
  costStatus.textContent = msg;
}
function drawChart(): void {
  const series: Series[] = METHODS.filter((m) => results.has(m.method)).map((m) => ({ name: m.title.split(' ')[0], color: m.color, points: results.get(m.method)! }));
  lineChart(chart, series, { width: 520, height: 300, xLog: true, yLog: true, xLabel: 'sequence length S', yLabel: 'ms per call', label: 'Milliseconds per attention call against sequence length, per method' });
}
runBtn.addEventListener('click', () => {
  if (worker) return;
  results.clear();
  worker = new Worker(new URL('./efficient.worker.ts', import.meta.url), { type: 'module' });
  runBtn.disabled = true;
  cancelBtn.disabled = false;
  costStatus.textContent = 'Measuring in a Worker…';
  worker.onmessage = (e: MessageEvent<CostMessage>) => {
    const m = e.data;
    if (m.type === 'result') {
      if (!results.has(m.method)) results.set(m.method, []);
      results.get(m.method)!.push([m.S, m.ms]);
      progress.value = m.done / m.total;
      costStatus.textContent = `S = ${m.S}: ${m.method} ${m.ms.toFixed(2)} ms`;
      drawChart();
    } else if (m.type === 'done') {
      stop('Done.');
      document.body.dataset.cost = 'done';
    } else if (m.type === 'missing') {
      stop('This attnlab build has no efficient-attention functions.');
    } else {
      stop(`Failed: ${m.message}`);
      showError(new Error(m.message));
    }
  };
  const req: CostRequest = { sizes: [256, 512, 1024, 2048], dim: 32, methods: METHODS.map((m) => m.method), window: 16, block: 16, minMs: 120 };
  worker.postMessage(req);
});
cancelBtn.addEventListener('click', () => stop('Cancelled.'));
for (const s of [S.input, win.input, block.input]) s.addEventListener('input', draw);
causal.input.addEventListener('change', draw);
drawChart();

getLib().then((lib) => {
  api = efficientApi(lib);
  if (!api) {
    note.hidden = false;
    live.hidden = true;
    note.textContent = 'This build of attnlab has no sparse or linear attention yet (attentionPattern, linearAttention): this page draws and measures them as soon as the library has them.';
    runBtn.disabled = true;
    document.body.dataset.api = 'missing';
  } else {
    draw();
    document.body.dataset.api = 'ready';
  }
  document.body.dataset.result = 'ok';
}).catch(showError);
