// The int8 product's kernel in WebAssembly SIMD128 by row count: kernels::gemm_q8_8<R> over
// tiles of 8 weight rows (the engine's layout) against the k-contiguous dot product with a
// horizontal sum that fb378e2 used (dot_i16_i8, below), on the translators' and GPT-2's shapes.
// Median of 41 passes over every tile; every output feeds a checksum (summing only a couple let
// clang drop the other rows' work, which had made both look 3-4x faster).
//   bash tests/bench/wasm/q8_rows.sh      # builds with em++ and runs in Node (results/q8-rows-*.txt)
#include <wasm_simd128.h>
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
#include "kernels.hpp"
namespace k = attnlab::kernels;
template <int R>
inline void dot_i16_i8(const int16_t* x, int64_t ldx, const int8_t* w, int64_t np, int32_t* out) noexcept {
  v128_t acc[R];
  for (int r = 0; r < R; ++r) acc[r] = wasm_i32x4_splat(0);
  for (int64_t i = 0; i < np; i += 16) {
    const v128_t wv = wasm_v128_load(w + i);
    const v128_t lo = wasm_i16x8_extend_low_i8x16(wv), hi = wasm_i16x8_extend_high_i8x16(wv);
    for (int r = 0; r < R; ++r) {
      const int16_t* xr = x + r * ldx + i;
      acc[r] = wasm_i32x4_add(acc[r], wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_v128_load(xr), lo),
                                                     wasm_i32x4_dot_i16x8(wasm_v128_load(xr + 8), hi)));
    }
  }
  for (int r = 0; r < R; ++r)
    out[r] = (wasm_i32x4_extract_lane(acc[r], 0) + wasm_i32x4_extract_lane(acc[r], 1)) +
             (wasm_i32x4_extract_lane(acc[r], 2) + wasm_i32x4_extract_lane(acc[r], 3));
}
template <int R> double run_tile(const int16_t* x, int64_t K, const int8_t* tiles, int64_t M, int32_t* y) {
  int32_t acc[R * 8];
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t t = 0; t < M / 8; ++t) { k::gemm_q8_8<R>(x, K, tiles + t * K * 8, K / 2, acc); int32_t s = 0; for (int i = 0; i < R * 8; ++i) s += acc[i] * (i + 1); y[t] = s; }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
template <int R> double run_dot(const int16_t* x, int64_t K, const int8_t* w, int64_t M, int32_t* y) {
  int32_t acc[R];
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t m = 0; m < M; ++m) { dot_i16_i8<R>(x, K, w + m * K, K, acc); int32_t s = 0; for (int i = 0; i < R; ++i) s += acc[i] * (i + 1); y[m] = s; }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
template <int R> void shape(int64_t K, int64_t M) {
  std::vector<int16_t> x(R * K); std::vector<int8_t> w(M * K), tiles(M * K); std::vector<int32_t> y(M);
  for (size_t i = 0; i < x.size(); ++i) x[i] = int16_t(i * 37 % 16000 - 8000);
  for (size_t i = 0; i < w.size(); ++i) w[i] = int8_t(i * 13 % 255 - 127);
  k::Q8Layout{M, K, false}.pack(w.data(), tiles.data());
  std::vector<double> a, b;
  for (int rep = 0; rep < 41; ++rep) { a.push_back(run_tile<R>(x.data(), K, tiles.data(), M, y.data())); b.push_back(run_dot<R>(x.data(), K, w.data(), M, y.data())); }
  std::sort(a.begin(), a.end()); std::sort(b.begin(), b.end());
  double macs = double(R) * K * M;
  printf("R=%d K=%4lld M=%4lld  tile %.1f GMAC/s  dot %.1f GMAC/s  dot/tile %.2fx\n", R, (long long)K, (long long)M, macs / a[20] * 1e-9, macs / b[20] * 1e-9, a[20] / b[20]);
}
int main() {
  for (auto [K, M] : {std::pair<int64_t,int64_t>{192, 2904}, {384, 576}, {192, 576}, {256, 1024}, {1024, 256}, {768, 2304}}) {
    shape<1>(K, M); shape<2>(K, M); shape<3>(K, M); shape<4>(K, M); shape<5>(K, M);
  }
}
