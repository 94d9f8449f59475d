// The JS side of cpp/kernels/madd.hpp's marker imports in the relaxed-SIMD builds. The post-link
// step (scripts/relax-wasm.mjs) replaces every call with its relaxed instruction and drops the
// import, so these never run; if a build skipped that step, its first kernel call fails here, loudly.
mergeInto(LibraryManager.library, {
  attnlab_madd: function () {
    throw new Error('attnlab: this relaxed-SIMD build was not post-processed by scripts/relax-wasm.mjs');
  },
  attnlab_dot_i8i7: function () {
    throw new Error('attnlab: this relaxed-SIMD build was not post-processed by scripts/relax-wasm.mjs');
  },
});
