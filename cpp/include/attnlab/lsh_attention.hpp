// Reformer's LSH attention (Kitaev et al. 2020).
//
// Queries and keys share one projection (qk): the key of token j is qk_j / |qk_j|, its query
// qk_j. Each of n_hashes rounds hashes the tokens by a random rotation R [D, n_buckets / 2]
// (angular LSH: bucket = argmax [x R, -x R], x the unit key, which buckets as qk_j does), sorts them by (bucket, position), cuts the sorted
// sequence into chunks of `chunk` tokens, and lets each query attend to the keys of its chunk and
// of the chunk before (the first chunk's being the last: Reformer's look-one-back wraps). A
// token's own key scores -1e5, as in Reformer, so it is attended only when it sees no other key.
// Causal: keys at positions j > i are hidden. The rounds' outputs are combined with weights
// exp(lse_r - logsumexp_r(lse_r)), lse_r the log of a round's softmax denominator: the softmax
// over the union of the rounds' keys, a key seen in several rounds counting once per round.
//
// Scores past float32 (|qk_i| beyond 3.4e38) make that row's round in double precision.
// Cost per round: hashing O(S D n_buckets / 2), a counting sort O(S + n_buckets), attention
// O(S * 2 chunk * (D + Dv)); memory O(n_hashes S Dv).
#pragma once
#include <cstdint>

#include "attnlab/thread_pool.hpp"

namespace attnlab {

struct LshParams {
  int64_t n_buckets = 8;   // even, >= 2
  int64_t n_hashes = 1;    // rounds, >= 1
  int64_t chunk = 0;       // chunk length; 0: S / n_buckets (the mean bucket size)
  bool causal = false;
  uint64_t seed = 0;       // of the rotations
};

// The score of a token's own key (Reformer's self-attention mask value).
constexpr float kLshSelfScore = -1e5f;

// The chunk length `p` gives for S tokens; throws unless it divides S.
int64_t lsh_chunk(const LshParams& p, int64_t S);

// Random rotations R [n_hashes, D, n_buckets / 2], N(0, 1) entries drawn from `seed`.
void lsh_rotations(const LshParams& p, int64_t D, float* R);

// Bucket of each of S vectors x [S, D] in each round: buckets [n_hashes, S].
void lsh_hash(const float* x, int64_t S, int64_t D, const float* R, const LshParams& p,
              int32_t* buckets);

// qk [batch, S, D], v [batch, S, Dv] -> out [batch, S, Dv]. Optional outputs (null: not made):
// buckets [batch, n_hashes, S]; attended [batch, n_hashes, S, 2 * chunk] (or chunk when there is
// one chunk), the positions of the keys each query saw in each round, -1 for hidden ones (causal,
// or its own key when it saw another).
void lsh_attention(const float* qk, const float* v, int64_t batch, int64_t S, int64_t D,
                   int64_t Dv, const LshParams& p, float* out, int32_t* buckets,
                   int32_t* attended, ThreadPool* pool);

}  // namespace attnlab
