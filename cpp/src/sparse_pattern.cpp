#include "attnlab/sparse_pattern.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "attnlab/error.hpp"
#include "attnlab/random.hpp"

namespace attnlab {

PatternType parse_pattern_type(const std::string& name) {
  if (name == "local") return PatternType::Local;
  if (name == "longformer") return PatternType::Longformer;
  if (name == "bigbird") return PatternType::BigBird;
  throw Error("pattern.type: expected one of 'local', 'longformer', 'bigbird', got '" + name + "'");
}

namespace {

bool contains(const std::vector<int64_t>& sorted, int64_t x) {
  return std::binary_search(sorted.begin(), sorted.end(), x);
}

// Clips the spans to [0, Sk), sorts them and merges those that overlap or touch.
void clip_sort_merge(std::vector<Span>& spans, int64_t Sk) {
  for (Span& s : spans) {
    s.begin = std::max<int64_t>(s.begin, 0);
    s.end = std::min(s.end, Sk);
  }
  std::sort(spans.begin(), spans.end(), [](Span a, Span b) { return a.begin < b.begin; });
  size_t n = 0;
  for (size_t t = 0; t < spans.size(); ++t) {
    const Span s = spans[t];
    if (s.begin >= s.end) continue;
    if (n > 0 && s.begin <= spans[n - 1].end) {
      spans[n - 1].end = std::max(spans[n - 1].end, s.end);
    } else {
      spans[n++] = s;
    }
  }
  spans.resize(n);
}

void check_globals(const std::vector<int64_t>& global, int64_t limit, const char* unit) {
  for (int64_t g : global) {
    require(g >= 0 && g < limit, [&] {
      return std::string("pattern.global: expected ") + unit + " indices in [0, " +
             std::to_string(limit) + "), got " + std::to_string(g);
    });
  }
}

// BigBird's random blocks: for each non-global query block, up to `random_blocks` distinct key
// blocks drawn uniformly from those outside its window and the global blocks (Zaheer et al.).
std::vector<int64_t> draw_random_blocks(const PatternSpec& s, int64_t q_blocks, int64_t k_blocks) {
  const int64_t R = s.random_blocks;
  std::vector<int64_t> random(static_cast<size_t>(q_blocks * R), -1);
  Rng rng(s.seed);
  std::vector<int64_t> candidates;
  for (int64_t r = 0; r < q_blocks; ++r) {
    if (contains(s.global, r)) continue;  // a global row sees every block anyway
    candidates.clear();
    for (int64_t c = 0; c < k_blocks; ++c) {
      if (std::abs(c - r) > s.window_blocks && !contains(s.global, c)) candidates.push_back(c);
    }
    // Partial Fisher-Yates: the first `take` candidates become a uniform random subset.
    const int64_t n = static_cast<int64_t>(candidates.size()), take = std::min(R, n);
    for (int64_t t = 0; t < take; ++t) {
      std::swap(candidates[t], candidates[t + rng.below(n - t)]);
      random[r * R + t] = candidates[t];
    }
  }
  return random;
}

}  // namespace

SparsePattern make_pattern(PatternSpec spec, int64_t Sq, int64_t Sk) {
  require(Sq >= 0 && Sk >= 0, [&] {
    return "pattern: expected Sq, Sk >= 0, got " + std::to_string(Sq) + ", " + std::to_string(Sk);
  });
  std::sort(spec.global.begin(), spec.global.end());
  spec.global.erase(std::unique(spec.global.begin(), spec.global.end()), spec.global.end());
  SparsePattern p;
  p.Sq = Sq;
  p.Sk = Sk;
  if (spec.type == PatternType::BigBird) {
    require(spec.block >= 1, [&] {
      return "pattern.blockSize: expected an integer >= 1, got " + std::to_string(spec.block);
    });
    require(spec.window_blocks >= 0 && spec.random_blocks >= 0, [&] {
      return "pattern: expected windowBlocks, randomBlocks >= 0, got " +
             std::to_string(spec.window_blocks) + ", " + std::to_string(spec.random_blocks);
    });
    const int64_t q_blocks = (Sq + spec.block - 1) / spec.block;
    const int64_t k_blocks = (Sk + spec.block - 1) / spec.block;
    check_globals(spec.global, std::max(q_blocks, k_blocks), "block");
    // Fewer are drawn when fewer are left (documented), and never more than the key blocks: a
    // huge randomBlocks draws the same pattern without allocating q_blocks x randomBlocks slots.
    spec.random_blocks = std::min(spec.random_blocks, k_blocks);
    p.random = draw_random_blocks(spec, q_blocks, k_blocks);
  } else {
    require(spec.window >= 0, [&] {
      return "pattern.window: expected an integer >= 0, got " + std::to_string(spec.window);
    });
    if (spec.type == PatternType::Local) {
      require(spec.global.empty(), [] { return "pattern.global: local patterns have none"; });
    }
    check_globals(spec.global, std::max(Sq, Sk), "token");
  }
  p.spec = std::move(spec);
  return p;
}

void row_spans(const SparsePattern& p, int64_t i, std::vector<Span>& spans) {
  const PatternSpec& s = p.spec;
  spans.clear();
  switch (s.type) {
    case PatternType::Local:
      spans.push_back({i - s.window, i + s.window + 1});
      break;
    case PatternType::Longformer:
      if (contains(s.global, i)) {
        spans.push_back({0, p.Sk});
        break;
      }
      spans.push_back({i - s.window, i + s.window + 1});
      for (int64_t g : s.global) spans.push_back({g, g + 1});
      break;
    case PatternType::BigBird: {
      const int64_t B = s.block, r = i / B, R = s.random_blocks;
      if (contains(s.global, r)) {
        spans.push_back({0, p.Sk});
        break;
      }
      spans.push_back({(r - s.window_blocks) * B, (r + s.window_blocks + 1) * B});
      for (int64_t g : s.global) spans.push_back({g * B, (g + 1) * B});
      for (int64_t t = 0; t < R; ++t) {
        const int64_t c = p.random[r * R + t];
        if (c >= 0) spans.push_back({c * B, (c + 1) * B});
      }
      break;
    }
  }
  clip_sort_merge(spans, p.Sk);
}

void pattern_mask(const SparsePattern& p, bool causal, uint8_t* out) {
  std::memset(out, 0, static_cast<size_t>(p.Sq * p.Sk));
  std::vector<Span> spans;
  for (int64_t i = 0; i < p.Sq; ++i) {
    row_spans(p, i, spans);
    uint8_t* row = out + i * p.Sk;
    for (const Span& s : spans) {
      const int64_t end = causal ? std::min(s.end, i + 1) : s.end;
      for (int64_t j = s.begin; j < end; ++j) row[j] = 1;
    }
  }
}

}  // namespace attnlab
