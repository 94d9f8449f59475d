// The engine's matrix products (cpp/src/nn/gemm.cpp) against float64 references, over sizes that
// leave partial 4-row and 8-column blocks, with and without accumulation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "attnlab/nn/gemm.hpp"
#include "attnlab/thread_pool.hpp"
#include "kernels.hpp"

using namespace attnlab::nn;

namespace {

std::vector<float> randn(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> N(0.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = N(rng);
  return v;
}

// a[i, k] at a[i * si + k * sk]: one reference for the three layouts.
void expect_product(const std::vector<float>& got, const std::vector<float>& c0, const float* a, int64_t si, int64_t sk,
                    const float* b, int64_t sbk, int64_t sbj, int64_t N, int64_t K, int64_t M, bool acc) {
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < M; ++j) {
      double s = acc ? c0[i * M + j] : 0.0;
      for (int64_t k = 0; k < K; ++k) s += static_cast<double>(a[i * si + k * sk]) * b[k * sbk + j * sbj];
      ASSERT_NEAR(got[i * M + j], s, 1e-5 * (1.0 + std::sqrt(static_cast<double>(K)))) << N << "x" << K << "x" << M << " at " << i << "," << j;
    }
}

// The three products of one shape against float64: C = A Bt^T, C (+)= A B, C (+)= A^T B2.
void check_products(int64_t N, int64_t K, int64_t M, bool acc) {
  const auto A = randn(N * K, 1), B = randn(K * M, 2), Bt = randn(M * K, 3), c0 = randn(N * M, 4);
  std::vector<float> c = c0;
  if (!acc) {
    gemm_nt(A.data(), Bt.data(), c.data(), N, M, K);
    expect_product(c, c0, A.data(), K, 1, Bt.data(), 1, K, N, K, M, false);
  }
  c = c0;
  gemm_nn(A.data(), B.data(), c.data(), N, K, M, acc);
  expect_product(c, c0, A.data(), K, 1, B.data(), M, 1, N, K, M, acc);
  const auto B2 = randn(N * M, 5), c1 = randn(K * M, 6);  // C [K, M] = A^T [K, N] B2 [N, M]
  std::vector<float> d = c1;
  gemm_tn(A.data(), B2.data(), d.data(), N, K, M, acc);
  expect_product(d, c1, A.data(), 1, K, B2.data(), M, 1, K, N, M, acc);
}

}  // namespace

TEST(NnGemm, ProductsMatchFloat64OnEveryBlockShape) {
  for (int64_t N : {1, 3, 4, 5, 9})
    for (int64_t K : {0, 1, 7, 16, 33})
      for (int64_t M : {1, 7, 8, 9, 19})
        for (bool acc : {false, true}) check_products(N, K, M, acc);
  // Full 32-column panels under 8 rows and more: AVX-512 builds take two row groups at once there
  // (kernels::gemm_8x32), with a last partial group and a last narrower panel beside them.
  for (int64_t N : {8, 13})
    for (int64_t M : {32, 70})
      for (bool acc : {false, true}) check_products(N, 33, M, acc);
  // Past the 256-row chunks of gemm_nn (K) and gemm_tn (N); the first with rows read in place
  // eight at a time on AVX-512, and the last with them too, over gemm_nn's chunks of K.
  for (bool acc : {false, true}) {
    check_products(300, 5, 17, acc);
    check_products(6, 520, 24, acc);
    check_products(19, 300, 40, acc);
  }
}

