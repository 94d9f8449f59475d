// Sparse attention patterns: which keys each query may see. A pattern is kept as rules, not as an
// Sq x Sk matrix; row_spans() lists one query's visible keys as a few sorted spans, so a kernel
// visits only those keys. Query i and key j are positions i and j (top-left aligned, as causal).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attnlab {

enum class PatternType {
  Local,       // keys j with |i - j| <= window
  Longformer,  // local, plus global tokens that see every key and are seen by every query
  BigBird,     // in blocks: a window of blocks, global blocks, and seeded random blocks per row
};

PatternType parse_pattern_type(const std::string& name);  // "local" | "longformer" | "bigbird"

struct PatternSpec {
  PatternType type = PatternType::Local;
  int64_t window = 0;            // local, longformer: radius in tokens
  std::vector<int64_t> global;   // longformer: token indices; bigbird: block indices
  int64_t block = 0;             // bigbird: block size in tokens
  int64_t window_blocks = 0;     // bigbird: radius in blocks (1 gives the paper's 3-block window)
  int64_t random_blocks = 0;     // bigbird: random key blocks per query block
  uint64_t seed = 0;             // bigbird: seed of the random blocks
};

// A spec resolved for Sq queries and Sk keys.
struct SparsePattern {
  PatternSpec spec;  // `global` sorted, without duplicates
  int64_t Sq = 0, Sk = 0;
  // bigbird: [query blocks, random_blocks] key block indices; -1 where no block was left to pick.
  std::vector<int64_t> random;
};

// Checks the spec against Sq and Sk (throws attnlab::Error) and draws BigBird's random blocks:
// per query block, distinct key blocks outside its window and the global blocks.
SparsePattern make_pattern(PatternSpec spec, int64_t Sq, int64_t Sk);

struct Span {
  int64_t begin, end;  // keys [begin, end)
};

// The keys query i may see, as sorted, disjoint, non-adjacent spans within [0, Sk).
void row_spans(const SparsePattern& p, int64_t i, std::vector<Span>& spans);

// out [Sq, Sk]: 1 where query i may see key j (and j <= i when `causal`), else 0.
void pattern_mask(const SparsePattern& p, bool causal, uint8_t* out);

}  // namespace attnlab
