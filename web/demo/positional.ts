// Page 5: positional encodings: sinusoidal (attnlab), their dot products, RoPE and ALiBi, and Shaw's
// and T5's relative positions beside them: what each adds to one head's scores, and its weights.
import type { Attnlab } from 'attnlab';
import '../components/heatmap';
import type { AttnHeatmap } from '../components/heatmap';
import { gaussian, rng } from '../components/lib';
import { $, el, select, slider } from './site/dom';
import { frac, math, row, sub, sup, t, text } from './site/math';
import { getLib, initPage, showError } from './site/shell';
import { num, param, writeHash } from './site/state';

initPage('positional.html');

type Rel = 'none' | 'rope' | 'alibi' | 'shaw' | 't5';
const RELS = [['none', 'None'], ['rope', 'RoPE'], ['alibi', 'ALiBi'], ['shaw', 'Shaw et al.'], ['t5', 'T5 buckets']] as const;

const state = {
  len: param('len', 32, num(4, 128)),
  dim: param('dim', 64, num(4, 256)),
  head: param('head', 1, num(1, 8)),
  pair: param('pair', 0, num(0, 127)),
  rel: param<Rel>('rel', 't5', (x) => (RELS.some(([r]) => r === x) ? (x as Rel) : undefined)),
};
const ALIBI_HEADS = 8;

const len = slider({ id: 'len', label: 'Positions', min: 4, max: 128, step: 4, value: state.len });
const dim = slider({ id: 'dim', label: 'Dimension d', min: 4, max: 256, step: 4, value: state.dim });
const head = slider({ id: 'head', label: 'ALiBi head', min: 1, max: ALIBI_HEADS, step: 1, value: state.head });
const pair = slider({ id: 'pair', label: 'RoPE pair i', min: 0, max: state.dim / 2 - 1, step: 1, value: Math.min(state.pair, state.dim / 2 - 1) });

function heat(id: string, label: string, rowTitle: string, colTitle: string, scale: 'viridis' | 'diverging' | 'blues'): AttnHeatmap {
  const h = document.createElement('attn-heatmap') as AttnHeatmap;
  h.id = id;
  h.setAttribute('label', label);
  h.setAttribute('row-title', rowTitle);
  h.setAttribute('col-title', colTitle);
  h.setAttribute('scale', scale);
  h.setAttribute('cell-size', '12');
  h.setAttribute('filename', id);
  return h;
}

const peHeat = heat('pe', 'Sinusoidal positional encoding: positions (rows) by dimensions (columns)', 'position', 'dimension', 'diverging');
const dotHeat = heat('pe-dot', 'Dot products between the encodings of two positions', 'position m', 'position n', 'viridis');
const ropeHeat = heat('rope', 'RoPE: score of a fixed query at position m and key at position n', 'query position m', 'key position n', 'diverging');
const alibiHeat = heat('alibi', 'ALiBi: bias added to the score of query i and key j', 'query i', 'key j', 'blues');
const alibiWeights = heat('alibi-weights', 'ALiBi alone: attention weights when every q·k is 0', 'query i', 'key j', 'viridis');
const alibiWeightsNote = el('p', { class: 'stat', id: 'alibi-weights-note' });
const relMethod = select('rel', 'Relative position', RELS, state.rel);
const relChange = heat('rel-change', 'What the chosen method adds to one head’s scores (query i, key j)', 'query i', 'key j', 'diverging');
const relWeights = heat('rel-weights', 'One head’s attention weights with the chosen method (causal)', 'query i', 'key j', 'viridis');
const relStat = el('p', { class: 'stat', id: 'rel-stat' });
const ropeSvg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
ropeSvg.id = 'rope-rotation';
ropeSvg.classList.add('chart');
const ropeStat = el('p', { class: 'stat', id: 'rope-stat' });
const alibiStat = el('p', { class: 'stat', id: 'alibi-stat' });