// Each output row has the bits it has as a product of its own: whichever row group computes it
// (eight rows read in place, a packed group of four, a tail of one to three), over full and
// partial panels and gemm_nn's chunks of K.
TEST(NnGemm, EachRowHasTheBitsOfItsOwnProduct) {
  for (const int64_t K : {70, 300}) {
    const int64_t N = 21, M = 45;
    const auto A = randn(N * K, 7), Bt = randn(M * K, 8), B = randn(K * M, 9), B2 = randn(N * M, 10);
    std::vector<float> nt(N * M), nn(N * M), tn(K * M), one(std::max(K, M) * M);
    gemm_nt(A.data(), Bt.data(), nt.data(), N, M, K);
    gemm_nn(A.data(), B.data(), nn.data(), N, K, M, false);
    gemm_tn(A.data(), B2.data(), tn.data(), N, K, M, false);
    for (int64_t i = 0; i < N; ++i) {
      gemm_nt(A.data() + i * K, Bt.data(), one.data(), 1, M, K);
      EXPECT_EQ(0, std::memcmp(one.data(), nt.data() + i * M, sizeof(float) * M)) << "gemm_nt row " << i << " K " << K;
      gemm_nn(A.data() + i * K, B.data(), one.data(), 1, K, M, false);
      EXPECT_EQ(0, std::memcmp(one.data(), nn.data() + i * M, sizeof(float) * M)) << "gemm_nn row " << i << " K " << K;
    }
    for (int64_t k = 0; k < K; ++k) {  // row k of A^T B2: column k of A alone
      std::vector<float> col(N);
      for (int64_t n = 0; n < N; ++n) col[n] = A[n * K + k];
      gemm_tn(col.data(), B2.data(), one.data(), N, 1, M, false);
      EXPECT_EQ(0, std::memcmp(one.data(), tn.data() + k * M, sizeof(float) * M)) << "gemm_tn row " << k << " K " << K;
    }
  }
}

// The strided product (attention's per-head backward) reads a block of wider rows in place and
// writes only its block of C: against float64 and, in WebAssembly (no fused multiply-adds), with the
// bits of gemm_nn on the blocks copied out (the same order of sums per element), on partial 4-row
// groups and 8-column blocks.
TEST(NnGemm, StridedProductIsGemmNnOnItsBlocks) {
  for (bool acc : {false, true})
    for (const int64_t N : {1, 5, 12})
      for (const int64_t M : {3, 16, 64}) {
        const int64_t K = 11, lda = K + 6, ldb = M + 9, ldc = M + 5;
        const auto A = randn(N * lda, 11), B = randn(K * ldb, 12), C0 = randn(N * ldc, 13);
        std::vector<float> c = C0;
        gemm_nn_strided(A.data(), lda, B.data(), ldb, c.data(), ldc, N, K, M, acc);
        std::vector<float> a(N * K), b(K * M), want(N * M), c0(N * M), got(N * M);
        for (int64_t i = 0; i < N; ++i) std::copy_n(A.data() + i * lda, K, a.data() + i * K);
        for (int64_t k = 0; k < K; ++k) std::copy_n(B.data() + k * ldb, M, b.data() + k * M);
        for (int64_t i = 0; i < N; ++i) std::copy_n(C0.data() + i * ldc, M, c0.data() + i * M);
        want = c0;
        gemm_nn(a.data(), b.data(), want.data(), N, K, M, acc);
        for (int64_t i = 0; i < N; ++i) {
          std::copy_n(c.data() + i * ldc, M, got.data() + i * M);
          // Past the block's M columns, C's rows are as they were.
          EXPECT_TRUE(std::equal(c.begin() + i * ldc + M, c.begin() + i * ldc + ldc, C0.begin() + i * ldc + M));
        }
#if defined(__wasm__)  // natively GCC fuses some of the multiply-adds and not others, by context
        EXPECT_EQ(0, std::memcmp(got.data(), want.data(), sizeof(float) * N * M)) << N << "x" << M << " acc " << acc;
#endif
        expect_product(got, c0, a.data(), K, 1, b.data(), M, 1, N, K, M, acc);
      }
}

