// Page 4: translation with the attention shown as it decodes. The translator runs in a Worker of
// its own (lib.loadTranslator(bytes, { worker: true })), which <attn-translate> drives.
import type { WorkerTranslator } from 'attnlab';
import '../components/translate';
import type { AttnTranslate } from '../components/translate';
import { $, el, select, slider } from './site/dom';
import { frac, headEq, headProjInline as proj, inline, math, row, sqrt, sub, sum, sup, t } from './site/math';
import { getLib, initPage, showError } from './site/shell';
import { readHash, writeHash } from './site/state';
import { downloaded, modelBytes } from './site/models';
import { TRANSLATION_ARCHS, TRANSLATION_DIRS, TRANSLATION_EXAMPLES, translationView } from './site/view-state';

initPage('translation.html');

const EXAMPLES: Record<(typeof TRANSLATION_DIRS)[number], readonly string[]> = TRANSLATION_EXAMPLES;
// view-state.ts: the embed recipes read the hash by the same rules.
const state = { ...translationView(readHash()), text: readHash().get('text')?.slice(0, 300) };

const dir = select('dir', 'Direction', [['fra-eng', 'French → English'], ['eng-fra', 'English → French']], state.dir);
const arch = select('arch', 'Model', [['transformer', 'Transformer'], ['gru', 'GRU + Bahdanau attention']], state.arch);
const beam = slider({ id: 'beam', label: 'Beam width', min: 1, max: 8, step: 1, value: state.beam, format: (v) => (v === 1 ? '1 (greedy)' : String(v)) });
// Shown only while a model loads.
const progress = el('progress', { id: 'model-progress', max: 1, value: 0, 'aria-label': 'Model download', hidden: true });
const cancel = el('button', { type: 'button', id: 'cancel-load', text: 'Cancel', disabled: true, hidden: true });
// Shown once a load failed or was cancelled: the same model again, without reloading the page.
const retry = el('button', { type: 'button', id: 'retry-load', text: 'Load again', hidden: true });
const status = el('p', { class: 'stat', id: 'model-status', 'aria-live': 'polite', text: 'Loading attnlab…' });
/**
 * While a model loads, its progress and Cancel; after, Load again where it `stopped` (failed or
 * cancelled). A focused button that hides drops focus to the page: the next control takes it.
 */
const loading = (on: boolean, stopped = false) => {
  const focused = document.activeElement;
  progress.hidden = cancel.hidden = !on;
  cancel.disabled = !on;
  retry.hidden = on || !stopped;
  if (on) status.classList.remove('error');
  if (focused === retry && on) cancel.focus();
  else if (focused === cancel && !on) (stopped ? retry : arch.input).focus();
};
const examples = el('div', { class: 'controls', id: 'examples' });
const widget = document.createElement('attn-translate') as AttnTranslate;
widget.id = 'translate';
// The slider's value, not the hash's: a range input rounds #beam=2.5 to 3, which the widget must use too.
widget.setAttribute('beam', beam.input.value);
widget.setAttribute('filename', 'alignment');

// Each model's own equations: Bahdanau's additive attention for the GRU, scaled dot-product
// cross-attention over heads and layers for the Transformer; beam search is shared.
const eqGru = el('div', { id: 'eq-gru' },
  el('h3', { text: 'GRU encoder-decoder with Bahdanau (additive) attention' }),
  math('context c t equals sum over j of alpha t j times h j', sub('c', 't'), t('='), sum(t('j')), sub('α', 'tj'), sub('h', 'j')),
  math('alpha t j equals softmax over j of a of s t minus 1 and h j', sub('α', 'tj'), t('= softmax'), sub('', 'j'), t('(a('), sub('s', 't-1'), t(','), sub('h', 'j'), t('))')),
  math('a of s and h equals w v transpose tanh of W q s plus W k h', t('a(s, h) ='), sup(sub('w', 'v'), 'T'), t('tanh('), sub('W', 'q'), t('s +'), sub('W', 'k'), t('h)')),
  el('p', {}, 'At each output step t the decoder’s previous state s (the query) scores every encoder state h (the source pieces), with the additive score of the scoring page (',
    inline('w v', sub('w', 'v')), ', ', inline('W q', sub('W', 'q')), ' and ', inline('W k', sub('W', 'k')), ' learned); the weights α are one row of the alignment matrix, and the context c they mix feeds the next piece.'));
