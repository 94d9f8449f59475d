#include "attnlab/mask_spec.hpp"

#include "attnlab/alibi.hpp"
#include "attnlab/error.hpp"

namespace attnlab {

MaskSet make_masks(const MaskSpec& spec, const Shape& scores) {
  require(scores.size() >= 2, [] { return std::string("mask: the scores need at least two axes"); });
  MaskSet set;
  set.causal = spec.causal;
  set.query_offset = spec.query_offset;
  for (const MaskSpec::Bool& b : spec.bools)
    set.bools.push_back({b.data, broadcast_to(b.shape, scores, "mask"), b.true_means_blocked});
  for (const MaskSpec::Additive& a : spec.additive) set.additive.push_back({a.data, broadcast_to(a.shape, scores, "mask")});
  const Shape lead(scores.begin(), scores.end() - 2);
  const int64_t Sq = scores[scores.size() - 2], Sk = scores.back();
  if (spec.valid_lens.data)
    set.valid_lens = make_valid_lens(spec.valid_lens.data, spec.valid_lens.length, lead, Sq, Sk, "valid_lens");
  if (Sq == 0 || Sk == 0) return set;  // no bias to fill; alibi_bias and t5_bias need a diagonal
  if (spec.alibi.table)
    set.additive.push_back(alibi_bias(spec.alibi.slopes, spec.alibi.heads, numel(lead), Sq, Sk, spec.alibi.table,
                                      set.query_offset));
  if (spec.t5.weights)
    set.additive.push_back(t5_bias(spec.t5.weights, spec.t5.heads, spec.t5.params, numel(lead), Sq, Sk, spec.t5.table,
                                   set.query_offset));
  return set;
}

}  // namespace attnlab
