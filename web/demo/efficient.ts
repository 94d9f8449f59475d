// Page 6: efficient attention: sparse patterns drawn as masks, LSH's buckets per round, and their
// cost (with linear, LSH and Synthesizer attention) measured in the visitor's browser (in a Worker)
// as the sequence grows.
import '../components/heatmap';
import type { AttnHeatmap } from '../components/heatmap';
import { lineChart, svgEl, type Series } from './site/chart';
import { $, checkbox, el, handOver, select, slider } from './site/dom';
import { frac, math, row, sub, sup, t } from './site/math';
import { getLib, initPage, showError } from './site/shell';
import { bool, num, param, writeHash } from './site/state';
import { gaussian, rng } from '../components/lib';
import { efficientApi, lshApi, patternFor, type EfficientApi, type Method } from './efficient-api';
import type { CostMessage, CostRequest } from './efficient.worker';
import { stopOnWorkerError } from './worker-error';

initPage('efficient.html');

const METHODS: { method: Method; title: string; color: string; cost: string }[] = [
  // title: panel heading; the chart's legend uses the first word.
  { method: 'dense', title: 'Dense', color: '#868e96', cost: 'O(S²·d)' },
  { method: 'local', title: 'Local (sliding window)', color: '#3559e0', cost: 'O(S·w·d)' },
  { method: 'longformer', title: 'Longformer (window + global)', color: '#d9480f', cost: 'O(S·(w+g)·d), g global tokens' },
  { method: 'bigbird', title: 'BigBird (blocks: window, global, random)', color: '#2b8a3e', cost: 'O(S·b·d)' },
  { method: 'linear', title: 'Linear (elu + 1 features)', color: '#ae3ec9', cost: 'O(S·d²)' },
  { method: 'lsh', title: 'LSH (Reformer: chunks of 32, 2 rounds)', color: '#c2255c', cost: 'O(r·S·(c + B)·d), B = S/c buckets' },
  { method: 'synthesizer', title: 'Synthesizer (dense: an MLP per token)', color: '#0b7285', cost: 'O(S²·(h + d)), h the MLP’s width' },
];
const PATTERNS: Method[] = ['local', 'longformer', 'bigbird'];

const state = {
  S: param('S', 48, num(8, 128)),
  window: param('w', 3, num(0, 32)),
  block: param('b', 4, num(1, 32)),
  causal: param('causal', false, bool),
  buckets: param('lshB', 4, (x) => (['2', '4', '8'].includes(x) ? Number(x) : undefined)),
  hashes: param('lshH', 2, num(1, 4)),
  round: param('lshR', 1, num(0, 4)),
  sorted: param('lshSort', true, bool),
};

const S = slider({ id: 'seq', label: 'Tokens S', min: 8, max: 128, step: 8, value: state.S });
const win = slider({ id: 'window', label: 'Window w', min: 0, max: 16, step: 1, value: state.window });
const block = slider({ id: 'block', label: 'BigBird block', min: 2, max: 16, step: 1, value: state.block });
const causal = checkbox('causal', 'Causal', state.causal);
const buckets = select('lsh-buckets', 'LSH buckets', [['2', '2'], ['4', '4'], ['8', '8']] as const, String(state.buckets) as '2' | '4' | '8');
const hashes = slider({ id: 'lsh-hashes', label: 'Hash rounds', min: 1, max: 4, step: 1, value: state.hashes });
const round = slider({ id: 'lsh-round', label: 'Round (0: all)', min: 0, max: 4, step: 1, value: Math.min(state.round, state.hashes) });
const sorted = checkbox('lsh-sort', 'Sort by bucket', state.sorted);
const lshHeat = document.createElement('attn-heatmap') as AttnHeatmap;
lshHeat.id = 'lsh-seen';
lshHeat.setAttribute('scale', 'blues');
lshHeat.setAttribute('cell-size', '6');
lshHeat.setAttribute('row-title', 'query · bucket');
lshHeat.setAttribute('col-title', 'key');
lshHeat.setAttribute('filename', 'lsh-buckets');
const lshStat = el('p', { class: 'stat', id: 'lsh-stat' });
const lshPanel = el('section', { class: 'panel', 'aria-labelledby': 'h-lsh', hidden: true },
  el('h2', { id: 'h-lsh', text: 'LSH attention (Reformer): buckets per round' }),
  el('p', { text: 'Shared queries and keys are hashed by a random rotation into buckets, sorted by bucket and cut into chunks of S / buckets tokens; each query sees its chunk and the one before, but not itself. Tokens are drawn around 6 directions, so similar tokens share buckets. More rounds, more of each query\'s neighbours found.' }),
  el('div', { class: 'controls' }, buckets.wrap, hashes.wrap, round.wrap, sorted.wrap), lshHeat, lshStat);
