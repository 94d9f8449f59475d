// Page 3: self-, cross- and multi-head attention in the head view and the model view.
import type { Attnlab, WorkerTranslator } from 'attnlab';
import '../components/head-view';
import '../components/model-view';
import type { AttnHeadView } from '../components/head-view';
import type { AttnModelView } from '../components/model-view';
import { translatorModel, untrainedModel, type AttentionMaps, type AttentionModel } from './model-source';
import { $, el, handOver, select } from './site/dom';
import { frac, headEq, headProjInline as proj, inline, math, row, sqrt, sub, sup, t } from './site/math';
import { getLib, initPage, showError } from './site/shell';
import { oneOf, param, readHash, writeHash } from './site/state';
import { downloaded, modelBytes } from './site/models';
import { HEADS_DEFAULT_SOURCE, HEADS_LAYERS, headsView } from './site/view-state';

initPage('heads.html');

const KINDS = ['encoder', 'decoder', 'cross'] as const;
type Kind = (typeof KINDS)[number];
const KIND_TITLES: Record<Kind, string> = {
  encoder: 'Encoder self-attention',
  decoder: 'Decoder self-attention (causal)',
  cross: 'Cross-attention (decoder → encoder)',
};

const hash = readHash();
const state = {
  // French source: the trained model translates French → English.
  src: (hash.get('src') ?? HEADS_DEFAULT_SOURCE).slice(0, 200),
  tgt: (hash.get('tgt') ?? 'the dog is sitting on the chair .').slice(0, 200),
  kind: param<Kind>('kind', 'encoder', oneOf(KINDS)),
  layer: headsView(hash).layer,
  heads: hash.get('heads'),
  // The page opens on the trained model; #model=untrained on the random-weights comparison.
  trained: hash.get('model') !== 'untrained',
};

// In their languages (the model reads French, writes English), for a screen reader's voice.
const srcIn = el('input', { type: 'text', id: 'src', value: state.src, size: 36, spellcheck: 'false', lang: 'fr' });
const tgtIn = el('input', { type: 'text', id: 'tgt', value: state.tgt, size: 36, spellcheck: 'false', lang: 'en' });
const kind = select('kind', 'Attention', KINDS.map((k) => [k, KIND_TITLES[k]] as const), state.kind);
const layerSel = select<string>('layer', 'Layer', Array.from({ length: HEADS_LAYERS }, (_, l) => [String(l), String(l + 1)] as const), String(state.layer));
const banner = el('p', { class: 'note', id: 'model-note' });
const headView = document.createElement('attn-head-view') as AttnHeadView;
headView.id = 'head-view';
headView.setAttribute('filename', 'head-view');
const modelView = document.createElement('attn-model-view') as AttnModelView;
modelView.id = 'model-view';
modelView.setAttribute('filename', 'model-view');
const headTitle = el('h2', { id: 'h-head' });

$('app').append(
  banner,
  el('form', { class: 'controls', id: 'sentences' },
    el('div', { class: 'control' }, el('label', { for: 'src', text: 'Source' }), srcIn),
    el('div', { class: 'control' }, el('label', { for: 'tgt', text: 'Target' }), tgtIn),
    el('button', { type: 'submit', text: 'Run' })),
  el('div', { class: 'controls' }, kind.wrap, layerSel.wrap),
  el('div', { class: 'side' },
    el('div', { class: 'grid2' },
      el('section', { class: 'panel', 'aria-labelledby': 'h-head' }, headTitle,
        el('p', { class: 'stat', text: 'Click a head to show or hide it; double-click (or Shift+Enter) to show it alone. Hover a token to see only its lines.' }), headView),
      el('section', { class: 'panel', 'aria-labelledby': 'h-model' }, el('h2', { id: 'h-model', text: 'Model view: every layer and head' }),
        el('p', { class: 'stat', text: 'Rows are layers, columns heads. Choose a thumbnail to enlarge it.' }), modelView)),
    el('section', { class: 'panel eq', 'aria-labelledby': 'h-eq' },
      el('h2', { id: 'h-eq', text: 'The equations' }),
      headEq(),
      math('output equals W o times h 1 to h h, stacked',
        t('output ='), sub('W', 'o'), t('['), sub('h', '1'), t('; …;'), sub('h', 'h'), t(']')),
      math('Attention of Q K V equals softmax of Q K transpose over root d, times V',
        t('Attention(Q, K, V) = softmax('), frac(row(t('Q'), sup('K', 'T')), sqrt('d')), t(') V')),
      el('p', {}, 'Head i (of h) projects the query q, the keys k and the values v with its own learned ', proj('q'), ', ', proj('k'), ', ', proj('v'),
        ' and pools them with f, here the scaled dot product Attention(Q, K, V): Q, K and V hold the head’s projected queries, keys and values as rows, and d is the length of its queries and keys (the model’s width over h). The learned ',
        inline('W o', sub('W', 'o')), ' mixes the h heads’ outputs, stacked into one vector. Self-attention: q, k and v all come from the same sequence. Decoder self-attention adds a causal mask so a token cannot look ahead. Cross-attention takes q from the decoder and k, v from the encoder’s output.'),
      el('p', { text: 'The trained model names each decoder row by the piece its step writes, and the decoder’s keys by the pieces it reads: <bos>, then each piece written before. So the step that writes “dog” in “the dog” sees <bos> and “the”, never “dog”.' }))));