const sect = (id: string, title: string, ...body: (Node | string)[]) => el('section', { class: 'panel', 'aria-labelledby': id }, el('h2', { id, text: title }), ...body);
$('app').append(
  el('div', { class: 'controls' }, len.wrap, dim.wrap),
  el('div', { class: 'grid2' },
    sect('h-pe', 'Sinusoidal encoding',
      math('P p 2j equals sin of p over 10000 to the 2j over d; P p 2j plus 1 equals cos of p over 10000 to the 2j over d',
        sub('P', 'p,2j'), t('= sin('), frac('p', sup('10000', row(t('2j/d')))), t('),  '), sub('P', 'p,2j+1'), t('= cos('), frac('p', sup('10000', row(t('2j/d')))), t(')')),
      el('p', { class: 'stat', text: 'Each column is a sinusoid; the frequency falls from left to right, like the digits of a binary counter running at geometric rates. Computed by attnlab’s positionalEncoding.' }),
      peHeat),
    sect('h-dot', 'Position dot products',
      math('P m dot P n equals the sum over j of cos of omega j times m minus n', sub('P', 'm'), t('·'), sub('P', 'n'), t('='), t('∑'), sub('', 'j'), t('cos('), sub('ω', 'j'), t('(m - n))')),
      el('p', { class: 'stat', text: 'With ωⱼ = 1/10000^(2j/d), the frequency of the pair of columns 2j and 2j + 1, the dot product depends only on the offset m − n: constant along every diagonal, largest at zero offset. Relative position is in there, for attention to find.' }),
      dotHeat),
    sect('h-rope', 'RoPE: rotary position embedding',
      math('q m equals R of m theta i times q; q m transpose k n equals q transpose R of n minus m theta i times k; theta i equals 10000 to the minus 2i over d',
        sub('q', 'm'), t('='), sub('R', row(t('m'), sub('θ', 'i'))), t('q,  '), sup(row(sub('q', 'm')), 'T'), sub('k', 'n'), t('='), sup('q', 'T'), sub('R', row(t('(n - m)'), sub('θ', 'i'))), t('k,  '), sub('θ', 'i'), t('='), sup('10000', row(t('-2i/d')))),
      el('p', { class: 'stat', text: 'R turns each pair i of a vector’s entries (counting from 0) by the angle in its subscript, mθᵢ for pair i at position m: qₘ is q at position m, kₙ is k at position n.' }),
      el('div', { class: 'controls' }, pair.wrap),
      ropeSvg, ropeStat,
      el('p', { class: 'stat', id: 'rope-source', text: 'Below, one random query and key (fixed vectors), placed at every pair of positions: the score is the same along each diagonal.' }),
      ropeHeat),
    sect('h-alibi', 'ALiBi: attention with linear biases',
      math('q i transpose k j plus m h times j minus i, with m h equals 2 to the minus 8h over H', sup(sub('q', 'i'), 'T'), sub('k', 'j'), t('+'), sub('m', 'h'), t('· (j - i),'), text('  '), sub('m', 'h'), t('='), sup('2', row(t('-8h/H')))),
      el('div', { class: 'controls' }, head.wrap),
      alibiStat,
      el('p', { class: 'stat', text: 'No position vectors at all: each head h of H = 8 penalises distant keys linearly, with its own slope mₕ. Steep heads look locally, shallow heads far. Causal mask hatched. Computed in this page’s TypeScript.' }),
      alibiHeat, alibiWeightsNote, alibiWeights)),
  sect('h-rel', 'Relative positions in the scores: Shaw and T5 beside RoPE and ALiBi',
    math('Shaw: q i transpose times k j plus a K of clip of j minus i to plus or minus k, over root d',
      sup(sub('q', 'i'), 'T'), t('('), sub('k', 'j'), t('+'), sub('a', row(t('K, clip(j−i, ±k)'))), t(') / √d')),
    math('T5: q i transpose k j over root d plus b of h and bucket of j minus i',
      sup(sub('q', 'i'), 'T'), sub('k', 'j'), t('/ √d +'), sub('b', row(t('h, bucket(j−i)')))),
    el('p', { class: 'stat', text: 'One head of d = 16 features (in this section), the same random q, k, v for every method. Shaw adds learned vectors for each clipped distance (here k = 4, random) to the keys and values; T5 adds one learned scalar per head and distance bucket: exact buckets near the query, logarithmic ones up to maxDistance (here 32 buckets, maxDistance 16, and weights made up to fall with distance). RoPE turns q and k; ALiBi subtracts a slope times the distance. Left: score change from no position information. Right: the weights, from attnlab’s attention() with each option.' }),
    el('div', { class: 'controls' }, relMethod.wrap), relStat,
    el('div', { class: 'grid2' }, relChange, relWeights)));

