// Page "Real models": a Hugging Face checkpoint (GPT-2, BERT, GPT-Neo) opened from local files, a
// URL or the committed tiny fixtures, run by loadModel() in a Worker; its tokens, every layer's
// and head's attention (head view, model view), a summary of each head, generation with each new
// token's attention, and [MASK] filling for BERT.
import '../components/head-view';
import '../components/model-view';
import type { AttnHeadView } from '../components/head-view';
import type { AttnModelView } from '../components/model-view';
import type { CheckpointInput, HeadSummary, PretrainedModel, Tensor } from 'attnlab';
import { cachedSize, checkpointAt } from './checkpoint-cache';
import { $, el, handOver, select, slider } from './site/dom';
import { attnlab, initPage } from './site/shell';
import { num, oneOf, param, readHash, writeHash } from './site/state';

initPage('models.html', { library: false });
// This page loads no engine of its own until a checkpoint is opened (then the footer names it).
const engineNote = document.getElementById('engine');  // none in an embed
if (engineNote) engineNote.textContent = 'attnlab: loads with a checkpoint';

const TINY_IDS = ['gpt2', 'gpt-neo', 'bert'] as const;
const hash = readHash();
const state = {
  tiny: param<string>('tiny', '', oneOf<string>(TINY_IDS)),
  text: (hash.get('text') ?? '').slice(0, 2000),
  layer: param('layer', 0, num(0, 63)),
};

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(bytes < 1e7 ? 2 : 1)} MB`;
const shown = (tok: string) => tok.replace(/ /g, '·').replace(/\n/g, '↵') || '∅';
const heads = (t: Tensor, l: number): Tensor => {
  const [, H, R, C] = t.shape;
  return { data: t.data.subarray(l * H * R * C, (l + 1) * H * R * C), shape: [H, R, C] };
};

// --- Opening a checkpoint -------------------------------------------------------------------
const tinySel = select<string>('tiny', 'Tiny model', [['gpt2', 'GPT-2 (tiny: 2 layers × 4 heads)'], ['gpt-neo', 'GPT-Neo (tiny: global and local layers)'], ['bert', 'BERT masked LM (tiny, BF16)']], state.tiny || 'gpt2');
const openTiny = el('button', { type: 'button', id: 'open-tiny', class: 'primary', text: 'Open the tiny model' });
const fileInput = el('input', { type: 'file', id: 'files', multiple: true, accept: '.json,.safetensors,.txt' });
const drop = el('div', { id: 'drop', class: 'drop', text: 'or drop config.json, model.safetensors and the tokenizer files (tokenizer.json, or vocab.json + merges.txt, or vocab.txt) here' });
const urlIn = el('input', { type: 'url', id: 'url', size: 48, spellcheck: 'false', placeholder: 'https://huggingface.co/openai-community/gpt2/resolve/main/' });
const checkUrl = el('button', { type: 'button', id: 'check-url', text: 'Check size' });
const openUrl = el('button', { type: 'button', id: 'open-url', text: 'Download and open', disabled: true });
const bar = el('progress', { id: 'progress', max: 1, value: 0, 'aria-label': 'Checkpoint download', hidden: true });
const cancel = el('button', { type: 'button', id: 'cancel', text: 'Cancel', disabled: true });
const status = el('p', { id: 'status', class: 'stat', 'aria-live': 'polite' });

$('app').append(
  el('section', { class: 'panel', 'aria-labelledby': 'h-open' },
    el('h2', { id: 'h-open', text: 'Open a checkpoint' }),
    el('p', { class: 'note', id: 'tiny-note', text: 'Try it offline with a tiny model: these are tiny random-weight checkpoints (23,000 to 32,000 parameters, vocabularies of under 100 tokens) made for attnlab\'s tests. Their attention patterns and predictions are noise, not anything learned; open a real checkpoint to see trained heads.' }),
    el('div', { class: 'controls' }, tinySel.wrap, openTiny),
    el('div', { class: 'controls' }, el('div', { class: 'control' }, el('label', { for: 'files', text: 'Files from your disk' }), fileInput)),
    drop,
    el('div', { class: 'controls' },
      el('div', { class: 'control' }, el('label', { for: 'url', text: 'Or a URL (a folder with the files)' }), urlIn), checkUrl, openUrl),
    el('p', { class: 'stat', text: 'A URL is fetched only when you choose Download, after its size is shown, and kept in your browser for the next visit. Hugging Face folders look like https://huggingface.co/<model>/resolve/main/ (gpt2: 548 MB; distilgpt2: 353 MB; prajjwal1/bert-tiny: about 18 MB). Only repositories with model.safetensors open.' }),
    el('div', { class: 'controls' }, bar, cancel), status),
);

const modelPanel = el('section', { class: 'panel', id: 'model-panel', 'aria-labelledby': 'h-model', hidden: true });
const summary = el('dl', { class: 'status', id: 'summary' });
const textIn = el('input', { type: 'text', id: 'text', size: 48, spellcheck: 'false', value: state.text || 'the cat sat . the cat' });
const tokenList = el('ol', { id: 'tokens', class: 'tokens', 'aria-label': 'Tokens' });
const layerSel = select<string>('layer', 'Layer', [['0', '1']], '0');
const headView = document.createElement('attn-head-view') as AttnHeadView;
headView.id = 'head-view';
headView.setAttribute('filename', 'real-model-head-view');
const modelView = document.createElement('attn-model-view') as AttnModelView;
modelView.id = 'model-view';
modelView.setAttribute('filename', 'real-model-model-view');
const sortSel = select<keyof HeadSummary>('sort', 'Sort heads by', [['previous', 'attention to the previous token'], ['first', 'attention to the first token'], ['self', 'attention to the same token'], ['induction', 'induction score'], ['entropy', 'entropy']], 'previous');
const headTable = el('table', { class: 'num', id: 'head-summary' });

modelPanel.append(
  el('h2', { id: 'h-model', text: 'The model' }), summary,
  el('form', { class: 'controls', id: 'text-form' },
    el('div', { class: 'control' }, el('label', { for: 'text', text: 'Text' }), textIn), el('button', { type: 'submit', text: 'Run' })),
  el('h3', { text: 'Tokens' }), tokenList,
  el('div', { class: 'controls' }, layerSel.wrap),
  el('div', { class: 'grid2' },
    el('section', { 'aria-labelledby': 'h-head' }, el('h3', { id: 'h-head', text: 'Head view' }),
      el('p', { class: 'stat', text: 'Click a head to show or hide it; double-click (or Shift+Enter) to show it alone. Hover a token, or use the arrow keys, to see only its lines.' }), headView),
    el('section', { 'aria-labelledby': 'h-grid' }, el('h3', { id: 'h-grid', text: 'Model view: every layer and head' }),
      el('p', { class: 'stat', text: 'Rows are layers, columns heads. Choose a thumbnail to enlarge it.' }), modelView)),
  el('h3', { text: 'What each head does' }),
  el('p', { class: 'stat', text: 'Mean attention to the previous token (previous-token heads), to the first token (a resting place), to the token itself, and the induction score: attention from a repeated token to the token that followed its earlier occurrence (type a text that repeats itself to find induction-like heads).' }),
  el('div', { class: 'controls' }, sortSel.wrap), el('div', { class: 'table-scroll' }, headTable));

const genPanel = el('section', { class: 'panel', id: 'gen-panel', 'aria-labelledby': 'h-gen', hidden: true });
const maxTok = slider({ id: 'max-tokens', label: 'Tokens', min: 1, max: 64, step: 1, value: 12 });
const temp = slider({ id: 'temperature', label: 'Temperature', min: 0, max: 1.5, step: 0.05, value: 0.8, format: (v) => (v === 0 ? '0 (greedy)' : v.toFixed(2)) });
const genBtn = el('button', { type: 'submit', id: 'generate', class: 'primary', text: 'Generate' });
const stopBtn = el('button', { type: 'button', id: 'stop', text: 'Stop', disabled: true });
const generated = el('p', { id: 'generated', class: 'generated', 'aria-live': 'polite' });
const genHead = document.createElement('attn-head-view') as AttnHeadView;
genHead.id = 'gen-head-view';
genHead.setAttribute('filename', 'generated-token-attention');
const genTitle = el('h3', { id: 'h-gen-head', text: 'Attention behind the newest token' });
genPanel.append(
  el('h2', { id: 'h-gen', text: 'Generate' }),
  el('p', { class: 'stat', text: 'The model writes after your text one token at a time (through its KV cache), each drawn from its 40 most likely next tokens at the temperature chosen (0: always the most likely). The head view follows the newest token: the attention, over everything before it, of the position that predicted it.' }),
  el('form', { class: 'controls', id: 'gen-form' }, maxTok.wrap, temp.wrap, genBtn, stopBtn),
  generated, genTitle, genHead);

const maskPanel = el('section', { class: 'panel', id: 'mask-panel', 'aria-labelledby': 'h-mask', hidden: true });
const maskIn = el('input', { type: 'text', id: 'mask-text', size: 48, spellcheck: 'false', value: 'paris is the [MASK] of france .' });
const maskOut = el('ol', { id: 'mask-results' });
maskPanel.append(
  el('h2', { id: 'h-mask', text: 'Fill the [MASK]' }),
  el('form', { class: 'controls', id: 'mask-form' },
    el('div', { class: 'control' }, el('label', { for: 'mask-text', text: 'Text with [MASK]' }), maskIn), el('button', { type: 'submit', text: 'Fill' })),
  maskOut);

$('app').append(modelPanel, genPanel, maskPanel);

// --- State ----------------------------------------------------------------------------------
let model: PretrainedModel | null = null;
let loading: AbortController | null = null;
let attentions: Tensor | null = null;
let tokens: string[] = [];
let ids: number[] = [];
let summaries: HeadSummary[] = [];
let stopping = false;

const say = (st: string, text: string) => {
  status.dataset.state = st;
  status.textContent = text;
};

/** `input`: the files, or how to get them under the load's AbortSignal. */
async function open(input: CheckpointInput | ((signal: AbortSignal) => Promise<CheckpointInput>), name: string, text?: string): Promise<void> {
  loading?.abort(new Error('replaced by another checkpoint'));
  const ctl = (loading = new AbortController());
  cancel.disabled = false;
  bar.hidden = false;
  bar.value = 0;
  say('loading', `Opening ${name}…`);
  try {
    const { loadModel } = await attnlab();  // with the first checkpoint: the page needs none of it before
    const m = await loadModel(typeof input === 'function' ? await input(ctl.signal) : input, {
      signal: ctl.signal,
      onProgress: ({ loaded, total }) => {
        bar.value = total ? loaded / total : 0;
        say('loading', `Opening ${name}: ${mb(loaded)}${total ? ` of ${mb(total)}` : ''}…`);
      },
    });
    if (ctl.signal.aborted) {
      m.dispose();
      return;
    }
    model?.dispose();
    model = m;
    showModel(m, name);
    say('ready', `${name}: ${m.info.architecture} opened; it runs in ${m.runsIn === 'worker' ? 'a Worker' : 'this page'}.`);
    await run(text ?? textIn.value);
  } catch (e) {
    if (ctl.signal.aborted) say('cancelled', `Opening ${name} was cancelled.`);
    else say('error', e instanceof Error ? e.message : String(e));
  } finally {
    if (loading === ctl) {
      loading = null;
      cancel.disabled = true;
      bar.hidden = true;
    }
  }
}

function showModel(m: PretrainedModel, name: string): void {
  const i = m.info;
  summary.replaceChildren(...([
    ['Checkpoint', name], ['Architecture', i.architecture], ['Layers × heads', `${i.layers} × ${i.heads}`], ['Hidden size', String(i.hidden)],
    ['Vocabulary', `${i.vocabSize} tokens`], ['Positions', String(i.positions)], ['Weights in memory', mb(i.parameterBytes)],
    ['Runs in', m.runsIn === 'worker' ? 'a Worker (the page stays responsive)' : 'this page'],
  ] as const).flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })]));
  layerSel.input.replaceChildren(...Array.from({ length: i.layers }, (_, l) => el('option', { value: l, text: String(l + 1), selected: l === Math.min(state.layer, i.layers - 1) })));
  modelPanel.hidden = false;
  genPanel.hidden = i.family === 'bert';
  maskPanel.hidden = i.family !== 'bert';
  generated.textContent = '';
  genHead.data = null;
  genTitle.hidden = genHead.hidden = true;  // until the first generated token: an empty view said "0 of 0 heads"
  const engine = document.getElementById('engine');
  if (engine) engine.textContent = `attnlab: ${i.architecture} ${m.runsIn === 'worker' ? 'in a Worker' : 'on the page'}`;
}

async function run(text: string): Promise<void> {
  if (!model) return;
  textIn.value = text;
  const out = await model.forward(text, { attentions: true });
  attentions = out.attentions!;
  tokens = out.tokens;
  ids = out.ids;
  tokenList.replaceChildren(...out.tokens.map((t, k) => el('li', { text: shown(t), title: `id ${out.ids[k]}` })));
  const { summarizeHeads } = await attnlab();
  summaries = summarizeHeads(attentions, ids);
  drawLayer();
  drawSummary();
  writeHash({ text });
  document.body.dataset.result = 'ok';
}

function drawLayer(): void {
  if (!attentions || !model) return;
  const layer = Number(layerSel.input.value);
  headView.tokens = tokens;
  headView.data = heads(attentions, layer);
  modelView.tokens = tokens;
  modelView.data = Array.from({ length: model.info.layers }, (_, l) => heads(attentions!, l));
  writeHash({ layer });
}

function drawSummary(): void {
  const key = sortSel.input.value as keyof HeadSummary;
  const f = (x: number) => (Number.isNaN(x) ? '–' : x.toFixed(3));
  const rows = [...summaries].sort((a, b) => (Number.isNaN(b[key]) ? -1 : Number.isNaN(a[key]) ? 1 : b[key] - a[key])).slice(0, 16);
  headTable.replaceChildren(
    el('caption', { text: `The ${rows.length} heads with the highest ${sortSel.input.selectedOptions[0]?.text ?? key}, of ${summaries.length}` }),
    el('tr', {}, ...['Layer', 'Head', 'Previous', 'First', 'Same', 'Induction', 'Entropy (nats)'].map((h) => el('th', { scope: 'col', text: h }))),
    ...rows.map((s) => el('tr', {}, ...[String(s.layer + 1), String(s.head + 1), f(s.previous), f(s.first), f(s.self), f(s.induction), f(s.entropy)].map((v) => el('td', { text: v })))));
}

async function generate(): Promise<void> {
  if (!model) return;
  const m = model;
  const prompt = textIn.value;
  const start = m.tokenize(prompt);
  const room = m.info.positions - start.ids.length;
  if (room < 1) {
    generated.textContent = `The text already fills the model's ${m.info.positions} positions.`;
    return;
  }
  const context = [...start.tokens];
  const L = m.info.layers;
  handOver(genBtn, stopBtn);
  stopping = false;
  generated.replaceChildren(el('span', { class: 'prompt', text: prompt }));
  let count = 0;
  try {
    for await (const t of m.generate(prompt, { maxTokens: Math.min(Number(maxTok.input.value), room), temperature: Number(temp.input.value), topK: 40, seed: count })) {
      if (stopping || model !== m) break;
      generated.append(el('span', { class: 'new', text: t.token, title: `p = ${t.probability.toFixed(3)}` }));
      const layer = Math.min(Number(layerSel.input.value), L - 1);
      genTitle.textContent = `Attention behind “${shown(t.token)}” (layer ${layer + 1}): what position ${t.position - 1} (counting from 0) looked at to write it`;
      genHead.leftTokens = [`→ ${shown(t.token)}`];
      genHead.rightTokens = context.map(shown);
      const [, H, C] = t.attention.shape;
      genHead.data = { data: t.attention.data.subarray(layer * H * C, (layer + 1) * H * C), shape: [H, 1, C] };
      genTitle.hidden = genHead.hidden = false;
      context.push(t.token);
      generated.dataset.count = String(++count);
    }
  } finally {
    handOver(stopBtn, genBtn);
  }
}