let model: AttentionModel | null = null;
let maps: AttentionMaps | null = null;

function show(): void {
  if (!maps || !model) return;
  const k = kind.input.value as Kind;
  const layer = Math.min(Number(layerSel.input.value), model.layers - 1);
  const all = k === 'encoder' ? maps.encoderSelf : k === 'decoder' ? maps.decoderSelf : maps.cross;
  const left = k === 'encoder' ? maps.sourceTokens : maps.targetTokens;
  const right = k === 'decoder' ? maps.decoderKeys ?? maps.targetTokens : maps.sourceTokens;
  headTitle.textContent = `${KIND_TITLES[k]}, layer ${layer + 1}`;
  headView.leftTokens = left;
  headView.rightTokens = right;
  headView.data = all[layer];
  modelView.rowLabels = left;
  modelView.colLabels = right;
  modelView.data = all;
  // The trained model writes its own target: the (disabled) box shows that, not the sentence it held before.
  if (maps.target !== undefined) tgtIn.value = maps.target;
  writeHash({ src: srcIn.value, tgt: tgtIn.value, kind: k, layer });
  document.body.dataset.result = 'ok';
}

async function run(): Promise<void> {
  if (!model) return;
  maps = await model.run(srcIn.value, tgtIn.value);
  show();
}

$('sentences').addEventListener('submit', (e) => {
  e.preventDefault();
  run().catch(showError);
});
kind.input.addEventListener('change', show);
layerSel.input.addEventListener('change', show);
headView.addEventListener('attn-heads', (e) => writeHash({ heads: (e as CustomEvent<{ active: number[] }>).detail.active.join('.') }));

// The trained model loads and translates in a Worker (lib.loadTranslator(bytes, { worker: true })):
// 2-6 MB of weights and a decode would otherwise hold the main thread for far over 100 ms.
let loadingTrained: AbortController | null = null;
const TRAINED_NAME = 'trained Transformer, French → English';

let untrained: AttentionModel | null = null;
let trainedModel: AttentionModel | null = null;
const UNTRAINED_NOTE = (name: string) => `Untrained model: ${name}. The patterns show how the mechanism works (shapes, masks, which side attends to which); they are not what a trained translator learned.`;

function useModel(m: AttentionModel, layer = 0): void {
  model = m;
  layerSel.input.replaceChildren(...Array.from({ length: m.layers }, (_, l) => el('option', { value: l, text: String(l + 1), selected: l === layer })));
  tgtIn.disabled = m.trained;
  banner.textContent = m.trained
    ? 'Trained model: the shipped French → English Transformer. The target side is its own translation of the source. Compare it with the same architecture before training (random weights).'
    : UNTRAINED_NOTE(m.name);
  writeHash({ model: m.trained ? 'trained' : 'untrained' });
}

/**
 * The trained Transformer when this attnlab build ships one (lib.loadTranslator), and the
 * untrained one as the comparison: one button each way.
 */