// int8 weights: the product equals the dequantised weights' product up to the activations'
// int16 rounding (<= max|x| / 16382 per element).
// Row counts 1..12 cover each row group the product forms (up to 4 rows per pass).
TEST(NnGemm, Int8ProductMatchesDequantisedWeights) {
  for (const bool quads : {false, true})
  for (int64_t N = 1; N <= 12; ++N) {
  const int64_t K = 37, M = 11, ldw = 48;
  const auto A = randn(N * K, 7);
  std::mt19937 rng(8);
  std::vector<int8_t> W(M * ldw, 0);
  std::vector<float> scale(M);
  for (int64_t m = 0; m < M; ++m) {
    scale[m] = 0.01f * static_cast<float>(1 + m);
    for (int64_t k = 0; k < K; ++k) W[m * ldw + k] = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
  }
  const attnlab::kernels::Q8Layout L{M, ldw, quads};
  std::vector<int8_t> Wt(static_cast<size_t>(L.size()));
  L.pack(W.data(), Wt.data());
  std::vector<float> C(N * M);
  gemm_nt_q8(A.data(), N, K, L, Wt.data(), scale.data(), C.data());
  for (int64_t i = 0; i < N; ++i) {
    double amax = 0;
    for (int64_t k = 0; k < K; ++k) amax = std::max(amax, std::fabs(static_cast<double>(A[i * K + k])));
    for (int64_t m = 0; m < M; ++m) {
      double s = 0, bound = 0;
      for (int64_t k = 0; k < K; ++k) {
        s += static_cast<double>(A[i * K + k]) * W[m * ldw + k] * scale[m];
        bound += std::fabs(W[m * ldw + k] * scale[m]) * amax / 16382.0;
      }
      EXPECT_NEAR(C[i * M + m], s, bound + 1e-5) << N << ": " << i << "," << m << (quads ? " quads" : " pairs");
    }
  }
  }
}

// K past 2048 (GPT-2's c_proj reads 3072): int32 sums taken 1024 k-pairs at a time, added in
// int64: equal to the int64 sum of the whole row (all-extreme values, where int32 would wrap).
TEST(NnGemm, Int8ProductPast2048IsExact) {
  for (const bool quads : {false, true}) {
    const int64_t N = 7, K = 3072, M = 300, ldw = K;
    std::vector<float> A(N * K, 1.0f);
    const attnlab::kernels::Q8Layout L{M, ldw, quads};
    std::vector<int8_t> W(M * ldw, 127), Wt(static_cast<size_t>(L.size()));
    L.pack(W.data(), Wt.data());
    std::vector<float> scale(M, 1.0f), C(N * M);
    gemm_nt_q8(A.data(), N, K, L, Wt.data(), scale.data(), C.data());
    // x quantised to 8191 (scale 1/8191): each output is 8191 * 127 * 3072 / 8191 = 390144.
    for (float c : C) EXPECT_FLOAT_EQ(c, static_cast<float>(8191.0 * 127 * 3072) * (1.0f / 8191.0f)) << quads;
  }
}

// The bias and ReLU the product applies as it scales (scale_q8_8; past 2048 k's, its scalar twin
// over int64 sums) are a pass of their own over the product without them, in both layouts, on
// rows some of whose outputs the ReLU zeroes: to the last bit in WebAssembly, within a rounding
// natively, where GCC may fuse the scaling's multiply with the bias's add.
TEST(NnGemm, Int8ProductBiasAndReluAreAPassAfterIt) {
  for (const bool quads : {false, true})
    for (const int64_t K : {200, 3000}) {
      const int64_t N = 5, M = 21;
      const attnlab::kernels::Q8Layout L{M, K, quads};
      std::vector<int8_t> W(M * K), Wt(static_cast<size_t>(L.size()));
      std::mt19937 rng(static_cast<unsigned>(K));
      for (auto& w : W) w = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
      L.pack(W.data(), Wt.data());
      const auto A = randn(N * K, 11), bias = randn(M, 12);
      std::vector<float> scale(M, 0.01f), plain(N * M), fused(N * M);
      gemm_nt_q8(A.data(), N, K, L, Wt.data(), scale.data(), plain.data());
      gemm_nt_q8(A.data(), N, K, L, Wt.data(), scale.data(), fused.data(), nullptr, nullptr, bias.data(), true);
      int zeroed = 0;
      for (int64_t i = 0; i < N * M; ++i) {
        const float v = plain[i] + bias[i % M], want = v > 0.0f ? v : 0.0f;
#if defined(__wasm__)
        EXPECT_EQ(fused[i], want) << K << " deep, output " << i << (quads ? ", quads" : "");
#else
        EXPECT_NEAR(fused[i], want, 1e-6f * (std::fabs(plain[i]) + std::fabs(bias[i % M]))) << K << " deep, output " << i;
#endif
        zeroed += v <= 0.0f;
      }
      EXPECT_GT(zeroed, 0) << K;
      EXPECT_LT(zeroed, N * M) << K;
    }
}

