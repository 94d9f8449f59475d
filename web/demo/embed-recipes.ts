// The embed recipes the embed page offers, built from a view's state (its URL hash): the widget as
// HTML alone, loaded from a CDN; the iframe for an LMS; a notebook cell; a Jupyter Book / MyST and a
// Quarto raw-HTML block. Pure functions of their arguments: tests/browser/embed.browser.test.ts
// runs what they generate.
import { decodePoints, HEADS_DEFAULT_SOURCE, headsView, poolingView, TRANSLATION_EXAMPLES, translationView } from './site/view-state';

export const CDNS = {
  jsdelivr: (version: string) => `https://cdn.jsdelivr.net/npm/attnlab@${version}/`,
  unpkg: (version: string) => `https://unpkg.com/attnlab@${version}/`,
} as const;
export type CdnName = keyof typeof CDNS;

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
const attrs = (a: Record<string, string | undefined>) =>
  Object.entries(a).filter(([, v]) => v !== undefined && v !== '').map(([k, v]) => ` ${k}="${esc(v!)}"`).join('');

/**
 * The widget that shows a page's view, with the view's state as attributes, or null for views no
 * widget reproduces (a page of several figures, the heads page's untrained model): those embed as
 * an iframe of the page, whose hash keeps the whole state. A key the hash lacks takes the page's
 * own default (site/view-state.ts), so the widget shows what the page showed.
 */
export function widgetMarkup(page: string, state: URLSearchParams): string | null {
  const get = (k: string) => state.get(k) ?? undefined;
  switch (page) {
    case 'pooling.html': {
      // Points placed by hand (pts=) replace the seeded sample (n, seed).
      const pts = state.has('pts') ? decodePoints(state.get('pts')!) : undefined;
      const points = pts ? JSON.stringify(pts.map((p) => [p.x, p.y])) : undefined;
      // The values the page shows: one outside its controls' ranges (n=150) took the default there.
      const v = poolingView(state);
      return `<attn-regression${attrs({ kernel: v.kernel, bandwidth: String(v.h),
        ...(points ? { points } : { n: String(v.n), seed: state.has('seed') ? String(v.seed) : undefined }) })}></attn-regression>`;
    }
    case 'heads.html': {
      // The heads page shows the trained Transformer's encoder or decoder self-attention, or its
      // cross-attention; its untrained comparison has random weights no widget loads.
      if (get('model') === 'untrained') return null;
      const text = get('src') ?? HEADS_DEFAULT_SOURCE;
      const kind = get('kind');
      const part = kind === 'cross' || kind === 'decoder' ? kind : 'encoder';
      // The page counts layers and heads from 0 (layer=1 is the second); the widgets from 1. The
      // layer is always written: the page opens on its first, the widget on its last.
      const layer = String(headsView(state).layer + 1);
      const heads = state.has('heads') ? state.get('heads')!.split('.').filter((h) => /^\d+$/.test(h)).map((h) => Number(h) + 1).join(' ') : undefined;
      return `<attn-head-view${attrs({ model: 'fra-eng', text, part, layer, heads })}></attn-head-view>\n<attn-model-view${attrs({ model: 'fra-eng', text, part })}></attn-model-view>`;
    }
    case 'translation.html': {
      // The beam width as the page's slider shows it (#beam=2.5: 3).
      const { dir, arch, beam } = translationView(state);
      return `<attn-translate${attrs({ model: dir, arch, beam: state.has('beam') ? String(beam) : undefined, value: get('text') ?? TRANSLATION_EXAMPLES[dir][0] })}></attn-translate>`;
    }
    default:
      return null;
  }
}

/** The widget from a CDN: one module script (the package's widgets) and the element. */
export function cdnSnippet(base: string, markup: string): string {
  return `<script type="module" src="${base}dist/components/index.js"></script>\n${markup}`;
}

/**
 * The iframe an LMS (Canvas, Moodle) keeps when it strips scripts: a fixed height (the embed page
 * writes the one its preview measured), since the resizing script may not survive.
 * `frameborder="0"` keeps it borderless where the LMS refuses inline styles (`style="border: 0"`).
 * `allow` lets the frame copy snippets to the clipboard and, on a cross-origin isolated course
 * page, run the threaded build.
 */
export function iframeSnippet(url: string, title: string, height = 640): string {
  return `<iframe src="${esc(url)}" title="${esc(title)}" width="100%" height="${height}" style="border: 0" frameborder="0"
  loading="lazy" allow="clipboard-write; cross-origin-isolated"></iframe>`;
}

/** For pages that allow a script: resize attnlab frames to the height they post. */
export const RESIZE_SCRIPT = `<script>
  addEventListener('message', (e) => {
    if (!e.data || e.data.type !== 'attnlab:height') return;
    for (const f of document.querySelectorAll('iframe'))
      if (f.contentWindow === e.source) f.style.height = e.data.height + 'px';
  });
</script>`;

/** A Python string literal for any text (JSON's escapes are Python's for these characters). */
const pyString = (s: string) => JSON.stringify(s);

/** A notebook cell (Jupyter, Colab, VS Code): the HTML as the cell's rich output. */
export function notebookCell(html: string): string {
  return `from IPython.display import HTML\nHTML(${pyString(html)})`;
}

/** Jupyter Book / MyST Markdown: a raw HTML block. */
export function mystBlock(html: string): string {
  return `\`\`\`{raw} html\n${html}\n\`\`\``;
}

/** Quarto: a raw HTML block. */
export function quartoBlock(html: string): string {
  return `\`\`\`{=html}\n${html}\n\`\`\``;
}
