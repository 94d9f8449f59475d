// The home page: a live first example (one causal self-attention, whose numbers the browser
// test checks), then the guided path with a picture and an equation per step.
import '../components/heatmap';
import type { AttnHeatmap } from '../components/heatmap';
import { setSharedLib } from '../components/lib';
import { DIM, SEQ, exampleInputs } from './example';
import { efficientPicture, embedPicture, headsPicture, modelsPicture, performancePicture, poolingPicture, positionalPicture, scoringPicture, translationPicture } from './home-pictures';
import { $, el } from './site/dom';
import { frac, headEq, math, row, sqrt, sub, sum, sup, t, text } from './site/math';
import { PAGES } from './site/pages';
import { attnlab, initPage, showError } from './site/shell';

initPage('index.html');

const heat = document.createElement('attn-heatmap') as AttnHeatmap;
heat.id = 'home-heatmap';
heat.setAttribute('label', 'Causal self-attention weights: query rows by key columns');
heat.setAttribute('show-values', '');
heat.setAttribute('digits', '3');
heat.setAttribute('cell-size', '56');
heat.setAttribute('row-title', 'query');
heat.setAttribute('col-title', 'key');
heat.rowLabels = Array.from({ length: SEQ }, (_, i) => `q${i}`);
heat.colLabels = Array.from({ length: SEQ }, (_, j) => `k${j}`);

const result = el('output', { id: 'result', for: 'home-heatmap', class: 'visually-hidden' });
$('app').append(
  el('section', { class: 'panel side-by', 'aria-labelledby': 'h-first' },
    el('div', {},
      el('h2', { id: 'h-first', text: 'Attention in one picture' }),
      el('p', { class: 'stat', text: `Four tokens, each a vector of ${DIM} numbers, attend causally to themselves: token i mixes the values of tokens 0 … i, weighted by how well its query matches their keys. Hover a cell to read it; the hatched cells are masked.` }),
      heat, result),
    el('div', { class: 'eq' },
      math('Attention of Q K V equals softmax of Q K transpose over root d plus M, times V',
        t('Attention(Q, K, V) = softmax('), frac(row(t('Q'), sup('K', 'T')), sqrt('d')), t('+ M) V')),
      el('p', { text: `Q, K and V hold the tokens’ queries, keys and values as rows; d is the length of a query and a key (here ${DIM}). M is 0 where query i may see key j (j ≤ i) and −∞ elsewhere, so masked weights are exactly 0 and every row sums to 1.` }),
      el('dl', { class: 'status' },
        el('dt', { text: 'Status' }), el('dd', { id: 'status', text: 'loading…' }),
        el('dt', { text: 'Build' }), el('dd', { id: 'variant', text: '–' }),
        el('dt', { text: 'Threads' }), el('dd', { id: 'threads', text: '–' })),
      el('p', { id: 'error', role: 'alert', class: 'error', hidden: true }))),
  el('h2', { text: 'A short guided path' }));

const EQS: Record<string, () => Element> = {
  'pooling.html': () => math('f of x equals sum over i of alpha of x and x i times y i', t('f(x) ='), sum(t('i')), t('α(x,'), sub('x', 'i'), t(')'), sub('y', 'i')),
  'scoring.html': () => math('a of q and k equals q transpose k over root d', t('a(q, k) ='), frac(row(sup('q', 'T'), t('k')), sqrt('d'))),
  'heads.html': headEq,
  'translation.html': () => math('context c t equals sum over j of alpha t j times h j', sub('c', 't'), t('='), sum(t('j')), sub('α', 'tj'), sub('h', 'j')),
  'models.html': () => math('attentions of shape L by H by S by S', t('attentions: ['), t('L, H, S, S'), t(']')),
  'positional.html': () => math('P p 2j equals sin of p over 10000 to the 2j over d', sub('P', 'p,2j'), t('= sin('), frac('p', sup('10000', row(t('2j/d')))), t(')')),
  'efficient.html': () => math('O of S times w times d, much less than O of S squared times d', t('O(S · w · d) ≪ O('), sup('S', '2'), t('· d)')),
  'performance.html': () => math('FLOPs equal 4 times H times S squared times d', t('FLOPs = 4 · H ·'), sup('S', '2'), t('· d')),
  'embed.html': () => {
    const code = text('<attn-heatmap>');
    code.setAttribute('mathvariant', 'monospace');
    return math('one tag: attn-heatmap', code);
  },
};
const PICS: Record<string, () => SVGSVGElement> = {
  'pooling.html': poolingPicture, 'scoring.html': scoringPicture, 'heads.html': headsPicture, 'translation.html': translationPicture, 'models.html': modelsPicture,
  'positional.html': positionalPicture, 'efficient.html': efficientPicture, 'performance.html': performancePicture, 'embed.html': embedPicture,
};

const path = el('ol', { class: 'path' });
PAGES.filter((p) => p.ready).forEach((p) => {
  const link = el('a', { href: `./${p.file}`, text: p.title });
  path.append(el('li', { class: 'panel step' },
    PICS[p.file]?.() ?? '',
    el('h3', {}, link),
    el('div', { class: 'step-eq' }, EQS[p.file]?.() ?? ''),
    el('p', { class: 'stat', text: p.blurb })));
});
$('app').append(path);

async function main(): Promise<void> {
  // The fastest build this browser validates (load()'s default: relaxed SIMD, threads where the
  // page is isolated). The core/nn split left room in the 300 KB budget for the relaxed .wasm,
  // which compresses 1.2 KB worse than SIMD128's.
  const { load } = await attnlab();
  const lib = await load();
  setSharedLib(lib);
  $('variant').textContent = lib.variant;
  $('threads').textContent = String(lib.threads);
  const engine = document.getElementById('engine');
  if (engine) engine.textContent = `attnlab: ${lib.variant} build, ${lib.threads} thread${lib.threads > 1 ? 's' : ''}`;

  const { q, k, v } = exampleInputs();
  const { output, weights } = lib.attention(q, k, v, { causal: true, returnWeights: true });
  if (!weights) throw new Error('attention() returned no weights despite returnWeights: true');
  if (output.shape.join() !== `1,${SEQ},${DIM}`) throw new Error(`unexpected output shape [${output.shape}]`);
  const w = Array.from({ length: SEQ }, (_, i) => Array.from(weights.data.subarray(i * SEQ, (i + 1) * SEQ)));
  heat.mask = w.map((r, i) => r.map((_, j) => j > i));
  heat.data = w;
  // Rounded for people; the exact float32 values for tests (rounding breaks row sums by ~1e-4).
  result.textContent = JSON.stringify(w.map((r) => r.map((x) => Math.round(x * 1e4) / 1e4)));
  result.dataset.exact = JSON.stringify(w);
  $('status').textContent = 'ok';
  document.body.dataset.result = 'ok';
}

function fail(err: unknown): void {
  if (document.body.dataset.result) return; // the first outcome stands
  const message = err instanceof Error || err instanceof ErrorEvent ? err.message : String(err);
  $('status').textContent = 'error';
  const box = $('error');
  box.textContent = `Error: ${message}`;
  box.hidden = false;
  document.body.dataset.result = 'error';
  showError(err);
}

// A pthread worker that fails to start reports here, not through load(), which would then never
// settle: show it instead of "loading…" forever.
window.addEventListener('error', (e) => fail(e.error ?? e.message));
main().catch(fail);