let lib: Attnlab | null = null;

function rows(data: ArrayLike<number>, R: number, C: number): number[][] {
  return Array.from({ length: R }, (_, i) => Array.from({ length: C }, (_, j) => data[i * C + j]));
}

type RopeFn = (x: { data: Float32Array; shape: number[] }) => { data: Float32Array; shape: number[] };

/** attnlab's own RoPE when this build has it (lib.rope); else the same formula in TypeScript. */
function libRope(l: Attnlab): RopeFn | null {
  const f = (l as unknown as { rope?: RopeFn }).rope;
  return typeof f === 'function' ? (x) => f.call(l, x) : null;
}

function ropeScores(L: number, d: number): number[][] {
  const g = gaussian(rng(11));
  const q = Array.from({ length: d }, g);
  const k = Array.from({ length: d }, g);
  const rope = lib && libRope(lib);
  if (lib && rope) {
    // The same q (and k) at every position 0 … L-1, rotated by the library, then all dot products.
    const rep = (v: number[]) => ({ data: Float32Array.from({ length: L * d }, (_, i) => v[i % d]), shape: [L, d] });
    const rq = rope(rep(q));
    const rk = rope(rep(k));
    const s = lib.attentionScores({ data: rq.data, shape: [1, L, d] }, { data: rk.data, shape: [1, L, d] }, { score: 'dot' });
    return rows(Array.from(s.data, (x) => x / Math.sqrt(d)), L, L);
  }
  const out: number[][] = [];
  for (let m = 0; m < L; m++) {
    const r: number[] = [];
    for (let n = 0; n < L; n++) {
      let s = 0;
      for (let i = 0; i < d / 2; i++) {
        const theta = 10000 ** (-2 * i / d);
        // (R_m q) . (R_n k) = q^T R_{n-m} k on each pair.
        const a = (n - m) * theta;
        const [q0, q1, k0, k1] = [q[2 * i], q[2 * i + 1], k[2 * i], k[2 * i + 1]];
        s += q0 * (Math.cos(a) * k0 - Math.sin(a) * k1) + q1 * (Math.sin(a) * k0 + Math.cos(a) * k1);
      }
      r.push(s / Math.sqrt(d));
    }
    out.push(r);
  }
  return out;
}

function drawRotation(d: number, i: number): void {
  const NS = 'http://www.w3.org/2000/svg';
  const W = 420;
  const H = 190;
  const cx = 95;
  const cy = 95;
  const R = 78;
  const theta = 10000 ** (-2 * i / d);
  ropeSvg.replaceChildren();
  ropeSvg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  ropeSvg.setAttribute('role', 'img');
  ropeSvg.setAttribute('aria-label', `Pair ${i} of ${d / 2} (counting from 0) of a query rotated by position: angle ${theta.toFixed(4)} radians per position`);
  const add = (tag: string, attrs: Record<string, string | number>, txt?: string) => {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (txt !== undefined) e.textContent = txt;
    ropeSvg.append(e);
    return e;
  };
  add('circle', { cx, cy, r: R, fill: 'none', style: 'stroke: var(--line)' });
  add('line', { x1: cx - R - 6, x2: cx + R + 6, y1: cy, y2: cy, style: 'stroke: var(--line)' });
  add('line', { y1: cy - R - 6, y2: cy + R + 6, x1: cx, x2: cx, style: 'stroke: var(--line)' });
  const positions = 8;
  for (let m = 0; m < positions; m++) {
    const a = m * theta;
    const x = cx + R * Math.cos(a);
    const y = cy - R * Math.sin(a);
    const op = 0.35 + (0.65 * (positions - m)) / positions;
    add('line', { x1: cx, y1: cy, x2: x, y2: y, stroke: '#d9480f', 'stroke-width': 2, 'stroke-opacity': op });
    add('circle', { cx: x, cy: y, r: 3.5, fill: '#d9480f', 'fill-opacity': op });
    if (m < 4 || theta > 0.3) add('text', { x: x + 6 * Math.cos(a), y: y - 6 * Math.sin(a) + 4, 'font-size': 11, style: 'fill: var(--fg)' }, `m=${m}`);
  }
  // The pairs count from 0, as θᵢ's exponent does: the last of 32 is i = 31.
  add('text', { x: 225, y: 50, 'font-size': 12, style: 'fill: var(--fg)' }, `pair i = ${i} of ${d / 2}`);
  add('text', { x: 225, y: 68, 'font-size': 12, style: 'fill: var(--fg)' }, '(counting from 0)');
  add('text', { x: 225, y: 90, 'font-size': 12, style: 'fill: var(--muted)' }, `θᵢ = ${theta.toPrecision(3)} rad`);
  add('text', { x: 225, y: 110, 'font-size': 12, style: 'fill: var(--muted)' }, `one turn every ${(2 * Math.PI / theta).toPrecision(3)}`);
  add('text', { x: 225, y: 128, 'font-size': 12, style: 'fill: var(--muted)' }, 'positions');
}

