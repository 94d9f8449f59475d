// Small DOM helpers for the pages: text goes in as text, never as markup.

export function $(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing from the page`);
  return el;
}

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | number | boolean | undefined> = {}, ...children: (Node | string | null | undefined)[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (k === 'text') node.textContent = String(v);
    else if (k === 'class') node.className = String(v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

/** A labelled range input with its value shown; returns the input. */
/**
 * A labelled range input and its readout. The readout (and the spoken value) is `format` of the
 * value as the thumb moves; show(text) writes another, for a value set without moving it.
 */
export function slider(opts: { id: string; label: string; min: number; max: number; step: number; value: number; format?: (v: number) => string }): { wrap: HTMLElement; input: HTMLInputElement; out: HTMLOutputElement; show: (text: string) => void } {
  const input = el('input', { type: 'range', id: opts.id, min: opts.min, max: opts.max, step: opts.step, value: opts.value });
  const out = el('output', { for: opts.id, id: `${opts.id}-value` });
  const fmt = opts.format ?? String;
  const show = (text: string) => {
    out.textContent = text;
    input.setAttribute('aria-valuetext', text);
  };
  const sync = () => show(fmt(Number(input.value)));
  input.addEventListener('input', sync);
  sync();
  const wrap = el('div', { class: 'control' }, el('label', { for: opts.id, text: opts.label }), input, out);
  return { wrap, input, out, show };
}

export function select<T extends string>(id: string, label: string, options: readonly (readonly [T, string])[], value: T): { wrap: HTMLElement; input: HTMLSelectElement } {
  const input = el('select', { id });
  for (const [v, text] of options) input.append(el('option', { value: v, text, selected: v === value }));
  input.value = value;
  return { wrap: el('div', { class: 'control' }, el('label', { for: id, text: label }), input), input };
}

/**
 * Disables `off` and enables `on` (a Run button and its Cancel as long work starts, the other way
 * round as it ends). A focused button that becomes disabled drops keyboard focus to the page, and a
 * keyboard or screen-reader user's place with it: where `off` had focus, `on` takes it. `on` stays
 * disabled when `canEnable` is false.
 */
export function handOver(off: HTMLButtonElement, on: HTMLButtonElement, canEnable = true): void {
  const focused = document.activeElement === off;
  off.disabled = true;
  on.disabled = !canEnable;
  if (focused && canEnable) on.focus();
}

export function checkbox(id: string, label: string, checked: boolean): { wrap: HTMLElement; input: HTMLInputElement } {
  const input = el('input', { type: 'checkbox', id, checked });
  return { wrap: el('div', { class: 'control check' }, input, el('label', { for: id, text: label })), input };
}
