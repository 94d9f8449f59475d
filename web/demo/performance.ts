// Page 7: the benchmark in the visitor's browser, in a Worker, with progress and cancel.
import type { Variant } from 'attnlab';
import { lineChart, svgEl, type Series } from './site/chart';
import { $, el, handOver, select } from './site/dom';
import { frac, math, row, sqrt, sup, t } from './site/math';
import { getLib, initPage, showError } from './site/shell';
import { bool, oneOf, param, writeHash } from './site/state';
import type { BenchMessage, BenchRequest } from './bench.worker';
import { stopOnWorkerError } from './worker-error';

initPage('performance.html');

const PRESETS = { quick: [32, 64, 128, 256], full: [64, 128, 256, 512, 1024] } as const;
type Preset = keyof typeof PRESETS;
const state = {
  preset: param<Preset>('preset', 'quick', oneOf(['quick', 'full'] as const)),
  auto: param('auto', false, bool),
};
const COLORS: Record<string, string> = {
  scalar: '#868e96', simd: '#3559e0', 'simd-threads': '#d9480f', 'relaxed-simd': '#7048e8', 'relaxed-simd-threads': '#c2255c', webgpu: '#2b8a3e',
};
const HEADS = 4;
const DIM = 64;

const preset = select<Preset>('preset', 'Sizes', [['quick', 'Quick: S = 32 … 256'], ['full', 'Full: S = 64 … 1024']], state.preset);
const runBtn = el('button', { type: 'button', id: 'run', class: 'primary', text: 'Run the benchmark' });
const cancelBtn = el('button', { type: 'button', id: 'cancel', text: 'Cancel', disabled: true });
const progress = el('progress', { id: 'bench-progress', max: 1, value: 0, 'aria-label': 'Benchmark progress' });
const status = el('p', { class: 'stat', id: 'bench-status', 'aria-live': 'polite', text: 'Not run yet. It takes a few seconds; the page stays responsive.' });
const chart = svgEl('bench-chart');
const table = el('table', { class: 'num', id: 'bench-table' });
const env = el('p', { class: 'stat', id: 'bench-env' });

$('app').append(
  el('div', { class: 'controls' }, preset.wrap, runBtn, cancelBtn, progress),
  status,
  el('div', { class: 'side' },
    el('section', { class: 'panel', 'aria-labelledby': 'h-chart' }, el('h2', { id: 'h-chart', text: 'Throughput' }), chart, el('div', { class: 'table-scroll' }, table)),
    el('section', { class: 'panel eq', 'aria-labelledby': 'h-what' },
      el('h2', { id: 'h-what', text: 'What is measured' }),
      math('Attention of Q K V equals softmax of Q K transpose over root d, times V', t('Attention(Q, K, V) = softmax('), frac(row(t('Q'), sup('K', 'T')), sqrt('d')), t(') V')),
      el('p', { text: `Q, K, V of shape [1, ${HEADS}, S, ${DIM}] (one batch, ${HEADS} heads, S tokens, d = ${DIM}). Work: 4·H·S²·d floating-point operations per call (QKᵀ and the weighted sum of V). Each point repeats the call after a warm-up, for at least 150 ms (or 2000 calls, whichever comes first).` }),
      el('p', { text: 'scalar: plain WebAssembly. simd: 128-bit SIMD instructions. simd-threads: SIMD plus a pool of Web Workers sharing memory; it needs a cross-origin isolated page (COOP/COEP headers). relaxed-: the same with the fused multiply-add of relaxed SIMD, where the browser has it (Chrome 114+). WebGPU: on the GPU, when this attnlab build and this browser both have it.' }),
      env)));

function variants(): (Variant | 'webgpu')[] {
  // A relaxed build the browser lacks is skipped with load()'s reason (bench.worker.ts).
  const list: (Variant | 'webgpu')[] = ['scalar', 'simd', 'relaxed-simd'];
  if (globalThis.crossOriginIsolated) list.push('simd-threads', 'relaxed-simd-threads');
  list.push('webgpu');
  return list;
}

const results = new Map<string, Map<number, { ms: number; gflops: number }>>();
const skipped = new Map<string, string>();
const details = new Map<string, string>();

