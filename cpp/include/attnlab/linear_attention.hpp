// Attention in time linear in the sequence length.
//
// Kernelised attention (Katharopoulos et al.) replaces exp(q . k) by phi(q) . phi(k), so
//   out_i = sum_j phi(q_i).phi(k_j) v_j / sum_j phi(q_i).phi(k_j)
//         = phi(q_i) . S / phi(q_i) . z,   S = sum_j phi(k_j) v_j^T [m, Dv],  z = sum_j phi(k_j) [m]
// and S, z are built once (or as running sums over j <= i when causal): O(S m Dv), no S x S matrix.
// Linformer (Wang et al.) instead projects keys and values to `rank` rows along the sequence.
//
// Shapes: q [batch, Sq, D], k [batch, Sk, D], v [batch, Sk, Dv] -> out [batch, Sq, Dv]. Causal
// means key j is visible to query i when j <= i (top-left aligned, as causal attention).
#pragma once
#include <cstdint>
#include <string>

#include "attnlab/thread_pool.hpp"

namespace attnlab {

// phi(x) = elu(x) + 1, m = D. Here and in FAVOR+, finite inputs whose normaliser phi(q).z or
// output pass float32's range throw an Error naming q, k (and v) and the query.
void linear_attention_elu(const float* q, const float* k, const float* v, int64_t batch,
                          int64_t Sq, int64_t Sk, int64_t D, int64_t Dv, bool causal, float* out,
                          ThreadPool* pool);

// Performer's positive orthogonal random features W [m, D] (Choromanski et al.): blocks of D
// orthonormal rows (Gram-Schmidt on Gaussian rows), each row then scaled to the length of an
// independent Gaussian vector, so rows are marginally Gaussian but orthogonal within a block.
void favor_features(int64_t m, int64_t D, uint64_t seed, float* W);

// FAVOR+: phi(x) = exp(W x' - |x'|^2 / 2) / sqrt(m) with x' = x / D^(1/4), whose products
// estimate exp(q . k / sqrt(D)) without bias: the output approaches softmax attention (scaled
// dot product) as m grows. W [m, D] from favor_features.
void favor_attention(const float* q, const float* k, const float* v, int64_t batch, int64_t Sq,
                     int64_t Sk, int64_t D, int64_t Dv, const float* W, int64_t m, bool causal,
                     float* out, ThreadPool* pool);

// Linformer's projections E, F [rank, Sk] with entries drawn from N(0, 1/rank).
void linformer_projections(int64_t rank, int64_t Sk, uint64_t seed, float* E, float* F);

// Linformer: softmax(q (E k)^T / sqrt(D)) (F v), the same E, F [rank, Sk] for every batch slice.
void linformer_attention(const float* q, const float* k, const float* v, int64_t batch,
                         int64_t Sq, int64_t Sk, int64_t D, int64_t Dv, const float* E,
                         const float* F, int64_t rank, float* out, ThreadPool* pool);

// One of the three by name, its random draws (FAVOR+'s features, Linformer's E and F when not
// given) made here from `seed`: what linearAttention() runs.
enum class LinearMethod { Elu, Favor, Linformer };
LinearMethod parse_linear_method(const std::string& name);  // "elu" | "favor+" | "linformer"

struct LinearSpec {
  LinearMethod method = LinearMethod::Elu;
  bool causal = false;           // elu and favor+
  int64_t features = 0;          // favor+: m
  int64_t rank = 0;              // linformer
  const float* E = nullptr;      // linformer: [rank, Sk] each, or null for linformer_projections
  const float* F = nullptr;
  uint64_t seed = 0;
};

void linear_attention(const float* q, const float* k, const float* v, int64_t batch, int64_t Sq,
                      int64_t Sk, int64_t D, int64_t Dv, const LinearSpec& spec, float* out,
                      ThreadPool* pool);

}  // namespace attnlab
