// Nadaraya-Watson kernel regression as attention pooling: the prediction at a query is the
// average of the values weighted by normalised kernel values K(|q - k| / h).
#pragma once
#include <cstdint>
#include <string>

#include "attnlab/thread_pool.hpp"

namespace attnlab {

enum class Kernel {
  Gaussian,      // exp(-u^2 / 2)
  Boxcar,        // 1 for u <= 1, else 0
  Epanechnikov,  // max(0, 1 - u^2)
  Triangular,    // max(0, 1 - u); what d2l and the seed slides call "Epanechikov"
};

Kernel parse_kernel(const std::string& name);  // "gaussian", "boxcar", "epanechnikov", "triangular"
const char* kernel_name(Kernel k);
double kernel_value(Kernel k, double u);

// queries [batch, Nq, D], keys [batch, Nk, D], values [batch, Nk, Dv]; u is the Euclidean
// distance over D divided by `bandwidth`. out [batch, Nq, Dv], weights [batch, Nq, Nk] (or null).
// A query with no key inside a compact kernel's support has all-zero weights and a zero output.
void nadaraya_watson(const float* queries, const float* keys, const float* values, int64_t batch,
                     int64_t Nq, int64_t Nk, int64_t D, int64_t Dv, Kernel kernel, double bandwidth,
                     float* out, float* weights, ThreadPool* pool);

}  // namespace attnlab