const note = el('p', { class: 'note', id: 'api-note', hidden: true });
const heats = new Map<Method, AttnHeatmap>();
const stats = new Map<Method, HTMLElement>();
for (const m of METHODS.filter((x) => PATTERNS.includes(x.method))) {
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
    el('h2', { id: `h-${m.method}`, text: m.title }), heats.get(m.method)!, stats.get(m.method)!)), lshPanel),
  el('div', { class: 'side', style: 'margin-top: 1rem' },
    el('section', { class: 'panel', 'aria-labelledby': 'h-cost' },
      el('h2', { id: 'h-cost', text: 'Cost as S grows, measured here' }),
      el('div', { class: 'controls' }, runBtn, cancelBtn, progress), costStatus, chart),
    el('section', { class: 'panel eq', 'aria-labelledby': 'h-eq' },
      el('h2', { id: 'h-eq', text: 'The equations' }),
      math('o i equals the sum over j in N of i of softmax of q i transpose k j over root d, times v j', sub('o', 'i'), t('='), t('∑'), sub('', row(t('j ∈ N(i)'))), t('softmax('), sup(sub('q', 'i'), 'T'), sub('k', 'j'), t('/ √d)'), sub('v', 'j')),
      el('p', { text: 'A sparse pattern lets query qᵢ score only the keys kⱼ in its neighbourhood N(i): a window, global tokens, blocks; the softmax runs over N(i) alone, and d is the length of a query and a key. The cost falls from S² to S times the neighbourhood.' }),
      math('linear attention: o i equals phi of q i transpose times the sum of phi of k j v j transpose, over phi of q i transpose times the sum of phi of k j',
        sub('o', 'i'), t('='), frac(
          row(sup(row(t('φ('), sub('q', 'i'), t(')')), 'T'), t('∑'), sub('', 'j'), t('φ('), sub('k', 'j'), t(')'), sup(sub('v', 'j'), 'T')),
          row(sup(row(t('φ('), sub('q', 'i'), t(')')), 'T'), t('∑'), sub('', 'j'), t('φ('), sub('k', 'j'), t(')')))),
      el('p', { text: 'Linear attention replaces exp(qᵢᵀkⱼ/\u2060√d) with a product of feature maps, φ(qᵢ)ᵀφ(kⱼ), so the sums over keys are computed once for all queries: no S × S matrix at all.' }),
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
  drawLsh(n);
  writeHash({ S: n, w: win.input.value, b: block.input.value, causal: causal.input.checked, lshB: buckets.input.value, lshH: hashes.input.value, lshR: round.input.value, lshSort: sorted.input.checked });
}

/** S tokens of size 16 around 6 random directions (seeded), as shared query-keys. */
function clusteredTokens(n: number): Float32Array {
  const g = gaussian(rng(5));
  const centers = Array.from({ length: 6 * 16 }, g);
  return Float32Array.from({ length: n * 16 }, (_, t) => 3 * centers[((Math.floor(t / 16) * 5) % 6) * 16 + (t % 16)] + g());
}

function drawLsh(n: number): void {
  const lsh = api && lshApi(api);
  lshPanel.hidden = !lsh;
  if (!lsh) return;
  const nHashes = Number(hashes.input.value);
  round.input.max = String(nHashes);
  if (Number(round.input.value) > nHashes) round.input.value = String(nHashes);
  round.out.textContent = round.input.value;
  const r = Number(round.input.value);
  const qk = { data: clusteredTokens(n), shape: [n, 16] };
  const res = lsh.lshAttention(qk, qk, { nBuckets: Number(buckets.input.value), nHashes, causal: causal.input.checked, returnBuckets: true, returnAttended: true });
  const W = res.attended!.shape[2];
  const seen = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (let h = 0; h < nHashes; h++) {
    if (r !== 0 && h !== r - 1) continue;
    for (let i = 0; i < n; i++) {
      for (let w = 0; w < W; w++) {
        const j = res.attended!.data[(h * n + i) * W + w];
        if (j >= 0) seen[i][j] += 1;
      }
    }
  }
  const bucketOf = (i: number) => res.buckets!.data[(r === 0 ? 0 : r - 1) * n + i];
  // Sorted as the round sorts them (by bucket, then position), chunks show as blocks.
  const order = Array.from({ length: n }, (_, i) => i);
  if (sorted.input.checked) order.sort((a, b) => bucketOf(a) - bucketOf(b) || a - b);
  lshHeat.rowLabels = order.map((i) => `${i} · b${bucketOf(i)}`);
  lshHeat.colLabels = order.map(String);
  lshHeat.mask = order.map((i) => order.map((j) => seen[i][j] === 0));
  lshHeat.data = order.map((i) => order.map((j) => seen[i][j]));
  lshHeat.min = 0;
  lshHeat.max = r === 0 ? nHashes : 1;
  // The legend shows only the colour scale's ends (0 and the rounds): say what the colour counts.
  const colour = r === 0
    ? `colour: in how many of the ${nHashes} rounds the query scores the key, 1 to ${nHashes}; hatched: in none`
    : 'coloured: the query scores the key; hatched: it does not';
  lshHeat.setAttribute('label', `LSH, ${r === 0 ? `all ${nHashes} rounds` : `round ${r}`}: which keys (columns) each query (rows, labelled with its bucket) scores; ${colour}`);
  const pairs = seen.flat().filter((x) => x > 0).length;
  lshStat.textContent = `${r === 0 ? `All ${nHashes} rounds` : `Round ${r}`}: ${pairs} of ${n * n} query-key pairs scored (${((100 * pairs) / (n * n)).toFixed(1)}%); ${colour}. Row labels give each query's position and bucket${r === 0 ? ' in round 1' : ''}${sorted.input.checked ? ', rows and columns in that bucket order' : ''}. From attnlab's lshAttention({ returnBuckets, returnAttended }).`;
  lshStat.dataset.pairs = String(pairs);
}

const COST_SIZES = [256, 512, 1024, 2048] as const;
let worker: Worker | null = null;
const results = new Map<Method, [number, number][]>();
function stop(msg: string): void {
  worker?.terminate();
  worker = null;
  handOver(cancelBtn, runBtn, Boolean(api));
  costStatus.textContent = msg;
}
function drawChart(): void {
  const series: Series[] = METHODS.filter((m) => results.has(m.method)).map((m) => ({ name: m.title.split(' ')[0], color: m.color, points: results.get(m.method)! }));
  lineChart(chart, series, { width: 520, height: 300, xLog: true, yLog: true, xLabel: 'sequence length S', yLabel: 'ms per call', label: 'Milliseconds per attention call against sequence length, per method',
    xTicks: COST_SIZES, xEmpty: [COST_SIZES[0], COST_SIZES[COST_SIZES.length - 1]], emptyNote: 'Measure the cost to plot each method here.' });
}
runBtn.addEventListener('click', () => {
  if (worker) return;
  results.clear();
  worker = new Worker(new URL('./efficient.worker.ts', import.meta.url), { type: 'module' });
  handOver(runBtn, cancelBtn);
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
  stopOnWorkerError(worker, stop, 'The measuring Worker failed to start.', 'cost worker failed');
  const methods = METHODS.map((m) => m.method).filter((m) => (m !== 'lsh' && m !== 'synthesizer') || (api && lshApi(api)));
  const req: CostRequest = { sizes: [...COST_SIZES], dim: 32, methods, window: 16, block: 16, minMs: 120 };
  worker.postMessage(req);
});
cancelBtn.addEventListener('click', () => stop('Cancelled.'));
for (const s of [S.input, win.input, block.input, hashes.input, round.input]) s.addEventListener('input', draw);
for (const c of [causal.input, buckets.input, sorted.input]) c.addEventListener('change', draw);
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
