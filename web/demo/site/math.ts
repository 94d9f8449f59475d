// Equations as MathML Core (rendered by the browser itself: no CDN, no font download), built
// with DOM calls. `t('f(x) = y')` turns a flat string into identifiers, numbers and operators;
// the helpers nest fractions, sub/superscripts, roots and sums.

const NS = 'http://www.w3.org/1998/Math/MathML';
type Child = Element | string;

function m(tag: string, children: Child[], attrs: Record<string, string> = {}): Element {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(typeof c === 'string' ? t(c) : c);
  return e;
}

/** Tokens of a flat expression: letters -> <mi>, digits -> <mn>, anything else -> <mo>. */
export function t(src: string): Element {
  const row = document.createElementNS(NS, 'mrow');
  const re = /\s*(?:([A-Za-z]+|[α-ωΑ-Ω])|(\d+(?:\.\d+)?)|(\S))/gy;
  let match: RegExpExecArray | null;
  while ((match = re.exec(src)) !== null) {
    const [, id, num, op] = match;
    if (id !== undefined) {
      const node = document.createElementNS(NS, 'mi');
      node.textContent = id;
      if (id.length > 1) node.setAttribute('mathvariant', 'normal');
      row.append(node);
    } else if (num !== undefined) {
      const node = document.createElementNS(NS, 'mn');
      node.textContent = num;
      row.append(node);
    } else if (op !== undefined) {
      const node = document.createElementNS(NS, 'mo');
      node.textContent = op === '-' ? '−' : op === '*' ? '·' : op;
      // Flat-string brackets stay text-sized; stretched ones look odd around sub/superscripts.
      if ('()[]|'.includes(op)) node.setAttribute('stretchy', 'false');
      row.append(node);
    }
  }
  return row;
}

export const row = (...c: Child[]): Element => m('mrow', c);
export const frac = (a: Child, b: Child): Element => m('mfrac', [a, b]);
export const sub = (a: Child, b: Child): Element => m('msub', [a, b]);
export const sup = (a: Child, b: Child): Element => m('msup', [a, b]);
export const subsup = (a: Child, b: Child, c: Child): Element => m('msubsup', [a, b, c]);
export const sqrt = (a: Child): Element => m('msqrt', [a]);
export const under = (a: Child, b: Child): Element => m('munder', [a, b]);
export const op = (s: string): Element => {
  const e = document.createElementNS(NS, 'mo');
  e.textContent = s;
  return e;
};
export const text = (s: string): Element => {
  const e = document.createElementNS(NS, 'mtext');
  e.textContent = s;
  return e;
};
/** Σ with limits under/over it. */
export const sum = (lo: Child, hi?: Child): Element => {
  const sigma = document.createElementNS(NS, 'mo');
  sigma.textContent = '∑';
  return hi === undefined ? m('munder', [sigma, lo]) : m('munderover', [sigma, lo, hi]);
};

/** A display equation with an accessible text alternative. */
export function math(label: string, ...children: Child[]): Element {
  const e = inline(label, ...children);
  e.setAttribute('display', 'block');
  return e;
}

// The site's notation is d2l's: the scaled dot product softmax(QKᵀ/√d)V with d the length of a
// query and a key (11.3), and multi-head attention's heads hᵢ = f(Wᵢ⁽q⁾q, Wᵢ⁽k⁾k, Wᵢ⁽v⁾v) (11.5).

/** Head i's learned projection of the queries, keys or values: W_i^(q), W_i^(k) or W_i^(v). */
export const headProj = (x: 'q' | 'k' | 'v'): Element => subsup('W', 'i', t(`(${x})`));

/** headProj in running text. */
export const headProjInline = (x: 'q' | 'k' | 'v'): Element => inline(`W i ${x}`, headProj(x));

/** Head i of multi-head attention, as d2l writes it: f pools the head's projections. */
export const headEq = (): Element => math('h i equals f of W i q times q, W i k times k, W i v times v',
  sub('h', 'i'), t('= f('), headProj('q'), t('q,'), headProj('k'), t('k,'), headProj('v'), t('v)'));

/** A symbol or short formula in running text (W_i^(q), which Unicode cannot write), with its text alternative. */
export function inline(label: string, ...children: Child[]): Element {
  const e = m('math', [m('mrow', children)]);
  e.setAttribute('aria-label', label);
  return e;
}