function offerTrained(lib: Attnlab): HTMLButtonElement | null {
  if (typeof (lib as { loadTranslator?: unknown }).loadTranslator !== 'function') return null;
  const btn = el('button', { type: 'button', id: 'use-trained', class: 'primary', text: 'Use the trained Transformer (French → English)' });
  const back = el('button', { type: 'button', id: 'use-untrained', text: 'Compare: the untrained model (random weights)', hidden: true });
  const bar = el('progress', { id: 'model-progress', max: 1, value: 0, 'aria-label': 'Model download', hidden: true });
  const cancel = el('button', { type: 'button', id: 'cancel-load', text: 'Cancel', disabled: true });
  const status = el('span', { id: 'load-status', class: 'stat', 'aria-live': 'polite' });
  banner.after(el('div', { class: 'controls' }, btn, back, bar, cancel, status));
  const say = (state: string, text: string) => {
    status.dataset.state = state;
    status.textContent = text;
  };
  const shown = (trainedShown: boolean) => {
    btn.hidden = trainedShown;
    back.hidden = !trainedShown;
  };
  cancel.addEventListener('click', () => loadingTrained?.abort());
  back.addEventListener('click', () => {
    if (!untrained) return;
    useModel(untrained, Number(layerSel.input.value));
    shown(false);
    btn.disabled = false;
    btn.focus();
    run().catch(showError);
  });
  btn.addEventListener('click', async () => {
    if (trainedModel) {  // loaded before: switch back at once
      useModel(trainedModel, Number(layerSel.input.value));
      shown(true);
      back.focus();
      await run().catch(showError);
      return;
    }
    handOver(btn, cancel);
    bar.hidden = false;
    bar.value = 0;
    let events = 0;
    say('loading', 'Loading the trained model in a Worker…');
    const stop = (loadingTrained = new AbortController());
    let trained: WorkerTranslator | null = null;
    try {
      const bytes = await modelBytes('fra-eng', 'transformer', (loaded, total) => {
        bar.value = total ? loaded / total : 0;
        bar.dataset.events = String(++events);
        say('loading', `Loading the trained model: ${downloaded(loaded, total)}…`);
      }, stop.signal);
      trained = await lib.loadTranslator(bytes, { worker: true, signal: stop.signal });
      const info = `fra-eng transformer, ${(trained.parameters / 1e6).toFixed(2)} M parameters`;
      bar.value = 1;
      say('translating', `Model ready (${info}); translating in the Worker…`);
      // Layers and heads come with the first result.
      const first = await translatorModel(trained, TRAINED_NAME, 0, 0).run(srcIn.value, '');
      stop.signal.throwIfAborted();  // Cancel while it translated
      trainedModel = translatorModel(trained, TRAINED_NAME, first.encoderSelf.length, first.encoderSelf[0]?.length ?? 0);
      maps = first;
      const focused = document.activeElement === cancel;
      cancel.disabled = true;
      useModel(trainedModel, Number(layerSel.input.value));
      shown(true);
      if (focused) back.focus();  // the button that now switches models
      show();
      say('ready', `Trained model in use (${info}); it runs in a Worker.`);
    } catch (e) {
      trained?.dispose();
      handOver(cancel, btn);
      if (stop.signal.aborted) say('cancelled', 'Loading cancelled: the untrained model stays. Choose the button to load again.');
      // The page goes on with the untrained model: the reason goes in the status, not in a
      // page-wide alert.
      else say('error', `The trained model failed to load (${e instanceof Error ? e.message : String(e)}): the untrained one stays.`);
    } finally {
      bar.hidden = true;
    }
  });
  return btn;
}

getLib().then(async (lib) => {
  // Seeded random weights draw at once; the trained translator, loading in its Worker, replaces
  // them unless the link asks for the untrained comparison (#model=untrained).
  untrained = untrainedModel(lib);
  const useTrained = offerTrained(lib);
  model = untrained;
  banner.textContent = UNTRAINED_NOTE(untrained.name);
  layerSel.input.replaceChildren(...Array.from({ length: untrained.layers }, (_, l) => el('option', { value: l, text: String(l + 1), selected: l === state.layer })));
  await run();
  if (state.heads) {
    const list = state.heads.split('.').map(Number).filter((h) => Number.isInteger(h) && h >= 0 && h < model!.heads);
    if (list.length) headView.activeHeads = list;
  }
  if (state.trained) useTrained?.click();
}).catch(showError);
