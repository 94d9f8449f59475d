// Post-link step of the relaxed-SIMD builds (issue 19): node scripts/relax-wasm.mjs <file.wasm>
// rewrites the module in place so each call to the marker import `attnlab_madd` (declared in
// cpp/kernels/madd.hpp) becomes f32x4.relaxed_madd (fd 85 02), then checks the result.
//
// Why after linking: Debian's clang 14 only emits relaxed SIMD's prototype opcodes, and
// Emscripten 3.1.6's binaryen rejects the final ones, so the compiler sees an opaque call.
// Emscripten minifies import names at -O2, so the marker is found by its type: the only import
// taking three v128 and returning one. The import becomes a function whose body is the
// instruction, binaryen's inliner puts that body at every call site, and the function goes.
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
// and memory.fill, comes with BulkMemory): Features.All would also enable proposals that change
// how imports are encoded, which V8 then rejects.
const F = binaryen.Features;
const features = F.MVP | F.SIMD128 | F.RelaxedSIMD | F.BulkMemory | F.BulkMemoryOpt | F.SignExt |
  F.MutableGlobals | F.NontrappingFPToInt | F.Atomics;

const bytes = readFileSync(file);
const module = binaryen.readBinary(bytes, features);
module.setFeatures(features);

const v128 = binaryen.v128;
const markerParams = binaryen.createType([v128, v128, v128]);
const markers = [];
for (let i = 0; i < module.getNumFunctions(); i++) {
  const info = binaryen.getFunctionInfo(module.getFunctionByIndex(i));
  if (info.module && info.params === markerParams && info.results === v128) markers.push(info);
}
if (markers.length !== 1) fail(`expected one marker import (v128, v128, v128) -> v128, found ${markers.length}`);
const marker = markers[0];

const before = countMadd(module);
module.removeFunction(marker.name);
const body = binaryen._BinaryenSIMDTernary(module.ptr, binaryen.RelaxedMaddVecF32x4,
  module.local.get(0, v128), module.local.get(1, v128), module.local.get(2, v128));
module.addFunction(marker.name, markerParams, v128, [], body);
// The body is 4 nodes: inline it everywhere (binaryen's default limit is 2), clean the call sites'
// temporaries up with the optimizer Emscripten ran at -O2, and drop the now unused function.
binaryen.setOptimizeLevel(2);
binaryen.setShrinkLevel(0);
binaryen.setAlwaysInlineMaxSize(4);
module.runPasses(['inlining-optimizing', 'remove-unused-module-elements']);

// Checks: the module validates with the feature, holds the opcode, and no marker is left.
if (!module.validate()) fail('module does not validate after the rewrite');
for (let i = 0; i < module.getNumFunctions(); i++) {
  const info = binaryen.getFunctionInfo(module.getFunctionByIndex(i));
  if (info.name === marker.name) fail(`function ${marker.name} (the marker) is still there`);
  if (info.module && info.params === markerParams && info.results === v128) fail(`marker import ${info.module}.${info.base} is still there`);
}
const after = countMadd(module);
if (after === 0) fail('no f32x4.relaxed_madd in the result');
const out = module.emitBinary();
module.dispose();
if (!hasOpcode(out, [0xfd, 0x85, 0x02])) fail('the binary has no f32x4.relaxed_madd opcode (fd 85 02)');
writeFileSync(file, out);
console.log(`relax-wasm: ${file}: marker ${marker.module}.${marker.base} -> f32x4.relaxed_madd at ${after - before} sites`);

/** How many f32x4.relaxed_madd the module's text holds. */
function countMadd(m) {
  return (m.emitText().match(/f32x4\.relaxed_madd/g) ?? []).length;
}

function hasOpcode(buf, seq) {
  outer: for (let i = 0; i + seq.length <= buf.length; i++) {
    for (let j = 0; j < seq.length; j++) if (buf[i + j] !== seq[j]) continue outer;
    return true;
  }
  return false;
}