// Inputs with many zeros (a ReLU's): ~80% zeros a row, mostly the same k's in every row (a beam's
// rows); row 3 all zeros; rows 9.. dense, so their pass keeps every pair. `relu`: no negative
// entries, as a ReLU leaves them (the quads layout skips only such rows).
std::vector<float> sparse_rows(int64_t N, int64_t K, bool relu, uint32_t seed) {
  std::mt19937 rng(seed);
  auto A = randn(N * K, seed + 1);
  for (int64_t i = 0; i < N; ++i)
    for (int64_t kk = 0; kk < K; ++kk)
      if (i < 9 && (i == 3 || (kk * 7919) % 100 < 75 || rng() % 100 < 5)) A[i * K + kk] = 0.0f;
      else if (relu) A[i * K + kk] = std::fabs(A[i * K + kk]);
  return A;
}

std::vector<int8_t> random_q8(int64_t M, int64_t K, int64_t ldw, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int8_t> W(M * ldw, 0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t kk = 0; kk < K; ++kk) W[m * ldw + kk] = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
  return W;
}

// Where the product skips the k-pairs (or quads) that are zero in every row of a pass: bit for
// bit the exact integer product of the quantised rows, scaled as kernels::scale_q8_8 does, for
// row counts that make passes of 1-5 rows, rows that are all zeros, groups too dense to skip
// beside sparse ones.
TEST(NnGemm, Int8ProductOfSparseRowsIsExact) {
  namespace k = attnlab::kernels;
  for (const bool quads : {false, true})
    for (const bool relu : {false, true})
      for (const int64_t K : {256, 1000})
        for (const int64_t N : {1, 2, 5, 9, 12}) {
          const int64_t M = 43, ldw = (K + 15) / 16 * 16;
          const auto A = sparse_rows(N, K, relu, static_cast<uint32_t>(N * K + quads));
          const auto W = random_q8(M, K, ldw, static_cast<uint32_t>(N + K));
          std::vector<float> scale(M);
          for (int64_t m = 0; m < M; ++m) scale[m] = 0.001f * static_cast<float>(m + 1);
          const k::Q8Layout L{M, ldw, quads};
          std::vector<int8_t> Wt(static_cast<size_t>(L.size()));
          L.pack(W.data(), Wt.data());
          std::vector<float> C(N * M);
          gemm_nt_q8(A.data(), N, K, L, Wt.data(), scale.data(), C.data());
          std::vector<int16_t> xq(ldw);
          for (int64_t i = 0; i < N; ++i) {
            const float sx = k::scalar::quantize_i16(A.data() + i * K, K, ldw, xq.data());
            for (int64_t m = 0; m < M; ++m) {
              int64_t acc = 0;
              for (int64_t kk = 0; kk < K; ++kk) acc += int64_t{xq[kk]} * W[m * ldw + kk];
              EXPECT_EQ(C[i * M + m], static_cast<float>(acc) * (sx * scale[m]))
                  << N << " rows, K " << K << (quads ? " quads " : " pairs ") << (relu ? "relu " : "") << i << "," << m;
            }
          }
        }
}

