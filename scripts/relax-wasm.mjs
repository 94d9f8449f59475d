// Post-link step of the relaxed-SIMD builds (issue 19): node scripts/relax-wasm.mjs <file.wasm>
// rewrites the module in place so each call to a marker import declared in cpp/kernels/madd.hpp
// becomes its relaxed instruction, then checks the result:
//   attnlab_madd (v128, v128, v128) -> v128           f32x4.relaxed_madd (fd 85 02), every module
//   attnlab_dot_i8i7 (v128, v128, v128, i32) -> v128  i32x4.relaxed_dot_i8x16_i7x16_add_s (fd 93 02),
//                                                     the modules with the int8 product
//
// Why after linking: Debian's clang 14 only emits relaxed SIMD's prototype opcodes, and
// Emscripten 3.1.6's binaryen rejects the final ones, so the compiler sees an opaque call.
// Emscripten minifies import names at -O2, so a marker is found by its type, which is its own.
// The import becomes a function whose body is the instruction, binaryen's inliner puts that body
// at every call site, and the function goes.
import { readFileSync, writeFileSync } from 'node:fs';
import binaryen from 'binaryen';

const file = process.argv[2];
if (!file) {
  console.error('usage: node scripts/relax-wasm.mjs <file.wasm>');
  process.exit(2);
}
const fail = (msg) => {
  console.error(`relax-wasm: ${file}: ${msg}`);
  process.exit(1);
};

// Exactly the features Emscripten 3.1.6's output uses (atomics only matter to the threaded
// builds, and change nothing in the others; binaryen 132 asserts that BulkMemoryOpt, memory.copy
// and memory.fill, comes with BulkMemory; exception handling is the legacy try / catch that
// -fwasm-exceptions emits, which binaryen writes back as it read it): Features.All would also
// enable proposals that change how imports are encoded, which V8 then rejects.
const F = binaryen.Features;
const features = F.MVP | F.SIMD128 | F.RelaxedSIMD | F.BulkMemory | F.BulkMemoryOpt | F.SignExt |
  F.MutableGlobals | F.NontrappingFPToInt | F.Atomics | F.ExceptionHandling;

const bytes = readFileSync(file);
const module = binaryen.readBinary(bytes, features);
module.setFeatures(features);

const { v128, i32 } = binaryen;
const kinds = [
  { name: 'f32x4.relaxed_madd', op: binaryen.RelaxedMaddVecF32x4, params: [v128, v128, v128], opcode: [0xfd, 0x85, 0x02], required: true },
  { name: 'i32x4.relaxed_dot_i8x16_i7x16_add_s', op: binaryen.RelaxedDotI8x16I7x16AddSToVecI32x4, params: [v128, v128, v128, i32],
    opcode: [0xfd, 0x93, 0x02], required: false },
];
// An op name this binaryen lacks would be undefined, which the C API reads as 0 (v128.bitselect).
for (const k of kinds) if (typeof k.op !== 'number') fail(`this binaryen has no op for ${k.name}`);
const isMarker = (info, k) => info.module && info.params === binaryen.createType(k.params) && info.results === v128;
const found = kinds.map((k) => {
  const markers = [];
  for (let i = 0; i < module.getNumFunctions(); i++) {
    const info = binaryen.getFunctionInfo(module.getFunctionByIndex(i));
    if (isMarker(info, k)) markers.push(info);
  }
  if (markers.length > 1 || (k.required && markers.length === 0)) fail(`expected one marker import for ${k.name}, found ${markers.length}`);
  return markers[0];
});
const before = counts(module);
kinds.forEach((k, i) => {
  const marker = found[i];
  if (!marker) return;
  module.removeFunction(marker.name);
  const body = binaryen._BinaryenSIMDTernary(module.ptr, k.op, module.local.get(0, v128), module.local.get(1, v128), module.local.get(2, v128));
  module.addFunction(marker.name, binaryen.createType(k.params), v128, [], body);
});
// The bodies are 4 nodes: inline them everywhere (binaryen's default limit is 2), clean the call
// sites' temporaries up with the optimizer Emscripten ran at -O2, and drop the now unused functions.
binaryen.setOptimizeLevel(2);
binaryen.setShrinkLevel(0);
binaryen.setAlwaysInlineMaxSize(4);
module.runPasses(['inlining-optimizing', 'remove-unused-module-elements']);

// Checks: the module validates with the feature, holds the opcodes, and no marker is left.
if (!module.validate()) fail('module does not validate after the rewrite');
for (let i = 0; i < module.getNumFunctions(); i++) {
  const info = binaryen.getFunctionInfo(module.getFunctionByIndex(i));
  kinds.forEach((k, j) => {
    if (found[j] && info.name === found[j].name) fail(`function ${info.name} (a marker) is still there`);
    if (isMarker(info, k)) fail(`marker import ${info.module}.${info.base} is still there`);
  });
}
const after = counts(module);
const out = module.emitBinary();
module.dispose();
const report = [];
kinds.forEach((k, i) => {
  if (!found[i]) return;
  if (after[i] === 0) fail(`no ${k.name} in the result`);
  if (!hasOpcode(out, k.opcode)) fail(`the binary has no ${k.name} opcode (${k.opcode.map((b) => b.toString(16)).join(' ')})`);
  report.push(`marker ${found[i].module}.${found[i].base} -> ${k.name} at ${after[i] - before[i]} sites`);
});
writeFileSync(file, out);
console.log(`relax-wasm: ${file}: ${report.join('; ')}`);

/** How many of each kind's instruction the module's text holds (one printing of the module). */
function counts(m) {
  const text = m.emitText();
  return kinds.map((k) => text.split(k.name).length - 1);
}

function hasOpcode(buf, seq) {
  outer: for (let i = 0; i + seq.length <= buf.length; i++) {
    for (let j = 0; j < seq.length; j++) if (buf[i + j] !== seq[j]) continue outer;
    return true;
  }
  return false;
}
