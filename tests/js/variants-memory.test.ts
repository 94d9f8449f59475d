// 5,000 calls of the variants leave the WebAssembly heap no larger than after the first 100.
import { describe, expect, it } from 'vitest';
import { randn } from './reference.js';
import { useVariants, VARIANTS } from './variants.js';

const libs = useVariants();
const q = randn([2, 2, 40, 8], 1), k = randn([2, 2, 40, 8], 2), v = randn([2, 2, 40, 8], 3);
const x = randn([10, 8], 4);
const mha = { numHeads: 2, inProjWeight: randn([24, 8], 5), outProjWeight: randn([8, 8], 6) };

describe.each(VARIANTS)('%s', (variant) => {
  it('5,000 mixed calls keep the heap flat', () => {
    const lib = libs[variant];
    const call = (i: number) => {
      switch (i % 8) {
        case 0: return lib.attention(q, k, v, { pattern: { type: 'local', window: 3 }, causal: true, returnWeights: true });
        case 1: return lib.attention(q, k, v, { pattern: { type: 'bigbird', blockSize: 4, seed: i }, alibi: true, rope: true });
        case 2: return lib.attentionPattern({ type: 'longformer', window: 2, global: [0, 7] }, 40, 40, { causal: true });
        case 3: return lib.linearAttention(q, k, v, { method: 'favor+', features: 16, seed: i, causal: true });
        case 4: return lib.linearAttention(q, k, v, { method: 'linformer', rank: 8, seed: i });
        case 5: return lib.multiHeadAttention(x, x, x, mha, { rope: true, alibi: true, needWeights: true });
        case 6: return lib.rope(q, { offset: i });
        default:
          try { lib.linearAttention(q, x, v); } catch { /* a failing call must not leak either */ }
          return lib.linearAttention(q, k, v);
      }
    };
    for (let i = 0; i < 100; i++) call(i);
    const after100 = lib.heapStats();
    for (let i = 100; i < 5_000; i++) call(i);
    const after5k = lib.heapStats();
    expect(after5k.used).toBeLessThanOrEqual(after100.used);
    expect(after5k.total).toBeLessThanOrEqual(after100.total);
  });
});
