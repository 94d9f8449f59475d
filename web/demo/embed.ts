// Page 8: how to embed a widget or a page: snippets, copy buttons, and a live iframe that
// reports its height to this page.
import '../components/heatmap';
import '../components/regression';
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
const state = { page: param('page', 'pooling.html', oneOf(ready.map((p) => p.file))) };

const base = new URL('./', location.href).href;

function codeBlock(id: string, label: string): { wrap: HTMLElement; code: HTMLElement } {
  const code = el('code', { id });
  const status = el('span', { class: 'stat', 'aria-live': 'polite' });
  const copy = el('button', { type: 'button', id: `${id}-copy`, text: 'Copy', 'aria-label': `Copy the ${label}` });
  copy.addEventListener('click', async () => {
    const text = code.textContent ?? '';
    try {
      await navigator.clipboard.writeText(text);
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

const elementSnippet = codeBlock('snippet-element', 'custom element snippet');
elementSnippet.code.textContent = `<!-- attnlab's widgets: dist/components of the npm package, wherever you serve it. -->
<script type="module" src="/node_modules/attnlab/dist/components/index.js"></script>

<!-- Nadaraya-Watson regression: drag the points. -->
<attn-regression kernel="epanechnikov" bandwidth="0.4" n="30"></attn-regression>

<!-- Any matrix, with labels; hover for values, click to pin. -->
<attn-heatmap row-labels="je suis étudiant" col-labels="I am a student"
  data="[[0.9,0.05,0.03,0.02],[0.05,0.85,0.05,0.05],[0.02,0.03,0.15,0.8]]"></attn-heatmap>`;

const bundlerSnippet = codeBlock('snippet-npm', 'bundler snippet');
bundlerSnippet.code.textContent = `// npm install attnlab
import 'attnlab/components';            // registers <attn-…> elements
import { load } from 'attnlab';

const heat = document.querySelector('attn-heatmap');
heat.rowLabels = ['q1', 'q2'];
heat.colLabels = ['k1', 'k2', 'k3'];
heat.data = [[0.2, 0.5, 0.3], [0.6, 0.3, 0.1]];  // or a tensor { data, shape }
heat.addEventListener('attn-pin', (e) => console.log(e.detail)); // { row, col, value, … }`;

const pageSel = select('embed-page', 'Page', ready.map((p) => [p.file, p.title] as const), state.page);
const iframeSnippet = codeBlock('snippet-iframe', 'iframe snippet');
const frame = el('iframe', { id: 'preview', title: 'Embedded attnlab page', style: 'width: 100%; border: 1px solid var(--line); border-radius: 8px; height: 300px', loading: 'lazy' });
const heightOut = el('span', { class: 'stat', id: 'preview-height', 'aria-live': 'polite', text: 'waiting for the frame…' });

function frameUrl(file: string): string {
  return `${new URL(file, base).href}#${PRESETS[file] ?? ''}&embed=1`;
}

function updateIframe(): void {
  const file = pageSel.input.value;
  const url = frameUrl(file);
  const title = ready.find((p) => p.file === file)?.title ?? 'attnlab';
  iframeSnippet.code.textContent = `<iframe src="${url}"
  title="attnlab: ${title}" style="width: 100%; border: 0" loading="lazy"></iframe>
<script>
  // attnlab pages post their height; size the frame to fit.
  addEventListener('message', (e) => {
    if (!e.data || e.data.type !== 'attnlab:height') return;
    for (const f of document.querySelectorAll('iframe'))
      if (f.contentWindow === e.source) f.style.height = e.data.height + 'px';
  });
</script>`;
  frame.src = url;
  frame.title = `Embedded attnlab page: ${title}`;
  writeHash({ page: file });
}

window.addEventListener('message', (e) => {
  const d = e.data as { type?: string; height?: number } | null;
  if (!d || d.type !== 'attnlab:height' || e.source !== frame.contentWindow || typeof d.height !== 'number') return;
  const h = Math.max(100, Math.min(5000, Math.round(d.height)));
  frame.style.height = `${h}px`;
  heightOut.textContent = `The frame reported ${h} px and was resized to fit.`;
  heightOut.dataset.height = String(h);
});
pageSel.input.addEventListener('change', updateIframe);

const demoHeat = document.createElement('attn-heatmap');
demoHeat.id = 'embed-heatmap';
demoHeat.setAttribute('row-labels', 'je suis étudiant');
demoHeat.setAttribute('col-labels', 'I am a student');
demoHeat.setAttribute('show-values', '');
demoHeat.setAttribute('label', 'Example alignment');
demoHeat.setAttribute('data', '[[0.9,0.05,0.03,0.02],[0.05,0.85,0.05,0.05],[0.02,0.03,0.15,0.8]]');

$('app').append(
  el('div', { class: 'grid2' },
    el('section', { class: 'panel', 'aria-labelledby': 'h-el' },
      el('h2', { id: 'h-el', text: 'A widget, with one tag' }),
      el('p', { class: 'stat', text: 'Load the widgets once; then each tag works on its own. Data goes in as attributes (JSON) or properties (arrays or attnlab tensors); widgets fire attn-* events, export SVG and PNG, follow light and dark (or a theme="dark" attribute), and work from the keyboard.' }),
      elementSnippet.wrap,
      el('p', { class: 'stat', text: 'With a bundler:' }),
      bundlerSnippet.wrap,
      el('h3', { text: 'The heatmap from the snippet, live' }), demoHeat),
    el('section', { class: 'panel', 'aria-labelledby': 'h-if' },
      el('h2', { id: 'h-if', text: 'A whole page, in an iframe' }),
      el('p', { class: 'stat', text: 'The URL hash presets the view (every page keeps its state there); embed=1 drops the site’s header and footer. The page posts its height to the parent, and the script resizes the frame.' }),
      el('div', { class: 'controls' }, pageSel.wrap),
      iframeSnippet.wrap,
      el('h3', { text: 'Preview' }), heightOut, frame)),
  el('section', { class: 'panel', style: 'margin-top: 1rem', 'aria-labelledby': 'h-host' },
    el('h2', { id: 'h-host', text: 'Hosting the built site' }),
    el('p', { text: 'npm run build:demo writes a static site to web/demo/dist. Any static host serves it. To use the threaded build, serve it with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp; without those headers every page still works, on the SIMD build with one thread.' })));

updateIframe();
document.body.dataset.result = 'ok';
getLib().catch(showError);
