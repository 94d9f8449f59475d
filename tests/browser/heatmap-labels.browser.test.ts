// <attn-heatmap>'s labels where the demo pages showed them crowded: rotated column labels running
// into one another, into the column title, past the picture's edge. Every case is drawn and its
// texts' glyph boxes compared in their own (rotated) frames, at the default and a 24 px font.
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { useWidgetPage } from './widget-page';

const widgetPage = useWidgetPage();
const { v } = widgetPage;

interface Case {
  cols: number;
  /** Characters in each column label. */
  len: number;
  /** The host's width, CSS px. */
  width: number;
  /** The cell-size attribute, or null for the default. */
  cell: number | null;
  /** Values from -15.5 to 1234.5 (a wider colour-bar legend) rather than 0..1. */
  wide: boolean;
  /** Rows, and whether they are labelled with words (ascenders and descenders) rather than numbers. */
  rows?: number;
  rowWords?: boolean;
}

const CASES: Case[] = [];
for (const cols of [8, 13, 24, 48, 64, 100, 200]) {
  for (const len of [1, 2, 3, 4, 5, 6, 10, 14]) {
    for (const width of [180, 320, 600, 1280]) {
      for (const cell of [null, 6, 12]) CASES.push({ cols, len, width, cell, wide: (cols + len) % 2 === 1 });
    }
  }
}

/** Tall maps: rows of about 6 to 44 px (the positional page's 32 and 64 positions at 7 px). */
const ROW_CASES: Case[] = [];
for (const rows of [3, 8, 13, 32, 64, 128]) {
  for (const width of [180, 320, 600, 1280]) {
    for (const cell of [null, 6, 7, 12, 14]) {
      for (const rowWords of [false, true]) ROW_CASES.push({ cols: rows % 2 ? 8 : 64, len: 2, width, cell, wide: false, rows, rowWords });
    }
  }
}

/**
 * Draws each case in one heatmap on the stage and returns what is wrong with its texts: two whose
 * glyph boxes overlap, or one reaching outside the SVG's viewBox. A text's box is its getBBox in
 * its own frame carried into the SVG's by its transform, so a rotated label is a rotated rectangle
 * (its getBoundingClientRect is axis-aligned and overlaps its neighbours' even when the glyphs do
 * not); two rectangles overlap when no edge normal of either separates them (by more than 0.5 px).
 * Two row labels are compared by their ink (getBBox is the font's whole ascent-to-descent box,
 * which a line of text shares with its neighbours' in ordinary text): the lower one's tallest
 * glyph must clear the upper one's lowest by 0.1 em, what a line 1.2 em high leaves between a
 * descender and the next line's ascender (words' ink is about 1.1 em tall; digits' 0.75 em).
 */
