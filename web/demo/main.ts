// Placeholder demo: loads attnlab, runs one causal attention and shows its weights.
import { load } from 'attnlab';
import { DIM, SEQ, exampleInputs } from './example';

const $ = (id: string): HTMLElement => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} missing from index.html`);
  return el;
};

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Rows of a [1, SEQ, SEQ] weights tensor as plain arrays. */
function rows(data: Float32Array): number[][] {
  return Array.from({ length: SEQ }, (_, i) => Array.from(data.subarray(i * SEQ, (i + 1) * SEQ)));
}

function renderTable(weights: number[][]): void {
  const table = $('weights') as HTMLTableElement;
  const head = el('tr');
  head.append(el('th'), ...weights[0].map((_, j) => Object.assign(el('th', `k${j}`), { scope: 'col' })));
  const thead = el('thead');
  thead.append(head);
  table.append(thead);
  const body = el('tbody');
  weights.forEach((row, i) => {
    const tr = el('tr');
    tr.append(Object.assign(el('th', `q${i}`), { scope: 'row' }));
    row.forEach((w, j) => {
      const td = el('td', w.toFixed(4));
      td.style.setProperty('--w', String(w));
      if (j > i) td.className = 'masked';
      tr.append(td);
    });
    body.append(tr);
  });
  table.append(body);
  table.hidden = false;
}

async function main(): Promise<void> {
  const lib = await load();
  $('variant').textContent = lib.variant;
  $('threads').textContent = String(lib.threads);

  const { q, k, v } = exampleInputs();
  const { output, weights } = lib.attention(q, k, v, { causal: true, returnWeights: true });
  if (!weights) throw new Error('attention() returned no weights despite returnWeights: true');
  if (output.shape.join() !== `1,${SEQ},${DIM}`) throw new Error(`unexpected output shape [${output.shape}]`);

  const w = rows(weights.data);
  renderTable(w);
  const result = $('result');
  // Rounded for people; the exact float32 values for tests (rounding breaks row sums by ~1e-4).
  result.textContent = JSON.stringify(w.map((r) => r.map((x) => Math.round(x * 1e4) / 1e4)));
  result.dataset.exact = JSON.stringify(w);
  $('status').textContent = 'ok';
  document.body.dataset.result = 'ok';
}

function fail(err: unknown): void {
  if (document.body.dataset.result) return; // the first outcome stands
  // Emscripten rethrows a failed worker's ErrorEvent: an object with a message, not an Error.
  const message = err instanceof Error || err instanceof ErrorEvent ? err.message : String(err);
  $('status').textContent = 'error';
  const box = $('error');
  box.textContent = `Error: ${message}`;
  box.hidden = false;
  document.body.dataset.result = 'error';
  console.error(err);
}

// A pthread worker that fails to start reports here, not through load(), which would then never
// settle: show it instead of "loading…" forever.
window.addEventListener('error', (e) => fail(e.error ?? e.message));
main().catch(fail);