function update(): void {
  if (!lib) return;
  const L = Number(len.input.value);
  const d = Number(dim.input.value);
  pair.input.max = String(d / 2 - 1);
  if (Number(pair.input.value) > d / 2 - 1) pair.input.value = String(d / 2 - 1);
  pair.input.dispatchEvent(new Event('sync'));
  const pe = lib.positionalEncoding(L, d);
  peHeat.rowLabels = null;
  peHeat.data = pe;
  peHeat.min = -1;
  peHeat.max = 1;
  // P P^T through attnlab's raw scores (scale 1 = plain dot products).
  const P = { data: pe.data, shape: [1, L, d] };
  const dots = lib.attentionScores(P, P, { score: 'dot' });
  dotHeat.data = rows(dots.data, L, L);
  ropeHeat.data = ropeScores(L, d);
  $('rope-source').textContent = `Below, one random query and key (fixed vectors), placed at every pair of positions: the score is the same along each diagonal. Rotated by ${libRope(lib) ? 'attnlab’s rope()' : 'this page’s TypeScript (this attnlab build has no rope())'}.`;
  drawRotation(d, Number(pair.input.value));
  const i = Number(pair.input.value);
  ropeStat.textContent = `Pair ${i} of ${d / 2} (counting from 0) turns by ${(10000 ** (-2 * i / d)).toPrecision(3)} rad per position.`;
  const h = Number(head.input.value);
  const slope = 2 ** (-8 * h / ALIBI_HEADS);
  const bias = Array.from({ length: L }, (_, a) => Array.from({ length: L }, (_, b) => (b <= a ? -slope * (a - b) : 0)));
  alibiHeat.mask = bias.map((r, a) => r.map((_, b) => b > a));
  alibiHeat.data = bias;
  alibiStat.textContent = `Head ${h} of ${ALIBI_HEADS}: slope m = 2^(−${(8 * h / ALIBI_HEADS).toFixed(0)}) = ${slope.toPrecision(3)}; a key ${L - 1} positions back gets ${(-slope * (L - 1)).toFixed(2)}.`;
  alibiStat.dataset.slope = String(slope);
  // The bias alone, through the library's own ALiBi: q = k = 0, so softmax sees only -m|i-j|.
  const withAlibi = lib as unknown as { attention(q: object, k: object, v: object, o: object): { weights?: { data: Float32Array } } };
  let alibiOk = true;
  try {
    const z = { data: new Float32Array(ALIBI_HEADS * L * 2), shape: [ALIBI_HEADS, L, 2] };
    const r = withAlibi.attention(z, z, z, { alibi: true, causal: true, returnWeights: true });
    alibiWeights.mask = bias.map((r2, a) => r2.map((_, b) => b > a));
    alibiWeights.data = rows(r.weights!.data.subarray((h - 1) * L * L, h * L * L), L, L);
    alibiWeightsNote.textContent = `With every q·k = 0, the weights are softmax(−m·(i − j)): in head ${h}, a key 1/m = ${(1 / slope).toFixed(1)} tokens further back gets e ≈ 2.7 times less weight. From attnlab’s attention({ alibi: true }).`;
  } catch {
    alibiOk = false; // a build without ALiBi rejects the option
  }
  alibiWeights.hidden = !alibiOk;
  alibiWeightsNote.hidden = !alibiOk;
  updateRelative(lib, L, h);
  writeHash({ len: L, dim: d, head: h, pair: pair.input.value, rel: relMethod.input.value });
  document.body.dataset.result = 'ok';
}