// Rows all zeros leave a pass no k-pair (or k-quad) at all: zero sums, so the bias alone.
TEST(NnGemm, Int8ProductOfZeroRowsIsTheBias) {
  for (const bool quads : {false, true}) {
    const int64_t N = 5, K = 256, M = 24;
    const std::vector<float> A(N * K, 0.0f), scale(M, 0.5f);
    std::vector<float> bias(M);
    for (int64_t m = 0; m < M; ++m) bias[m] = 0.25f * static_cast<float>(m) - 2.0f;
    const auto W = random_q8(M, K, K, 4);
    const attnlab::kernels::Q8Layout L{M, K, quads};
    std::vector<int8_t> Wt(static_cast<size_t>(L.size()));
    L.pack(W.data(), Wt.data());
    std::vector<float> C(N * M, 99.0f);
    gemm_nt_q8(A.data(), N, K, L, Wt.data(), scale.data(), C.data(), nullptr, nullptr, bias.data());
    for (int64_t i = 0; i < N; ++i)
      for (int64_t m = 0; m < M; ++m) EXPECT_EQ(C[i * M + m], bias[m]) << quads << " " << i << "," << m;
  }
}

// Rows equal to an earlier row (a beam's hypotheses that end in the same token, at a decoder's
// first layer) get a copy of its outputs. 9 rows: 0 1 0 2 1 0 3 2 2 of 4 (row 3 of sparse_rows
// is all zeros).
std::vector<float> repeated_rows(bool sparse, int64_t K) {
  const auto R = sparse ? sparse_rows(4, K, true, 21) : randn(4 * K, 21);
  const int64_t pick[9] = {0, 1, 0, 2, 1, 0, 3, 2, 2};
  std::vector<float> A(9 * K);
  for (int64_t i = 0; i < 9; ++i) std::copy_n(R.data() + pick[i] * K, K, A.data() + i * K);
  return A;
}

// M x K random int8 weights packed in one layout, scales 0.01, and their product with N rows.
struct PackedQ8 {
  PackedQ8(int64_t M, int64_t K, bool quads, uint32_t seed) : L{M, K, quads}, Wt(static_cast<size_t>(L.size())), scale(M, 0.01f) {
    L.pack(random_q8(M, K, K, seed).data(), Wt.data());
  }
  std::vector<float> times(const float* A, int64_t N, attnlab::ThreadPool* pool = nullptr, const float* bias = nullptr) const {
    std::vector<float> C(N * L.M, 99.0f);
    gemm_nt_q8(A, N, L.ldw, L, Wt.data(), scale.data(), C.data(), pool, nullptr, bias, bias != nullptr);
    return C;
  }
  attnlab::kernels::Q8Layout L;
  std::vector<int8_t> Wt;
  std::vector<float> scale;
};

// Each row's outputs are the bits of that row alone, in both layouts, with bias and ReLU, dense
// and sparse rows; on a pool too (the distinct rows are found before the tasks run).
TEST(NnGemm, Int8ProductOfRepeatedRowsIsEachRowAlone) {
  for (const bool quads : {false, true})
    for (const bool sparse : {false, true}) {
      const int64_t K = 256, M = 45, N = 9;
      const auto A = repeated_rows(sparse, K), bias = randn(M, 23);
      const PackedQ8 w(M, K, quads, 22);
      const auto C = w.times(A.data(), N, nullptr, bias.data());
      for (int64_t i = 0; i < N; ++i) {
        const auto one = w.times(A.data() + i * K, 1, nullptr, bias.data());
        for (int64_t m = 0; m < M; ++m)
          EXPECT_EQ(C[i * M + m], one[m]) << (quads ? "quads " : "pairs ") << (sparse ? "sparse " : "") << i << "," << m;
      }
    }
}

TEST(NnGemm, Int8ProductOfRepeatedRowsThreadCountInvariance) {
  attnlab::ThreadPool pool(3);
  for (const bool quads : {false, true})
    for (const bool sparse : {false, true}) {
      const auto A = repeated_rows(sparse, 256);
      const PackedQ8 w(300, 256, quads, 24);
      EXPECT_EQ(w.times(A.data(), 9), w.times(A.data(), 9, &pool)) << quads << sparse;
    }
}