function layoutFaults(cases: Case[]): string[] {
  const WORDS = ['the', 'mum', 'swam', 'W', 'attention', 'is', 'all', 'you', 'need', 'x'];
  const stage = document.getElementById('stage')!;
  const host = document.createElement('attn-heatmap') as HTMLElement & { renderNow(): void };
  host.setAttribute('row-title', 'position');
  host.setAttribute('col-title', 'dimension');
  stage.replaceChildren(host);
  const out: string[] = [];
  const pen = document.createElement('canvas').getContext('2d')!;
  for (const c of cases) {
    const labels = Array.from({ length: c.cols }, (_, j) => (j % 3 ? `${WORDS[j % WORDS.length]}${j}` : String(j).repeat(c.len)).slice(0, c.len).padEnd(c.len, 'm'));
    host.style.width = `${c.width}px`;
    if (c.cell === null) host.removeAttribute('cell-size');
    else host.setAttribute('cell-size', String(c.cell));
    host.setAttribute('col-labels', JSON.stringify(labels));
    const rows = c.rows ?? 5;
    if (c.rowWords) host.setAttribute('row-labels', JSON.stringify(Array.from({ length: rows }, (_, i) => `${['the', 'you', 'gäbe', 'fly', 'kept'][i % 5]}${i}`)));
    else host.removeAttribute('row-labels');
    host.setAttribute('data', JSON.stringify(Array.from({ length: rows }, (_, i) => labels.map((_, j) => (c.wide ? (i * j % 7 === 3 ? -15.5 : i + j === 4 ? 1234.5 : 1) : ((i + j) % 5) / 4)))));
    host.renderNow();
    const svg = host.shadowRoot!.querySelector('svg')!;
    const vb = svg.viewBox.baseVal;
    const toSvg = svg.getScreenCTM()!.inverse();
    /** A row label's ink, top and bottom (SVG units), and its font size; upright, untransformed. */
    const ink = (t: SVGTextElement): [number, number, number] => {
      const cs = getComputedStyle(t);
      pen.font = `${cs.fontSize} ${cs.fontFamily}`;
      const m = pen.measureText(t.textContent!);
      const y = Number(t.getAttribute('y'));
      return [y - m.actualBoundingBoxAscent, y + m.actualBoundingBoxDescent, parseFloat(cs.fontSize)];
    };
    const boxes = [...svg.querySelectorAll('text')].filter((t) => !t.closest('.cells') && t.textContent).map((t) => {
      const b = t.getBBox();
      const m = toSvg.multiply(t.getScreenCTM()!);
      const name = t.hasAttribute('data-col') ? `column label ${t.getAttribute('data-col')} '${t.textContent}'` : t.hasAttribute('data-row') ? `row label ${t.getAttribute('data-row')}` : `'${t.textContent}'`;
      const pts = [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]].map(([x, y]) => new DOMPoint(x, y).matrixTransform(m));
      return { name, row: t.hasAttribute('data-row'), pts, ink: t.hasAttribute('data-row') ? ink(t) : [0, 0, 0] };
    });
    type Box = (typeof boxes)[number];
    const depth = (a: Box, b: Box): number => {
      let least = Infinity;
      for (const q of [a, b]) {
        for (let i = 0; i < 2; i++) {
          const ex = q.pts[i + 1].x - q.pts[i].x;
          const ey = q.pts[i + 1].y - q.pts[i].y;
          const [nx, ny] = [-ey / Math.hypot(ex, ey), ex / Math.hypot(ex, ey)];
          const span = (r: Box) => {
            const d = r.pts.map((p) => p.x * nx + p.y * ny);
            return [Math.min(...d), Math.max(...d)];
          };
          const [a0, a1] = span(a);
          const [b0, b1] = span(b);
          least = Math.min(least, Math.min(a1, b1) - Math.max(a0, b0));
        }
      }
      return least;
    };
    const where = `${c.rows ? `${c.rows} rows${c.rowWords ? ' (words)' : ''}, ` : ''}${c.cols} columns, ${c.len}-character labels, ${c.width} px wide, cell-size ${c.cell ?? 'default'}${c.wide ? ', wide legend' : ''}`;
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        if (boxes[i].row && boxes[j].row) {
          const [[, bottom, em], [top]] = [boxes[i].ink, boxes[j].ink].sort((a, b) => a[0] - b[0]);
          const gap = top - bottom;
          if (gap < 0.1 * em) out.push(`${where}: ${boxes[i].name} and ${boxes[j].name}: ink ${gap.toFixed(1)} px apart at ${em} px text`);
          continue;
        }
        const d = depth(boxes[i], boxes[j]);
        if (d > 0.5) out.push(`${where}: ${boxes[i].name} overlaps ${boxes[j].name} by ${d.toFixed(1)} px`);
      }
    }
    for (const b of boxes) {
      const xs = b.pts.map((p) => p.x);
      const ys = b.pts.map((p) => p.y);
      if (Math.min(...xs) < vb.x - 0.5 || Math.min(...ys) < vb.y - 0.5 || Math.max(...xs) > vb.x + vb.width + 0.5 || Math.max(...ys) > vb.y + vb.height + 0.5) {
        out.push(`${where}: ${b.name} reaches outside the picture (x ${Math.min(...xs).toFixed(1)} to ${Math.max(...xs).toFixed(1)}, y ${Math.min(...ys).toFixed(1)} to ${Math.max(...ys).toFixed(1)} in ${vb.width} x ${vb.height})`);
      }
    }
  }
  return out;
}

