// base.ts's one redraw queue: a widget draws once per update, whether the redraw comes from the
// queue (a setter's invalidate()) or from renderNow() (tests, exports, an author reading a settled
// view), and never both for the same update.
import { expect, test } from 'vitest';
import { useWidgetPage } from './widget-page';

const { v, stage } = useWidgetPage();

/** Wraps the element's render() to count its calls in window.renders. */
const countRenders = (id: string) => v.page.evaluate((id) => {
  const el = document.getElementById(id) as unknown as { render(w: number): void };
  const w = window as unknown as { renders: number };
  w.renders = 0;
  const proto = Object.getPrototypeOf(el) as { render(w: number): void };
  el.render = function (width: number) {
    w.renders++;
    proto.render.call(this, width);
  };
}, id);
const renders = () => v.page.evaluate(() => (window as unknown as { renders: number }).renders);
/** Three animation frames: past any redraw the queue holds. */
const frames = () => v.page.evaluate(() => new Promise((done) => {
  let n = 3;
  const tick = () => (--n ? requestAnimationFrame(tick) : done(null));
  requestAnimationFrame(tick);
}));

test('renderNow() after a setter draws once: the redraw the setter queued is dropped, and later updates still redraw', async () => {
  await stage('<attn-heatmap id="h" data="[[0.5,0.5],[0.2,0.8]]"></attn-heatmap>');
  await frames();
  await countRenders('h');
  await v.page.evaluate(() => {
    const el = document.getElementById('h') as unknown as { data: number[][]; renderNow(): void };
    el.data = [[0.9, 0.1], [0.3, 0.7]];
    el.renderNow();
  });
  await frames();
  expect(await renders()).toBe(1);
  // The queue still serves the next update.
  await v.page.evaluate(() => { (document.getElementById('h') as unknown as { data: number[][] }).data = [[0.1, 0.9], [0.6, 0.4]]; });
  await frames();
  expect(await renders()).toBe(2);
  // toSVG() draws a queued update at once, and only once.
  await v.page.evaluate(() => {
    const el = document.getElementById('h') as unknown as { data: number[][]; toSVG(): string };
    el.data = [[0.2, 0.8], [0.5, 0.5]];
    el.toSVG();
  });
  await frames();
  expect(await renders()).toBe(3);
  expect(v.problems).toEqual([]);
});