function render(sizes: readonly number[]): void {
  const series: Series[] = [...results.entries()].map(([v, m]) => ({
    name: details.get(v) ?? v, color: COLORS[v] ?? '#000', points: [...m.entries()].map(([S, r]) => [S, r.gflops] as [number, number]),
  }));
  lineChart(chart, series, { width: 520, height: 280, xLog: true, xLabel: 'sequence length S', yLabel: 'GFLOP/s', yMin: 0, label: 'Attention throughput in GFLOP/s by sequence length for each build',
    xTicks: sizes, xEmpty: [sizes[0], sizes[sizes.length - 1]], emptyNote: 'Run the benchmark to plot each build here.' });
  table.replaceChildren(el('caption', { text: 'Milliseconds per call (GFLOP/s)' }));
  const head = el('tr', {}, el('th', { scope: 'col', text: 'build' }), ...sizes.map((S) => el('th', { scope: 'col', text: `S\u00a0=\u00a0${S}` })));
  table.append(el('thead', {}, head));
  const body = el('tbody');
  for (const v of variants()) {
    const m = results.get(v);
    const tr = el('tr', {}, el('th', { scope: 'row', text: details.get(v) ?? v }));
    if (!m && skipped.has(v)) tr.append(el('td', { colspan: sizes.length, text: `not run: ${skipped.get(v)}` }));
    else for (const S of sizes) {
      const r = m?.get(S);
      tr.append(el('td', { 'data-variant': v, 'data-s': S, 'data-ms': r?.ms, text: r ? `${r.ms < 10 ? r.ms.toFixed(2) : r.ms.toFixed(1)} (${r.gflops.toFixed(2)})` : '…' }));
    }
    body.append(tr);
  }
  table.append(body);
}

let worker: Worker | null = null;
let progressDone = 0;
let progressTotal = 0;
function stop(message: string): void {
  worker?.terminate();
  worker = null;
  handOver(cancelBtn, runBtn);
  status.textContent = message;
}

function run(): void {
  if (worker) return;
  const sizes = PRESETS[preset.input.value as Preset];
  results.clear();
  skipped.clear();
  render(sizes);
  [progressDone, progressTotal] = [0, 0];
  delete document.body.dataset.bench;
  worker = new Worker(new URL('./bench.worker.ts', import.meta.url), { type: 'module' });
  handOver(runBtn, cancelBtn);
  progress.value = 0;
  status.textContent = 'Loading the builds in a Worker…';
  worker.onmessage = (e: MessageEvent<BenchMessage>) => {
    const m = e.data;
    if (m.type === 'start') {
      details.set(m.variant, m.detail);
      status.textContent = `Running ${m.detail}…`;
    } else if (m.type === 'result') {
      if (!results.has(m.variant)) results.set(m.variant, new Map());
      results.get(m.variant)!.set(m.S, { ms: m.ms, gflops: m.gflops });
      [progressDone, progressTotal] = [m.done, m.total];
      progress.value = m.done / m.total;
      render(sizes);
    } else if (m.type === 'skip') {
      skipped.set(m.variant, m.variant === 'webgpu' ? shortGpuReason(m.reason) : m.reason);
      [progressDone, progressTotal] = [m.done, m.total];
      progress.value = m.done / m.total;
      render(sizes);
    } else if (m.type === 'done') {
      progress.value = 1;
      stop('Done.');
      document.body.dataset.bench = 'done';
    } else {
      stop(`The benchmark failed: ${m.message}`);
      showError(new Error(m.message));
    }
  };
  stopOnWorkerError(worker, stop, 'The benchmark worker failed to start.', 'benchmark worker failed');
  const req: BenchRequest = { sizes: [...sizes], heads: HEADS, dim: DIM, variants: variants(), minMs: 150 };
  worker.postMessage(req);
}

function shortGpuReason(reason: string): string {
  if (/unknown option 'backend'/.test(reason)) return 'this attnlab build has no WebGPU backend';
  if (/adapter|navigator\.gpu|webgpu/i.test(reason)) return 'no WebGPU adapter in this browser';
  return reason;
}

runBtn.addEventListener('click', run);
cancelBtn.addEventListener('click', () => {
  stop(progressTotal ? `Cancelled after ${progressDone} of ${progressTotal} measurements; the table keeps those.` : 'Cancelled before the first measurement.');
  document.body.dataset.bench = 'cancelled';
});
preset.input.addEventListener('change', () => {
  writeHash({ preset: preset.input.value });
  if (!worker) render(PRESETS[preset.input.value as Preset]);
});

env.textContent = `This page: ${globalThis.crossOriginIsolated ? 'cross-origin isolated, so the threaded build runs' : 'not cross-origin isolated, so the threaded build is skipped'}; ${navigator.hardwareConcurrency ?? '?'} logical cores.`;
render(PRESETS[state.preset]);
document.body.dataset.result = 'ok';
// The status line in the footer; the benchmark itself loads its own instances in the Worker.
getLib().catch(showError);
if (state.auto) run();