async function fill(): Promise<void> {
  if (!model) return;
  const { masks } = await model.fillMask(maskIn.value, { topK: 5 });
  maskOut.replaceChildren(...masks.map((mk) => el('li', { text: `[MASK] at token ${mk.position} (counting from 0): ${mk.candidates.map((c) => `${c.token} (${(c.probability * 100).toFixed(1)}%)`).join(', ')}` })));
}

// --- Wiring ---------------------------------------------------------------------------------
const tiny = () => import('./tiny-checkpoints');

openTiny.addEventListener('click', async () => {
  const id = tinySel.input.value;
  const c = (await tiny()).TINY_CHECKPOINTS.find((x) => x.id === id)!;
  writeHash({ tiny: id });
  await open(c.files, `tiny ${id} (random weights)`, id === 'bert' && !state.text ? c.example : textIn.value);
});

function openFiles(list: FileList | File[]): void {
  const files = Array.from(list);
  if (!files.length) return;
  writeHash({ tiny: null });
  const name = files.find((f) => f.name === 'model.safetensors') ? 'your files' : files.map((f) => f.name).join(', ');
  void open(files, name);
}
fileInput.addEventListener('change', () => fileInput.files && openFiles(fileInput.files));
drop.addEventListener('dragover', (e) => {
  e.preventDefault();
  drop.classList.add('over');
});
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (e) => {
  e.preventDefault();
  drop.classList.remove('over');
  if (e.dataTransfer?.files) openFiles(e.dataTransfer.files);
});