// The same on a pool: the lists are made before the tasks run, so the same bits as one thread.
TEST(NnGemm, Int8ProductOfSparseRowsThreadCountInvariance) {
  attnlab::ThreadPool pool(3);
  for (const bool quads : {false, true}) {
    const int64_t N = 12, K = 1024, M = 300;
    const auto A = sparse_rows(N, K, true, 9);
    const auto W = random_q8(M, K, K, 10);
    const attnlab::kernels::Q8Layout L{M, K, quads};
    std::vector<int8_t> Wt(static_cast<size_t>(L.size()));
    L.pack(W.data(), Wt.data());
    std::vector<float> scale(M, 0.01f), C(N * M), D(N * M);
    gemm_nt_q8(A.data(), N, K, L, Wt.data(), scale.data(), C.data());
    gemm_nt_q8(A.data(), N, K, L, Wt.data(), scale.data(), D.data(), &pool);
    EXPECT_EQ(C, D) << quads;
  }
}

// Tasks of 256 outputs on a pool: the same bits as one thread.
TEST(NnGemm, Int8ProductThreadCountInvariance) {
  const int64_t N = 7, K = 3072, M = 300, ldw = K;
  const attnlab::kernels::Q8Layout L{M, ldw, false};
  std::vector<int8_t> W(M * ldw), Wt(static_cast<size_t>(L.size()));
  std::mt19937 rng(3);
  for (auto& w : W) w = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
  L.pack(W.data(), Wt.data());
  std::vector<float> scale(M, 0.01f), C(N * M), D(N * M);
  const auto B = randn(N * K, 11);
  attnlab::ThreadPool pool(3);
  gemm_nt_q8(B.data(), N, K, L, Wt.data(), scale.data(), C.data());
  gemm_nt_q8(B.data(), N, K, L, Wt.data(), scale.data(), D.data(), &pool);
  EXPECT_EQ(C, D);
}

// Passes of 5 rows where the engine keeps them in registers (set_q8_row_groups; loader.ts times
// it): integer sums, so the same bits as passes of at most 4, for row counts that group either way
// (5: one pass or 2 + 3; 9: 4 + 5 or 3 + 3 + 3), past 2048 deep too.
TEST(NnGemm, Int8ProductFiveRowPassesKeepEveryBit) {
  for (const int64_t K : {200, 3000})
    for (const int64_t N : {1, 5, 9, 10, 13}) {
      const int64_t M = 37, ldw = K;
      const attnlab::kernels::Q8Layout L{M, ldw, false}, Lq{M, ldw, true};
      std::vector<int8_t> W(M * ldw), Wt(static_cast<size_t>(L.size())), Wq(static_cast<size_t>(Lq.size()));
      std::mt19937 rng(static_cast<unsigned>(N * K));
      for (auto& w : W) w = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
      L.pack(W.data(), Wt.data());
      Lq.pack(W.data(), Wq.data());
      std::vector<float> scale(M, 0.01f), C(N * M), D(N * M), E(N * M);
      const auto B = randn(N * K, 5);
      EXPECT_EQ(set_q8_row_groups(4), 4);
      gemm_nt_q8(B.data(), N, K, L, Wt.data(), scale.data(), C.data());
      EXPECT_EQ(set_q8_row_groups(5), 5);
      gemm_nt_q8(B.data(), N, K, L, Wt.data(), scale.data(), D.data());
      set_q8_row_groups(4);
      EXPECT_EQ(C, D) << N << " rows, " << K << " deep";
      // The quads layout (relaxed SIMD's byte dot product, passes of up to 3 rows): the same bits.
      gemm_nt_q8(B.data(), N, K, Lq, Wq.data(), scale.data(), E.data());
      EXPECT_EQ(C, E) << N << " rows, " << K << " deep, quads";
    }
  EXPECT_EQ(set_q8_row_groups(6), 4);  // 4 or 5 only
  EXPECT_EQ(q8_row_groups(), 4);
  EXPECT_TRUE(std::isfinite(q8_row_groups_probe(5, 2)));
  EXPECT_EQ(q8_row_groups(), 4);  // the probe leaves the setting alone
  // New weights take quads only where the engine's relaxed dot product passed its check.
  const bool supported = attnlab::kernels::q8_quads_supported();
  EXPECT_EQ(set_q8_quads(false), false);
  EXPECT_EQ(set_q8_quads(true), supported);
  EXPECT_EQ(q8_quads(), supported);
}
