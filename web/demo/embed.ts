// Page 8: how to embed a widget or a page in a course: the widget as HTML alone from a CDN, in a
// notebook cell or a Jupyter Book / MyST / Quarto page, or a whole page in an iframe (LMS), each
// generated from the state of the view chosen (the footer's "embed this view" link passes it in
// the hash as view=…), with copy buttons and a live iframe that reports its height.
import '../components/heatmap';
import '../components/regression';
import { CDNS, cdnSnippet, iframeSnippet, mystBlock, notebookCell, quartoBlock, RESIZE_SCRIPT, widgetMarkup, type CdnName } from './embed-recipes';
import { $, el, select } from './site/dom';
import { getLib, initPage, showError } from './site/shell';
import { PAGES } from './site/pages';
import { oneOf, param, writeHash } from './site/state';

initPage('embed.html');

const ready = PAGES.filter((p) => p.ready && p.file !== 'embed.html');
const PRESETS: Record<string, string> = {
  'pooling.html': 'kernel=epanechnikov&h=0.400',
  'scoring.html': 'logd=9&causal=1',
  'heads.html': 'kind=cross&layer=1',
  'positional.html': 'len=48&dim=64&head=3',
  'efficient.html': 'S=64&w=4&b=8',
  'performance.html': 'preset=quick',
};
declare const __ATTNLAB_VERSION__: string;
const state = {
  page: param('page', 'pooling.html', oneOf(ready.map((p) => p.file))),
  cdn: param<CdnName>('cdn', 'jsdelivr', oneOf(Object.keys(CDNS) as CdnName[])),
  // The hash of the view to embed, as that page wrote it; else a preset.
  view: param<string | null>('view', null, (v) => v),
};

const base = new URL('./', location.href).href;

function codeBlock(id: string, label: string): { wrap: HTMLElement; code: HTMLElement } {
  const code = el('code', { id });
  const status = el('span', { class: 'stat', 'aria-live': 'polite' });
  const copy = el('button', { type: 'button', id: `${id}-copy`, text: 'Copy', 'aria-label': `Copy the ${label}` });
  copy.addEventListener('click', async () => {
    const text = code.textContent ?? '';
    try {
      // In some frames (an opaque-origin sandbox) Chromium leaves writeText pending, neither done nor
      // refused: after a second, treat it as refused, so the reader always learns what happened.
      await Promise.race([navigator.clipboard.writeText(text),
        new Promise((_, reject) => setTimeout(() => reject(new Error('clipboard: no answer')), 1000))]);
    } catch {
      // No clipboard permission (e.g. inside an iframe): select the text for Ctrl+C instead.
      const range = document.createRange();
      range.selectNodeContents(code);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
      status.textContent = 'Selected: press Ctrl+C (⌘C) to copy.';
      return;
    }
    status.textContent = 'Copied.';
    setTimeout(() => (status.textContent = ''), 2000);
  });
  return { wrap: el('div', {}, el('pre', { tabindex: 0, 'aria-label': label }, code), el('div', { class: 'controls' }, copy, status)), code };
}

const bundlerSnippet = codeBlock('snippet-npm', 'bundler snippet');
bundlerSnippet.code.textContent = `// npm install attnlab
import 'attnlab/components';            // registers <attn-…> elements
import { load } from 'attnlab';

const heat = document.querySelector('attn-heatmap');
heat.rowLabels = ['q1', 'q2'];
heat.colLabels = ['k1', 'k2', 'k3'];
heat.data = [[0.2, 0.5, 0.3], [0.6, 0.3, 0.1]];  // or a tensor { data, shape }
heat.addEventListener('attn-pin', (e) => console.log(e.detail)); // { row, col, value, … }`;

const pageSel = select('embed-page', 'View', ready.map((p) => [p.file, p.title] as const), state.page);
const cdnSel = select<CdnName>('embed-cdn', 'CDN', [['jsdelivr', 'jsDelivr'], ['unpkg', 'unpkg']], state.cdn);
const cdnCode = codeBlock('snippet-element', 'CDN snippet');
const notebookCode = codeBlock('snippet-notebook', 'notebook cell');
const mystCode = codeBlock('snippet-myst', 'Jupyter Book / MyST block');
const quartoCode = codeBlock('snippet-quarto', 'Quarto block');
const iframeCode = codeBlock('snippet-iframe', 'iframe snippet');
const resizeCode = codeBlock('snippet-resize', 'resize script');
resizeCode.code.textContent = RESIZE_SCRIPT;
const widgetNote = el('p', { class: 'stat', id: 'widget-note' });
const frame = el('iframe', { id: 'preview', title: 'Embedded attnlab page', style: 'width: 100%; border: 1px solid var(--line); border-radius: 8px; height: 300px', loading: 'lazy' });
const heightOut = el('span', { class: 'stat', id: 'preview-height', 'aria-live': 'polite', text: 'waiting for the frame…' });

/** The chosen view's state: the hash it was opened with (view=…), else the page's preset. */
function viewState(file: string): URLSearchParams {
  const p = new URLSearchParams(file === state.page && state.view !== null ? state.view : PRESETS[file] ?? '');
  p.delete('embed');
  return p;
}

function frameUrl(file: string): string {
  const p = viewState(file);
  p.set('embed', '1');
  return `${new URL(file, base).href}#${p.toString()}`;
}

/** The height the preview frame posted for the view shown (0 until it does). */
let measured = 0;

function update(): void {
  measured = 0;
  writeSnippets();
  frame.src = frameUrl(pageSel.input.value);
}

