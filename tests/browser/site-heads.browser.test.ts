// The built site's heads page as a learner meets it with the trained Transformer: the target side is
// the model's own translation of the source, so the page's (disabled) Target box must say that
// translation, not the sentence it held before, and the link (URL hash) must carry it.
import { expect, test } from 'vitest';
import { pageProblems } from './helpers';
import { useSite } from './site-server';

const site = useSite('site-heads');

test('heads, trained model: the Target box shows the model\'s translation of each source it runs, as the decoder side does', async () => {
  const ctx = await site.browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: 'block' });
  try {
    const page = await ctx.newPage();
    const problems = pageProblems(page);
    await page.goto(`${site.isolated.url}heads.html#kind=decoder`);
    await page.waitForFunction(() => document.getElementById('load-status')?.dataset.state === 'ready', undefined, { timeout: 90_000 });
    // The decoder's tokens (subword pieces ending in </s>: '... the chair . </s>') and the Target
    // box ('The dog is sitting on the chair.'), compared as their lower-case letters without spaces.
    const words = (s: string) => s.toLowerCase().replace(/<\/s>|\s/g, '');
    const state = () => page.evaluate(() => ({
      box: (document.getElementById('tgt') as HTMLInputElement).value,
      disabled: (document.getElementById('tgt') as HTMLInputElement).disabled,
      decoder: (document.querySelector('attn-head-view') as unknown as { leftTokens: string[] }).leftTokens.join(' '),
      keys: (document.querySelector('attn-head-view') as unknown as { rightTokens: string[] }).rightTokens.join(' '),
      hash: new URLSearchParams(location.hash.slice(1)).get('tgt'),
    }));
    const first = await state();
    expect(first.disabled).toBe(true);
    expect(words(first.box)).toEqual(words(first.decoder));
    // The page's first sentence is one the shipped model gets right (view-state.ts).
    expect(words(first.box)).toBe('thedogissittingonthechair.');
    // A row is the step that writes a piece; its keys are the pieces the decoder read, '<bos>' and
    // then each one written before, so no step sees the piece it writes (keyed by the written
    // pieces, the causal diagonal read as 'dog' looking at 'dog').
    expect(first.keys).toBe(`<bos> ${first.decoder.split(' ').slice(0, -1).join(' ')}`);
    await page.fill('#src', 'je suis fatigué .');
    await page.click('#sentences button[type="submit"]');
    // The shipped model writes "i'm tired . </s>".
    await page.waitForFunction(() => (document.querySelector('attn-head-view') as unknown as { leftTokens: string[] }).leftTokens.includes('tired'));
    // The hash is written 60 ms after a change (site/state.ts).
    await page.waitForFunction(() => new URLSearchParams(location.hash.slice(1)).get('tgt') === (document.getElementById('tgt') as HTMLInputElement).value);
    const second = await state();
    expect(words(second.box)).toEqual(words(second.decoder));
    expect(second.keys).toBe(`<bos> ${second.decoder.split(' ').slice(0, -1).join(' ')}`);
    expect(problems).toEqual([]);
  } finally {
    await ctx.close();
  }
});