const REL_D = 16, SHAW_K = 4;

/** One head's score change and weights under the chosen relative position method. */
function updateRelative(l: Attnlab, L: number, h: number): void {
  const method = relMethod.input.value as Rel;
  const g = gaussian(rng(23));
  const x = (n: number) => ({ data: Float32Array.from({ length: n }, g), shape: [1, L, REL_D] });
  const q = x(L * REL_D), k = x(L * REL_D), v = x(L * REL_D);
  const aK = { data: Float32Array.from({ length: (2 * SHAW_K + 1) * REL_D }, () => g() * 0.7), shape: [2 * SHAW_K + 1, REL_D] };
  const aV = { data: Float32Array.from({ length: (2 * SHAW_K + 1) * REL_D }, g), shape: [2 * SHAW_K + 1, REL_D] };
  const t5w = { data: Float32Array.from({ length: 32 }, (_, b) => (b < 16 ? -0.3 : -0.5) * (b % 16)), shape: [1, 32] };
  const slope = 2 ** (-8 * h / ALIBI_HEADS);
  const scale = 1 / Math.sqrt(REL_D);
  const base = l.attentionScores(q, k, { score: 'scaled_dot' }).data;
  let change: (i: number, j: number) => number = () => 0;
  if (method === 'rope') {
    const turned = l.attentionScores(l.rope(q), l.rope(k), { score: 'scaled_dot' }).data;
    change = (i, j) => turned[i * L + j] - base[i * L + j];
  } else if (method === 'alibi') {
    change = (i, j) => -slope * Math.abs(i - j);
  } else if (method === 't5') {
    const b = l.t5Bias(t5w, L, L, { maxDistance: 16 }).data;
    change = (i, j) => b[i * L + j];
  } else if (method === 'shaw') {
    change = (i, j) => {
      const r = Math.min(Math.max(j - i, -SHAW_K), SHAW_K) + SHAW_K;
      let s = 0;
      for (let c = 0; c < REL_D; c++) s += q.data[i * REL_D + c] * aK.data[r * REL_D + c];
      return s * scale;
    };
  }
  const options = {
    none: {}, rope: { rope: true }, alibi: { alibi: Float32Array.of(slope) },
    shaw: { shaw: { maxDistance: SHAW_K, keys: aK, values: aV } }, t5: { t5: { weights: t5w, maxDistance: 16 } },
  }[method];
  const causalMask = Array.from({ length: L }, (_, i) => Array.from({ length: L }, (_, j) => j > i));
  relChange.data = Array.from({ length: L }, (_, i) => Array.from({ length: L }, (_, j) => change(i, j)));
  const w = l.attention(q, k, v, { ...options, causal: true, returnWeights: true }).weights!.data;
  const plain = l.attention(q, k, v, { causal: true, returnWeights: true }).weights!.data;
  relWeights.mask = causalMask;
  relWeights.data = rows(w, L, L);
  let moved = 0;
  for (let t = 0; t < L * L; t++) moved += Math.abs(w[t] - plain[t]);
  relStat.textContent = `${RELS.find(([r]) => r === method)![1]}: the weights move by ${(moved / 2 / L).toFixed(3)} per query (half the summed |change|, 0 to 1) from attention without position information.`;
  relStat.dataset.moved = String(moved);
}

dim.input.step = '4';
for (const s of [len.input, dim.input, head.input, pair.input]) s.addEventListener('input', update);
relMethod.input.addEventListener('change', update);

getLib().then((l) => {
  lib = l;
  update();
}).catch(showError);