const eqTransformer = el('div', { id: 'eq-transformer' },
  el('h3', { text: 'Transformer: scaled dot-product attention, several heads and layers' }),
  math('Attention of Q K V equals softmax of Q K transpose over root d, times V',
    t('Attention(Q, K, V) = softmax('), frac(row(t('Q'), sup('K', 'T')), sqrt('d')), t(') V')),
  headEq(),
  el('p', {}, 'Head i of a layer projects the query q, the keys k and the values v with its own learned ', proj('q'), ', ', proj('k'), ', ', proj('v'),
    ' and pools them with f, here Attention(Q, K, V): Q, K and V hold the head’s projected queries, keys and values as rows, and d is the length of its queries and keys (the model’s width over its heads). Cross-attention takes q from the decoder (the pieces written so far) and k, v from the encoder (the source pieces): each head of each layer has its own alignment matrix, and the one shown is their mean over heads in the last layer. Decoder self-attention is causal: a piece cannot look ahead.'));
const beamEq = el('div', {},
  el('p', { text: 'Beam search keeps the k best partial translations (k, the beam width) by total log-probability, then chooses among the finished ones by a score normalised for length (GNMT’s penalty, α = 0.6), so a short translation is not preferred for being short. It is the number at each leaf of the beam tree; L counts the pieces, </s> included:' }),
  math('score equals the sum over t from 1 to L of log p of y t given y before t and x, divided by l p of L',
    t('score ='), frac(row(sum(t('t=1'), t('L')), t('log p('), sub('y', 't'), t('|'), sub('y', row(t('<t'))), t(', x)')), t('lp(L)'))),
  math('l p of L equals the quantity 5 plus L over 6, to the power alpha', t('lp(L) ='), sup(row(t('('), frac(t('5 + L'), '6'), t(')')), 'α')));
// The source limit is the loaded model's (translator.maxSourceTokens); 48, the shipped models', until one loads.
const trainedForText = (pieces: number) => `What to type: the models were trained on about 68,000 short everyday sentence pairs from Tatoeba (phrase-book sentences, most under ten words, like the examples). Type one or a few short sentences: several are translated one by one; technical, literary or long text comes out poorly, and a sentence of more than ${pieces} subword pieces is cut (the page says so).`;
const cutText = (pieces: number) => `A sentence was longer than the model reads (${pieces} subword pieces): only its beginning was translated.`;
const trainedFor = el('p', { class: 'note', id: 'trained-for', text: trainedForText(48) });

const cutNote = el('p', { class: 'note', id: 'truncated', hidden: true, role: 'status', text: cutText(48) });

$('app').append(
  el('div', { class: 'controls' }, dir.wrap, arch.wrap, beam.wrap, progress, cancel, retry),
  status,
  trainedFor,
  el('div', { class: 'side' },
    el('section', { class: 'panel', 'aria-labelledby': 'h-tr' }, el('h2', { id: 'h-tr', text: 'Translate' }), examples, widget, cutNote),
    el('section', { class: 'panel eq', 'aria-labelledby': 'h-eq' },
      el('h2', { id: 'h-eq', text: 'The equations' }), eqGru, eqTransformer, beamEq)));

/** Shows the selected model's own equations. */
function showEquations(): void {
  const gru = arch.input.value === 'gru';
  eqGru.hidden = !gru;
  eqTransformer.hidden = gru;
}
showEquations();

// One Worker holds the model; choosing another model replaces it.
let translator: WorkerTranslator | null = null;
let loadingModel: AbortController | null = null;
let opening = 0; // which openModel() call is current: a replaced one must not touch the page