/** The fixture page with the reader's default font size at `fontSize` px (16 is the usual). */
async function pageAt(fontSize: number): Promise<{ page: Page; problems: string[]; close(): Promise<void> }> {
  if (fontSize === 16) return { page: v.page, problems: v.problems, close: async () => {} };
  const ctx = await widgetPage.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  const problems: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  const cdp = await ctx.newCDPSession(page);
  await cdp.send('Page.enable');
  await cdp.send('Page.setFontSizes', { fontSizes: { standard: fontSize } });
  await page.goto(widgetPage.url);
  await page.waitForFunction(() => customElements.get('attn-heatmap') !== undefined);
  return { page, problems, close: () => ctx.close() };
}

describe("<attn-heatmap>'s labels", () => {
  for (const fontSize of [16, 24]) {
    test(`at a ${fontSize} px default font, 8 to 200 columns, labels of 1 to 14 characters, 180 to 1280 px wide: no text overlaps another or leaves the picture`, async () => {
      const p = await pageAt(fontSize);
      try {
        const faults = await p.page.evaluate(layoutFaults, CASES);
        expect({ count: faults.length, first: faults.slice(0, 8) }).toEqual({ count: 0, first: [] });
        expect(p.problems).toEqual([]);
      } finally {
        await p.close();
      }
    });

    test(`at a ${fontSize} px default font, 3 to 128 rows labelled with numbers or words, 180 to 1280 px wide: row labels shown are clear of one another`, async () => {
      const p = await pageAt(fontSize);
      try {
        const faults = await p.page.evaluate(layoutFaults, ROW_CASES);
        expect({ count: faults.length, first: faults.slice(0, 8) }).toEqual({ count: 0, first: [] });
        expect(p.problems).toEqual([]);
      } finally {
        await p.close();
      }
    });
  }

  test('rotated labels and row labels are thinned to a round step that keeps 0; labels that fit their cells are all shown, upright', async () => {
    const shown = (html: string) => v.page.evaluate((x) => {
      document.getElementById('stage')!.innerHTML = x;
      const el = document.querySelector('attn-heatmap') as HTMLElement & { renderNow(): void };
      el.renderNow();
      const texts = [...el.shadowRoot!.querySelectorAll('text[data-col]')];
      const rows = [...el.shadowRoot!.querySelectorAll('text[data-row]')].map((t) => Number(t.getAttribute('data-row')));
      return { cols: texts.map((t) => Number(t.getAttribute('data-col'))), rotated: texts.some((t) => t.hasAttribute('transform')), ...(rows.length > 1 ? { rows } : {}) };
    }, html);
    const data = (cols: number, rows = 1) => JSON.stringify(Array.from({ length: rows }, () => Array.from({ length: cols }, (_, j) => j / cols)));
    // The positional page's sinusoid map: 32 rows and 64 columns of about 7 px.
    expect(await shown(`<attn-heatmap style="width: 540px" cell-size="12" col-title="dimension" data="${data(64, 32)}"></attn-heatmap>`))
      .toEqual({ cols: Array.from({ length: 13 }, (_, i) => i * 5), rotated: true, rows: [0, 5, 10, 15, 20, 25, 30] });
    expect(await shown(`<attn-heatmap style="width: 600px" data="${data(8)}"></attn-heatmap>`))
      .toEqual({ cols: [0, 1, 2, 3, 4, 5, 6, 7], rotated: false });
  });

  test("a bad cell-size's warning names the size drawn: the default, grown with the text", async () => {
    for (const [fontSize, px] of [[16, 44], [24, 66]]) {
      const p = await pageAt(fontSize);
      try {
        const r = await p.page.evaluate(() => {
          document.getElementById('stage')!.innerHTML = '<attn-heatmap cell-size="-3" data="[[0.5,0.2]]"></attn-heatmap>';
          const el = document.querySelector('attn-heatmap') as HTMLElement & { renderNow(): void };
          el.renderNow();
          const cell = el.shadowRoot!.querySelector('.cells rect')!;
          return { fault: el.shadowRoot!.querySelector('.fault')!.textContent, cell: Number(cell.getAttribute('width')) - 0.3 };
        });
        expect(r).toEqual({ fault: `<attn-heatmap>: cell-size: expected a number of pixels above 0, got '-3'; using the default, ${px} px (44 px at the usual text size, grown with it)`, cell: px });
      } finally {
        await p.close();
      }
    }
  });
});
