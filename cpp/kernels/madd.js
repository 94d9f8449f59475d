// The JS side of cpp/kernels/madd.hpp's marker import in the relaxed-SIMD builds. The post-link
// step (scripts/relax-wasm.mjs) replaces every call with f32x4.relaxed_madd and drops the import,
// so this never runs; if a build skipped that step, its first kernel call fails here, loudly.
mergeInto(LibraryManager.library, {
  attnlab_madd: function () {
    throw new Error('attnlab: this relaxed-SIMD build was not post-processed by scripts/relax-wasm.mjs');
  },
});