async function openModel(): Promise<void> {
  const me = ++opening;
  loadingModel?.abort();
  const stop = (loadingModel = new AbortController());
  widget.translator = null;
  translator?.dispose();
  translator = null;
  progress.value = 0;
  loading(true);
  const name = dir.input.value, a = arch.input.value as (typeof TRANSLATION_ARCHS)[number];
  status.textContent = `Loading the ${a} model (${name})…`;
  try {
    const lib = await getLib();
    if (typeof (lib as { loadTranslator?: unknown }).loadTranslator !== 'function') {
      if (me !== opening) return;
      loading(false);
      status.textContent = 'This build of attnlab has no translator yet: the trained models ship with the translation part of the library, and this page translates as soon as they are in.';
      document.body.dataset.api = 'missing';
      document.body.dataset.result = 'ok';
      return;
    }
    const bytes = await modelBytes(name, a, (loaded, total) => {
      progress.value = total ? loaded / total : 0;
      status.textContent = `Loading the model: ${downloaded(loaded, total)}…`;
    }, stop.signal);
    const tr = await lib.loadTranslator(bytes, { worker: true, signal: stop.signal });
    if (me !== opening) {
      tr.dispose();
      return;
    }
    translator = tr;
    trainedFor.textContent = trainedForText(tr.maxSourceTokens);
    cutNote.textContent = cutText(tr.maxSourceTokens);
    loading(false);
    progress.value = 1;
    status.textContent = `Model ready: ${name} ${a}, ${(tr.parameters / 1e6).toFixed(2)} M parameters. Decoding runs in a Worker.`;
    widget.translator = tr;
    document.body.dataset.api = 'ready';
    document.body.dataset.result = 'ok';
    widget.run().catch(() => undefined); // the widget shows its own errors
  } catch (e) {
    if (me !== opening || stop.signal.aborted) return; // replaced, or cancelled (which says so)
    // Said once, by the model's status line with a way to try again (a dropped connection, a
    // flaky network), rather than also in the page-wide alert.
    loading(false, true);
    status.textContent = `The model failed to load: ${(e instanceof Error ? e.message : String(e)).replace(/\.$/, '')}. Choose Load again to retry.`;
    status.classList.add('error');
    document.body.dataset.result ??= 'error';
  }
}

function fillExamples(): void {
  examples.replaceChildren(el('span', { class: 'stat', text: 'Try:' }), ...EXAMPLES[dir.input.value as (typeof TRANSLATION_DIRS)[number]].map((s) => {
    // In the language they are in, like the widget's input (its translator's srcLang).
    const b = el('button', { type: 'button', text: s, lang: dir.input.value === 'fra-eng' ? 'fr' : 'en' });
    b.addEventListener('click', () => {
      widget.value = s;
      widget.run().catch(() => undefined);
    });
    return b;
  }));
}

dir.input.addEventListener('change', () => {
  widget.value = EXAMPLES[dir.input.value as (typeof TRANSLATION_DIRS)[number]][0];
  fillExamples();
  writeHash({ dir: dir.input.value, text: null });
  void openModel();
});
arch.input.addEventListener('change', () => {
  writeHash({ arch: arch.input.value });
  showEquations();
  void openModel();
});
beam.input.addEventListener('change', () => {
  widget.setAttribute('beam', beam.input.value);
  writeHash({ beam: beam.input.value });
  if (widget.translator) widget.run().catch(() => undefined);
});
cancel.addEventListener('click', () => {
  loadingModel?.abort();
  loading(false, true);
  status.textContent = 'Loading cancelled. Choose Load again, or another model.';
});
retry.addEventListener('click', () => void openModel());
widget.addEventListener('attn-translated', () => {
  writeHash({ text: widget.value });
  cutNote.hidden = !(widget.result as { truncated?: boolean } | null)?.truncated;
});

widget.value = state.text ?? EXAMPLES[state.dir][0];
fillExamples();
// The page's instance runs nothing but this translator's Worker, which takes its build and threads:
// the default threads, not the interactive pages' one (beam 5 is 1.3-1.6x faster on 2 cores).
getLib({}).catch(showError);
void openModel();
