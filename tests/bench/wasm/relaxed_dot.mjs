// Does relaxed SIMD's int8 dot product help the int8 products (issue 19)? gemm_q8_8 multiplies
// 14-bit activations by int8 weights with i32x4.dot_i16x8_s and an add: 8 products per pair of
// instructions. i32x4.relaxed_dot_i8x16_i7x16_add_s does 16 products and the add in one, but its
// second operand is 7-bit, so 14-bit activations need two of them (high and low halves): 8
// products per instruction. Timed alone, it pays only if the engine runs it at least as fast as
// the pair; it does not (Zen 5: 8.2 against 12.3 G/s in Chromium). In the kernel's loop it pays
// all the same, because it needs no widening of the weights and half the activation loads:
// q8_quads.mjs times the loops, and the relaxed builds use it (kernels::gemm_q8_quad).
// This measures both, each as 8 independent accumulator chains fed from memory,
// built here with binaryen (clang 14 cannot emit the final relaxed opcodes), in Node 20 (with
// --experimental-wasm-relaxed-simd) and in headless Chromium (no flag).
//   node --experimental-wasm-relaxed-simd tests/bench/wasm/relaxed_dot.mjs   # prints a markdown table
import binaryen from 'binaryen';
import { inNodeAndChromium } from './engines.mjs';

function chain(kind, a) {
  return kind === 'i16'
    ? `(local.set $a${a} (i32x4.add (local.get $a${a}) (i32x4.dot_i16x8_s (local.get $x) (local.get $w${a % 2}))))`
    : `(local.set $a${a} (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $w${a % 2}) (local.get $x) (local.get $a${a})))`;
}
function fn(kind) {
  const acc = [...Array(8).keys()];
  const sum = acc.map((a) => `(local.get $a${a})`).reduce((s, x) => `(i32x4.add ${s} ${x})`);
  return `(func (export "${kind}") (param $n i32) (result i32) ${acc.map((a) => `(local $a${a} v128)`).join(' ')}
    (local $x v128) (local $w0 v128) (local $w1 v128) (local $i i32)
    (local.set $w0 (v128.load (i32.const 0))) (local.set $w1 (v128.load (i32.const 16)))
    (loop $l
      (local.set $x (v128.load32_splat (i32.and (local.get $i) (i32.const 1020))))
      ${acc.map((a) => chain(kind, a)).join('\n')}
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
    (i32x4.extract_lane 0 ${sum}))`;
}
const m = binaryen.parseText(`(module (memory (export "mem") 1) ${fn('i16')} ${fn('i8')})`);
m.setFeatures(binaryen.Features.MVP | binaryen.Features.SIMD128 | binaryen.Features.RelaxedSIMD);
if (!m.validate()) throw new Error('relaxed_dot: the module does not validate');
const bytes = [...m.emitBinary()];

// Giga-instructions per second of each kind: median of 5 timed runs after a warm-up, 3 rounds.
async function measure(bytes) {
  const { instance } = await WebAssembly.instantiate(new Uint8Array(bytes));
  const e = instance.exports, n = 2e7, out = { i16: [], i8: [] };
  e.i16(1e6), e.i8(1e6);
  for (let round = 0; round < 3; round++)
    for (const k of ['i16', 'i8']) {
      const ts = [];
      for (let r = 0; r < 5; r++) { const t0 = performance.now(); e[k](n); ts.push(performance.now() - t0); }
      ts.sort((a, b) => a - b);
      out[k].push((8 * n) / ts[2] / 1e6);
    }
  return { i16: Math.max(...out.i16), i8: Math.max(...out.i8) };
}
const { node, chrome, machine } = await inNodeAndChromium(measure, bytes);
console.log(`# relaxed int8 dot against i32x4.dot_i16x8_s + add, ${new Date().toISOString().slice(0, 10)}\n`);
console.log(machine);
console.log('- best of 3 rounds (median of 5 runs each), 8 accumulator chains; products: 8 per dot_i16x8 + add, 16 per relaxed dot, 8 per relaxed dot when 14-bit activations take two\n');
console.log('| engine | dot_i16x8 + add, G/s | its products, G/s | relaxed_dot_i8x16_i7x16_add, G/s | products at 7-bit activations, G/s | products at 14-bit (two per 16), G/s |');
console.log('|---|---|---|---|---|---|');
for (const [name, r] of [['Node ' + process.version + ' (flag)', node], ['Chromium', chrome]])
  console.log(`| ${name} | ${r.i16.toFixed(2)} | ${(8 * r.i16).toFixed(0)} | ${r.i8.toFixed(2)} | ${(16 * r.i8).toFixed(0)} | ${(8 * r.i8).toFixed(0)} |`);
