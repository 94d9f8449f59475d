// load()'s choice between register blocks of 4 rows and wider ones (loader.ts, tuneRowGroups): the
// timing rule on probes whose speed is known, since which size a real engine runs faster is the
// engine's affair (Chromium 156 keeps 6 fp32 rows in registers, Node 20's V8 spills them). The wide
// form is kept when at least 2% faster: per row where the probe's work grows with its rows, per
// call where it does not. V8 takes both wide forms untimed (isV8): timing the int8 pass there
// caught baseline-tier code, and a page that is not cross-origin isolated has no clock to time
// with, where Chromium's relaxed attention had kept 4 rows.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { faster, isV8, wideRows } from '../../dist/loader.js';

// A probe that takes `ms(rows)` ms a call on a clock of the test's own (performance.now(), which
// faster() reads): the figures are exact, whatever else the machine is doing.
let clock = 0;
beforeEach(() => {
  clock = 0;
  vi.spyOn(performance, 'now').mockImplementation(() => clock);
});
afterEach(() => {
  vi.restoreAllMocks();
});
function probe(ms: (rows: number) => number, calls: number[] = []) {
  return (rows: number) => {
    calls.push(rows);
    clock += ms(rows);
  };
}

describe('row groups: load() keeps the wide form only where it is faster', () => {
  it('per row: 6 rows at 0.8x the time per row is kept, at 2x (a spilling engine) or the same time is not', () => {
    expect(faster(probe((r) => r * (r === 6 ? 0.04 : 0.05)), 6, true)).toBe(true);
    expect(faster(probe((r) => r * (r === 6 ? 0.1 : 0.05)), 6, true)).toBe(false);
    expect(faster(probe((r) => r * 0.05), 6, true)).toBe(false);
  });

  it('per call: the same work in one 5-row pass at 0.85x the time is kept, at 1.5x is not', () => {
    expect(faster(probe((r) => (r === 5 ? 0.17 : 0.2)), 5, false)).toBe(true);
    expect(faster(probe((r) => (r === 5 ? 0.3 : 0.2)), 5, false)).toBe(false);
  });

  it('times both forms in turns, at least 8 and at most 24', () => {
    const calls: number[] = [];
    faster(probe(() => 0.05, calls), 6, true);
    expect(calls.length % 2).toBe(0);
    expect(calls.length / 2).toBeGreaterThanOrEqual(8);
    expect(calls.length / 2).toBeLessThanOrEqual(24);
    expect(calls.filter((r, i) => r !== (i % 2 ? 6 : 4))).toEqual([]);
  });
});

describe('row groups: V8 takes the wide forms untimed, other engines only where timing says so', () => {
  const never = () => { throw new Error('timed'); };
  it('V8: wide, without timing, isolated page or not', () => {
    expect(wideRows(true, false, never)).toBe(true);
    expect(wideRows(true, true, never)).toBe(true);
  });

  it('elsewhere: what timing says on a fine clock, and 4 rows without one', () => {
    expect(wideRows(false, true, () => true)).toBe(true);
    expect(wideRows(false, true, () => false)).toBe(false);
    expect(wideRows(false, false, never)).toBe(false);
  });
});

describe('row groups: which engines count as V8', () => {
  it('V8: Node, and Chromium-based pages and workers', () => {
    expect(isV8()).toBe(true);  // this Node
    expect(isV8({ process: { versions: { node: '20.20.2', v8: '11.3.244.8-node.33' } } })).toBe(true);
    const brands = [{ brand: 'Not:A-Brand' }, { brand: 'Chromium' }];
    expect(isV8({ navigator: { userAgentData: { brands } } })).toBe(true);
  });

  it('not V8: Bun (Node versions, JavaScriptCore), other browsers, pages without userAgentData', () => {
    expect(isV8({ process: { versions: { node: '22.6.0', v8: '12.4.254.14-node.12', bun: '1.1.30' } } })).toBe(false);
    expect(isV8({ navigator: { userAgentData: { brands: [{ brand: 'Not A Brand' }] } } })).toBe(false);
    expect(isV8({ navigator: {} })).toBe(false);
    expect(isV8({})).toBe(false);
  });
});
