// Keys in the states a widget is least often in: before it has drawn what it answers from (before
// the first frame: added, focused and pressed in one task, or under load; or right after a setter
// queued a redraw), and with nothing picked yet. Each test does all of it in one page.evaluate, so
// no frame can come in between. The heatmap's first-frame case is in widgets.browser.test.ts.
import { expect, test } from 'vitest';
import { useWidgetPage } from './widget-page';

const { v } = useWidgetPage();

test('regression: a key works in the plot of the points as they are, not the placeholder before the first frame or the plot before points were set', async () => {
  const got = await v.page.evaluate(() => {
    type Regression = HTMLElement & { points: unknown; renderNow(): void };
    const stage = document.getElementById('stage')!;
    const press = (el: Regression, ...keys: string[]) => {
      const plot = el.shadowRoot!.querySelector<HTMLElement>('.plot')!;
      plot.focus();
      for (const key of keys) plot.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true }));
      return (el.points as { x: number; y: number }[]).map((p) => [+p.x.toFixed(3), +p.y.toFixed(3)]);
    };
    // Not drawn yet: x from 0 to 5 and y from -1 to 7 once drawn (the truth curve's range).
    const early = document.createElement('attn-regression') as Regression;
    early.points = [[1, 3], [4, 5]];
    stage.append(early);
    // Point 1 up one step (an 8 / 40 of the y range), then a point added mid-plot, at the truth curve.
    const first = press(early, 'PageDown', 'ArrowUp', 'a');
    // Drawn for the default points (x to 5), then points to x = 9: 'a' adds at the new middle.
    const late = document.createElement('attn-regression') as Regression;
    stage.append(late);
    late.renderNow();
    late.points = [[1, 3], [9, 4]];
    const after = press(late, 'a');
    return { first, added: after[2] };
  });
  expect(got).toEqual({ first: [[1, 3.2], [4, 5], [2.5, 3.697]], added: [4.5, 2.545] });
  expect(v.problems).toEqual([]);
});

test('head view: a key right after the data shrank moves from no token, as the view drawn for that data has', async () => {
  const got = await v.page.evaluate(() => {
    type HeadView = HTMLElement & { data: number[][][]; tokens: string[]; renderNow(): void };
    const el = document.createElement('attn-head-view') as HeadView;
    const uniform = (n: number) => [Array.from({ length: n }, () => Array<number>(n).fill(1 / n))];
    el.data = uniform(5);
    el.tokens = ['a', 'b', 'c', 'd', 'e'];
    document.getElementById('stage')!.append(el);
    const root = el.shadowRoot!, plot = root.querySelector<HTMLElement>('.plot')!;
    const press = (key: string) => plot.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true }));
    plot.focus();
    press('End');  // query 'e', the fifth
    el.renderNow();
    el.data = uniform(3);
    el.tokens = ['x', 'y', 'z'];
    press('ArrowDown');
    el.renderNow();
    return [root.querySelector('.plot + .readout')!.textContent, root.querySelector('.sr[aria-live]')!.textContent];
  });
  const first = 'query “x” — strongest key per head: head 1: x (0.33)';
  expect(got).toEqual([first, first]);
  expect(v.problems).toEqual([]);
});

test('model view: Enter on the enlarged head\'s thumbnail closes it, also when select() opened it since the grid was drawn', async () => {
  const got = await v.page.evaluate(() => {
    type ModelView = HTMLElement & { data: number[][][][]; selected: unknown; select(s: unknown): void; renderNow(): void };
    const el = document.createElement('attn-model-view') as ModelView;
    el.data = [[[[1, 0], [0, 1]], [[0, 1], [1, 0]]]];
    document.getElementById('stage')!.append(el);
    el.renderNow();
    const thumb = el.shadowRoot!.querySelector<SVGGElement>('g[data-layer="0"][data-head="1"]')!;
    thumb.focus();
    el.select({ layer: 0, head: 1 });
    thumb.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));
    return [el.selected, el.shadowRoot!.querySelector('.sr[aria-live]')!.textContent];
  });
  expect(got).toEqual([null, 'Layer 1, head 2 closed']);
  expect(v.problems).toEqual([]);
});

test('beam tree, head view, regression: backwards with nothing picked goes to the last item, forwards to the first', async () => {
  const got = await v.page.evaluate(() => {
    type Widget = HTMLElement & { renderNow(): void };
    const stage = document.getElementById('stage')!;
    // Each widget fresh, focused, the keys, drawn: its readout (the regression's needs the library,
    // so its test moves the point picked up a step and says which one moved).
    const after = (tag: string, set: (el: Widget & Record<string, unknown>) => void, ...keys: string[]) => {
      const el = document.createElement(tag) as Widget & Record<string, unknown>;
      set(el);
      stage.append(el);
      el.renderNow();
      const before = JSON.stringify(el.points);
      const plot = el.shadowRoot!.querySelector<HTMLElement>('.plot')!;
      plot.focus();
      for (const key of keys) plot.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true }));
      el.renderNow();
      const text = tag === 'attn-regression'
        ? `moved ${(el.points as { y: number }[]).findIndex((p, i) => p.y !== JSON.parse(before)[i].y)}`
        : el.shadowRoot!.querySelector('.plot + .readout')!.textContent;
      el.remove();
      return text;
    };
    const beams = (el: Record<string, unknown>) => {
      el.data = [{ tokens: ['a', 'b'], score: -1 }, { tokens: ['a', 'c'], score: -2 }, { tokens: ['d'], score: -3 }];
    };
    const heads = (el: Record<string, unknown>) => {
      el.data = [Array.from({ length: 3 }, () => [1 / 3, 1 / 3, 1 / 3])];
      el.tokens = ['x', 'y', 'z'];
    };
    const points = (el: Record<string, unknown>) => {
      el.points = [[1, 3], [2, 4], [4, 5]];
    };
    return [
      after('attn-beam-tree', beams, 'ArrowUp'), after('attn-beam-tree', beams, 'ArrowDown'),
      after('attn-head-view', heads, 'ArrowUp'), after('attn-head-view', heads, 'ArrowDown'),
      after('attn-regression', points, 'PageUp', 'ArrowUp'), after('attn-regression', points, 'PageDown', 'ArrowUp'),
    ].map((t) => t!.split(/[:—]/)[0].trim());
  });
  expect(got).toEqual(['hypothesis 3', 'hypothesis 1', 'query “z”', 'query “x”', 'moved 2', 'moved 0']);
  expect(v.problems).toEqual([]);
});