function writeSnippets(): void {
  const file = pageSel.input.value;
  const cdn = cdnSel.input.value as CdnName;
  const title = ready.find((p) => p.file === file)?.title ?? 'attnlab';
  const markup = widgetMarkup(file, viewState(file));
  const url = frameUrl(file);
  // The LMS iframe is never resized (no script survives there): give it the measured height, with
  // a margin, or a learner scrolls a box inside the page (a pooling view is some 1400 px tall).
  const iframe = measured ? iframeSnippet(url, `attnlab: ${title}`, measured + 32) : iframeSnippet(url, `attnlab: ${title}`);
  // A view no widget reproduces is framed in every recipe: the iframe is HTML too, and its URL
  // carries the view's whole state.
  widgetNote.textContent = markup
    ? `${title}: this view as HTML alone; the widget loads attnlab (and the model it names) from the CDN.`
    : `${title}: this view is not a single widget, so every recipe frames the page in this state (an iframe is HTML too).`;
  const html = markup ? cdnSnippet(CDNS[cdn](__ATTNLAB_VERSION__), markup) : iframe;
  cdnCode.code.textContent = html;
  notebookCode.code.textContent = notebookCell(html);
  mystCode.code.textContent = mystBlock(html);
  quartoCode.code.textContent = quartoBlock(html);
  iframeCode.code.textContent = iframe;
  frame.title = `Embedded attnlab page: ${title}`;
  writeHash({ page: file, cdn, view: file === state.page ? state.view : null });
}

window.addEventListener('message', (e) => {
  const d = e.data as { type?: string; height?: number } | null;
  if (!d || d.type !== 'attnlab:height' || e.source !== frame.contentWindow || typeof d.height !== 'number') return;
  const h = Math.max(100, Math.min(5000, Math.round(d.height)));
  frame.style.height = `${h}px`;
  heightOut.textContent = `The frame reported ${h} px and was resized to fit.`;
  heightOut.dataset.height = String(h);
  if (h !== measured) {
    measured = h;
    writeSnippets();
  }
});
pageSel.input.addEventListener('change', update);
cdnSel.input.addEventListener('change', update);

const demoHeat = document.createElement('attn-heatmap');
demoHeat.id = 'embed-heatmap';
demoHeat.setAttribute('row-labels', 'je suis étudiant');
demoHeat.setAttribute('col-labels', 'I am a student');
// The labels' languages: a screen reader reads 'je suis étudiant' in a French voice.
demoHeat.setAttribute('row-lang', 'fr');
demoHeat.setAttribute('col-lang', 'en');
demoHeat.setAttribute('show-values', '');
demoHeat.setAttribute('label', 'Example alignment');
demoHeat.setAttribute('data', '[[0.9,0.05,0.03,0.02],[0.05,0.85,0.05,0.05],[0.02,0.03,0.15,0.8]]');

const p = (text: string) => el('p', { class: 'stat', text });
$('app').append(
  el('div', { class: 'controls' }, pageSel.wrap, cdnSel.wrap), widgetNote,
  el('div', { class: 'grid2' },
    el('section', { class: 'panel', 'aria-labelledby': 'h-el' },
      el('h2', { id: 'h-el', text: 'The view as HTML alone' }),
      p('For pages that allow HTML: one module script from a CDN, then tags with attributes. Widgets load attnlab (and the translation model a model attribute names) themselves; no code of yours runs.'),
      cdnCode.wrap,
      el('h3', { text: 'A notebook cell' }),
      p('Jupyter, JupyterLab, VS Code, Colab: the cell’s output is the widget.'),
      notebookCode.wrap,
      el('h3', { text: 'Jupyter Book / MyST' }), mystCode.wrap,
      el('h3', { text: 'Quarto' }), quartoCode.wrap,
      el('h3', { text: 'With a bundler' }), bundlerSnippet.wrap,
      el('h3', { text: 'A heatmap from attributes, live' }), demoHeat),
    el('section', { class: 'panel', 'aria-labelledby': 'h-if' },
      el('h2', { id: 'h-if', text: 'The whole page, in an iframe (LMS)' }),
      p('Canvas and Moodle strip scripts from course pages but keep iframes. The URL hash holds the view; embed=1 drops the site’s header and footer. allow="clipboard-write" lets the copy buttons work inside the frame, allow="cross-origin-isolated" lets it use threads on an isolated course page. Sandboxed frames work too (sandbox="allow-scripts", with or without allow-same-origin).'),
      iframeCode.wrap,
      p('Where the page may run a script, this one sizes each attnlab frame to the height it posts:'),
      resizeCode.wrap,
      el('h3', { text: 'Preview' }), heightOut, frame)),
  el('section', { class: 'panel', style: 'margin-top: 1rem', 'aria-labelledby': 'h-host' },
    el('h2', { id: 'h-host', text: 'Hosting' }),
    el('p', { text: 'The package from your own server instead of a CDN: serve its dist/ with Access-Control-Allow-Origin: * and Cross-Origin-Resource-Policy: cross-origin (as jsDelivr and unpkg do), so course pages on other origins, isolated or not, may load it.' }),
    el('p', { text: 'The built site (npm run build:demo writes web/demo/dist): any static host serves it. Send Access-Control-Allow-Origin: * so it works in a frame sandboxed without allow-same-origin (whose opaque origin makes even the site’s own scripts cross-origin), and Cross-Origin-Resource-Policy: cross-origin so isolated course pages may frame it. For threads, also send Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp; without them every page still works on the SIMD build with one thread. npm start and vite preview send all four.' })));

update();
document.body.dataset.result = 'ok';
getLib().catch(showError);
