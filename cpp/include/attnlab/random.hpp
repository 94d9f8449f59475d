// A small seeded generator for the randomised variants (BigBird's random blocks, FAVOR+ features,
// Linformer projections). Hand-written rather than <random>'s distributions, whose output differs
// between libstdc++ (native tests) and libc++ (WebAssembly): one seed gives one pattern everywhere.
#pragma once
#include <cmath>
#include <cstdint>

namespace attnlab {

struct Rng {
  uint64_t state;

  explicit Rng(uint64_t seed) : state(seed) {}

  // splitmix64 (Steele, Lea and Flood).
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  // Uniform in (0, 1): 53 random bits, never 0 so log() below is finite.
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }

  // Uniform integer in [0, n); the modulo bias is below 2^-40 for the n used here.
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }

  // Standard normal by Box-Muller (one of the pair; simplicity over speed).
  double normal() {
    const double u1 = uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
};

}  // namespace attnlab