/** The folder of an http(s) URL that names the folder, config.json or model.safetensors (throws for anything else). */
const folder = (u: string) => {
  const url = new URL(u.trim());  // absolute only: a word typed here is not a folder of this site
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('not http(s)');
  url.pathname = url.pathname.replace(/(config\.json|model\.safetensors)$/, '').replace(/\/?$/, '/');
  return url.href;
};

checkUrl.addEventListener('click', async () => {
  openUrl.disabled = true;
  let base: string;
  if (!urlIn.value.trim()) {
    say('error', "Type a checkpoint folder's URL first, e.g. " + urlIn.placeholder);
    urlIn.focus();
    return;
  }
  try {
    base = folder(urlIn.value);
  } catch {
    say('error', `Not an http(s) URL: ${urlIn.value}`);
    return;
  }
  const cached = await cachedSize(base);
  if (cached !== null) {
    openUrl.textContent = `Open (kept from an earlier visit, ${mb(cached)})`;
    openUrl.dataset.base = base;
    openUrl.disabled = false;
    say('checked', `model.safetensors: ${mb(cached)}, kept from an earlier visit: it opens without downloading.`);
    return;
  }
  say('checking', `Asking ${base}model.safetensors for its size…`);
  try {
    const r = await fetch(`${base}model.safetensors`, { method: 'HEAD' });
    if (!r.ok) throw new Error(`${base}model.safetensors answered HTTP ${r.status}`);
    const size = Number(r.headers.get('content-length') ?? 0);
    openUrl.textContent = size ? `Download ${mb(size)} and open` : 'Download and open (size not given)';
    openUrl.dataset.base = base;
    openUrl.disabled = false;
    say('checked', size ? `model.safetensors: ${mb(size)}.` : 'The server did not give the size.');
  } catch (e) {
    say('error', `Could not reach the checkpoint: ${e instanceof Error ? e.message : String(e)}`);
  }
});
openUrl.addEventListener('click', () => {
  const base = openUrl.dataset.base;
  if (!base) return;
  writeHash({ tiny: null });
  void open((signal) => checkpointAt(base, signal), base);
});
urlIn.addEventListener('input', () => (openUrl.disabled = true));
cancel.addEventListener('click', () => loading?.abort(new Error('cancelled')));

$('text-form').addEventListener('submit', (e) => {
  e.preventDefault();
  run(textIn.value).catch((err) => say('error', err instanceof Error ? err.message : String(err)));
});
layerSel.input.addEventListener('change', drawLayer);
sortSel.input.addEventListener('change', drawSummary);
$('gen-form').addEventListener('submit', (e) => {
  e.preventDefault();
  generate().catch((err) => say('error', err instanceof Error ? err.message : String(err)));
});
stopBtn.addEventListener('click', () => (stopping = true));
$('mask-form').addEventListener('submit', (e) => {
  e.preventDefault();
  fill().catch((err) => say('error', err instanceof Error ? err.message : String(err)));
});

if (state.tiny) {
  tinySel.input.value = state.tiny;
  openTiny.click();
} else {
  document.body.dataset.result = 'ok';
}
window.addEventListener('pagehide', () => model?.dispose());
