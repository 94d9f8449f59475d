// The training engine's random bits: std::mt19937's sequence, bit for bit, from a generator that
// can also fill a block at once. Dropout draws one number per activation; through std::mt19937's
// operator() (a bounds check and a tempering per call, not vectorised) and uniform_real_distribution
// a 118 K-element dropout took 2.8-3.1 ns a number; dropout's forward, backward and the
// generator's regeneration were 3.8% of a perf profile of the shipped Transformer recipe (Intel
// Xeon, g++ 12). fill() regenerates the state with vector operations and
// tempers whole blocks: 0.2 ns a number.
// The same sequence keeps every trained model, loss curve and test result as it was, and the
// standard distributions and std::shuffle accept it as they accepted std::mt19937 (they read only
// its output, min() and max()).
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>

namespace attnlab::nn {

class Mt19937 {
 public:
  using result_type = uint32_t;
  static constexpr int kState = 624;  // words of state: what one regeneration yields
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<uint32_t>::max(); }

  explicit Mt19937(uint32_t seed = 5489u) { this->seed(seed); }
  void seed(uint32_t s) {
    x_[0] = s;
    for (uint32_t k = 1; k < kState; ++k) x_[k] = 1812433253u * (x_[k - 1] ^ (x_[k - 1] >> 30)) + k;
    i_ = kState;
  }
  result_type operator()() {
    if (i_ == kState) regenerate();
    return temper(x_[i_++]);
  }
  // The next n numbers into out: n calls of operator(), in order.
  void fill(uint32_t* __restrict out, int64_t n) {
    while (n > 0) {
      if (i_ == kState) regenerate();
      const int64_t c = std::min<int64_t>(n, kState - i_);
      const uint32_t* __restrict x = x_ + i_;
      for (int64_t k = 0; k < c; ++k) out[k] = temper(x[k]);
      i_ += static_cast<int>(c);
      out += c;
      n -= c;
    }
  }

 private:
  static constexpr int kShift = 397;
  static uint32_t temper(uint32_t y) {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
  }
  // Word k from words k, k + 1 (both old) and k + 397 mod 624 (old in the first range, already
  // new in the second, which is 227 words behind): the split ranges, free of the modulo, vectorise.
  void step(int k, int next, int far) {
    const uint32_t y = (x_[k] & 0x80000000u) | (x_[next] & 0x7fffffffu);
    x_[k] = x_[far] ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908b0dfu);
  }
  void regenerate() {
    for (int k = 0; k < kState - kShift; ++k) step(k, k + 1, k + kShift);
    for (int k = kState - kShift; k < kState - 1; ++k) step(k, k + 1, k + kShift - kState);
    step(kState - 1, 0, kShift - 1);
    i_ = 0;
  }
  uint32_t x_[kState];
  int i_ = kState;
};

}  // namespace attnlab::nn
