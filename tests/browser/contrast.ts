// WCAG AA text contrast as a page shows it, for the site and widget tests in Chromium
// (site-mobile) and Firefox (tests/firefox): one in-page function, passed to page.evaluate, so it
// is self-contained (no imports, no closures).

/**
 * Text below WCAG AA contrast (4.5:1; 3:1 from 24 px, or 18.66 px bold) against what lies under
 * it, through open shadow roots: the ancestors' backgrounds composited over the page's; for SVG
 * text, also the shape under its centre (a heatmap cell). Hidden, disabled and screen-reader-only
 * text is skipped. Each finding names the element (`host >>> element` inside a shadow root).
 */
export function lowContrastText(): string[] {
  const all: Element[] = [];
  const walk = (root: Document | ShadowRoot) => root.querySelectorAll('*').forEach((e) => { all.push(e); if (e.shadowRoot) walk(e.shadowRoot); });
  walk(document);
  const up = (e: Element): Element | null => e.parentElement ?? (e.parentNode instanceof ShadowRoot ? e.parentNode.host : null);
  const name = (e: Element): string => {
    const root = e.getRootNode();
    const own = e.tagName.toLowerCase() + (e.id ? `#${e.id}` : e.getAttribute('class') ? `.${e.getAttribute('class')!.trim().split(/\s+/).join('.')}` : '');
    return root instanceof ShadowRoot ? `${name(root.host)} >>> ${own}` : own;
  };
  type RGBA = [number, number, number, number];
  const parse = (c: string): RGBA | null => {
    const m = /rgba?\(([^)]+)\)/.exec(c);
    if (!m) return null;
    const v = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
    return [v[0], v[1], v[2], v[3] ?? 1];
  };
  const over = (top: RGBA, under: RGBA): RGBA => [0, 1, 2].map((k) => top[k] * top[3] + under[k] * (1 - top[3])).concat(1) as RGBA;
  const lum = (c: RGBA) => [0, 1, 2].reduce((s, k, i) => {
    const x = c[k] / 255;
    return s + [0.2126, 0.7152, 0.0722][i] * (x <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4);
  }, 0);
  /** The colour behind `e`, its ancestors' backgrounds composited, and their opacity. */
  const behind = (e: Element): { bg: RGBA; opacity: number } => {
    const layers: RGBA[] = [];
    let opacity = 1;
    for (let a: Element | null = e; a; a = up(a)) {
      const cs = getComputedStyle(a);
      opacity *= Number(cs.opacity);
      const c = parse(cs.backgroundColor);
      if (c && c[3] > 0) layers.push(c);
      if (c && c[3] >= 1) break;
    }
    let bg: RGBA = parse(getComputedStyle(document.documentElement).backgroundColor) ?? [255, 255, 255, 1];
    if (bg[3] < 1) bg = [255, 255, 255, 1];
    for (const l of layers.reverse()) bg = over(l, bg);
    return { bg, opacity };
  };
  const low = new Set<string>();
  for (const e of all) {
    const text = [...e.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent!.trim()).join(' ').trim();
    if (!text || !e.checkVisibility({ checkVisibilityCSS: true }) || e.closest(':disabled, option, .visually-hidden, .sr, .skip')) continue;
    if (e instanceof SVGElement && e.tagName !== 'text' && e.tagName !== 'tspan') continue;
    const r = e.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) continue;
    const cs = getComputedStyle(e);
    let { bg, opacity } = behind(e instanceof SVGElement ? e.closest('svg')! : e);
    if (e instanceof SVGElement) {
      const cx = (r.left + r.right) / 2, cy = (r.top + r.bottom) / 2;
      const shape = [...e.closest('svg')!.querySelectorAll('rect, circle, path, polygon')].filter((u) => {
        const q = u.getBoundingClientRect();
        return (u.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING) && getComputedStyle(u).fill !== 'none' && q.left <= cx && q.right >= cx && q.top <= cy && q.bottom >= cy;
      }).pop();
      const fill = shape && parse(getComputedStyle(shape).fill);
      if (fill) bg = over([fill[0], fill[1], fill[2], Number(getComputedStyle(shape!).fillOpacity)], bg);
      opacity *= Number(cs.fillOpacity);
    }
    const c = parse(e instanceof SVGElement ? cs.fill : cs.color);
    if (!c) continue;
    const fg = over([c[0], c[1], c[2], c[3] * opacity], bg);
    const [a, b] = [lum(fg), lum(bg)];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const px = parseFloat(cs.fontSize);
    const need = px >= 24 || (px >= 18.66 && Number(cs.fontWeight) >= 700) ? 3 : 4.5;
    if (ratio < need) low.add(`${name(e)} "${text.slice(0, 24)}" ${ratio.toFixed(2)}:1 (${px} px, needs ${need})`);
  }
  return [...low];
}
