// The fused attention kernel (flash-attention style): tiles of query rows against tiles of keys
// with an online softmax (running max and sum per row), so the Sq x Sk score matrix exists only
// when the caller asks for the weights. Causal masks and valid lengths cut each row's key range:
// tiles past it are skipped, and only tiles that straddle it are masked element by element.
// Scores are kept in base 2 (log2(e) folded into the query scale, additive masks multiplied by
// it): softmax(x) = 2^(x log2 e - max) / sum, and 2^y needs a much shorter range reduction than
// e^x, whose latency bounds the exp loop. Rows that float32 cannot score (a score or an additive
// mask beyond its range, which base 2 reaches 1.44x sooner) are recomputed exactly (exact_row).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "attnlab/attention.hpp"
#include "attnlab/row_groups.hpp"
#include "attnlab/softmax.hpp"
#include "kernels.hpp"

namespace attnlab {
namespace {

// Keys per softmax tile (a multiple of the 8-key panels). 128 ran attention 1-2% faster than 64
// in Chromium 156 (both builds; H8 S512, H1 S2048) and 0.4-2% in Node 20; 256 no faster (SIMD128
// 2% slower): a tile's softmax bookkeeping and output rescaling amortised over more keys, its
// scores (6 x 128 floats) still in L1.
constexpr int64_t kKeyTile = 128;
// Query rows per parallel task: a multiple of both row groups (kernels::kWideRows and 4).
constexpr int64_t kRowsPerTask = kernels::kWideRows == 4 ? 64 : 60;
constexpr int64_t kPackRows = 512;     // keys per packing task (a multiple of the 8-key panels)
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kLog2e = kernels::exp_constants::kLog2e;

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Scores s[0..width) of row i against keys j0.. (base 2): keys at or past `hi` are hidden, and
// the element-wise masks apply to the visible ones.
void mask_tile(const MaskSet& m, int64_t b, int64_t i, int64_t j0, int64_t hi, float* s,
               int64_t width) noexcept {
  const int64_t vis = std::clamp<int64_t>(hi - j0, 0, width);
  for (int64_t j = vis; j < width; ++j) s[j] = kNegInf;
  if (vis == 0) return;
  for (const BoolMask& bm : m.bools) {
    const int64_t cs = bm.at.col_stride;
    const uint8_t* row = bm.data + bm.at.batch_offset[b] + i * bm.at.row_stride + j0 * cs;
    if (cs == 1) {
      kernels::mask_bytes(s, row, bm.true_means_blocked, vis);
    } else {
      for (int64_t j = 0; j < vis; ++j)
        if ((row[j * cs] != 0) == bm.true_means_blocked) s[j] = kNegInf;
    }
  }
  for (const AdditiveMask& am : m.additive) {
    const int64_t cs = am.at.col_stride;
    const float* row = am.data + am.at.batch_offset[b] + i * am.at.row_stride + j0 * cs;
    if (cs == 1) {
      kernels::axpy(kLog2e, row, s, vis);
    } else {
      for (int64_t j = 0; j < vis; ++j) s[j] += kLog2e * row[j * cs];
    }
  }
}

// Row i of the slice in double precision, in base e, max-subtracted: the right weights and
// output for scores and masks of any float32 magnitude (|q.k| <= D * FLT_MAX^2 fits a double), for
// the rare rows the fused pass leaves without a finite running max or output (see the end of
// attend_slice). Rows whose keys are all hidden come here too and get zeros, as there.
// Keys come from the packed panels (panels[j / 8][d][j % 8]): callers such as the decoder's KV
// cache hold keys only in that layout, and leave sl.k null.
void exact_row(const AttentionSlice& sl, int64_t i, int64_t hi, int64_t Sk, int64_t D, int64_t Dv,
               float scale, const MaskSet& masks, const float* k_panels) {
  // Scores, then the output accumulator (plain arrays: no std::vector<double> code in the build).
  std::unique_ptr<double[]> buf(new double[hi + Dv]());
  double* s = buf.get();
  double* o = s + hi;
  const float* q = sl.q + i * sl.q_stride;
  for (int64_t j = 0; j < hi; ++j) {
    const float* k = k_panels + j / 8 * 8 * D + j % 8;
    double dot = 0.0;
    for (int64_t d = 0; d < D; ++d) dot += static_cast<double>(q[d]) * k[d * 8];
    s[j] = dot * scale;
  }
  apply_element_masks_span(masks, sl.b, i, 0, s, hi);
  const double sum = exp_shift_row(s, hi);
  const double inv = sum > 0.0 ? 1.0 / sum : 0.0;
  for (int64_t j = 0; j < hi; ++j)
    if (s[j] != 0.0)
      for (int64_t c = 0; c < Dv; ++c) o[c] += s[j] * sl.v[j * sl.v_stride + c];
  float* out = sl.out + i * sl.out_stride;
  for (int64_t c = 0; c < Dv; ++c) out[c] = static_cast<float>(o[c] * inv);
  if (sl.weights) {
    float* wr = sl.weights + i * Sk;
    for (int64_t j = 0; j < hi; ++j) wr[j] = static_cast<float>(s[j] * inv);
    std::memset(wr + hi, 0, sizeof(float) * static_cast<size_t>(Sk - hi));
  }
}

// One key tile's two products for a group of G rows: the scores s (G x wp, row stride kKeyTile)
// = the group's pre-scaled q rows (interleaved by G) times wp keys' panels, and acc (G x Dv) +=
// s's first w columns times w value rows. What attend_groups runs and row_groups_probe times.
template <int G>
void tile_scores(int64_t D, const float* qs, const float* k_panels, int64_t wp, float* s) noexcept {
  if constexpr (G == 1)
    kernels::gemm_1xn<1>(D, qs, k_panels, 8 * D, 8, s, wp, false);
  else
    for (int64_t p = 0; p < wp; p += 8) kernels::gemm_rows<G, 1, G>(D, qs, k_panels + p * D, 8, s + p, kKeyTile, 8, false);
}

template <int G>
void tile_values(int64_t w, const float* s, const float* v, int64_t v_stride, float* acc, int64_t Dv) noexcept {
  if constexpr (G == 1)
    kernels::gemm_1xn<1>(w, s, v, 8, v_stride, acc, Dv, true);
  else
    for (int64_t c = 0; c < Dv; c += 8)
      kernels::gemm_rows<G, kKeyTile, 1>(w, s, v + c, v_stride, acc + c, Dv, std::min<int64_t>(8, Dv - c), true);
}

// Rows [i0, i0 + R) of a slice in groups of G (1 for a single row, kernels::kWideRows, or 4),
// into the caller's buffers: q rows pre-scaled (by scale * log2 e) and interleaved by G (the A
// operand of the G-row product; zero rows pad the last group), the output accumulators, running
// max and sum per row (all set up by the caller), and one G x kKeyTile score tile. hi[r]: row r's
// visible keys. noexcept and allocation-free (so no exception landing pads, which the scalar
// build's JavaScript-based exceptions make calls through JavaScript): attend_slice owns the memory
// and finishes the rows.
//
// Each row's scores, softmax and output are its own within the group; what the rows share is the
// tile width (the longest key range among them), which orders a row's softmax sum. So rows with
// equal key ranges get the same bits in groups of 4 or 6; under causal masks or differing valid
// lengths the last bits may move with G. The task split and the module's setting
// (set_row_groups, once, before any attention) fix the groups: thread counts never change them.
template <int G>
void attend_groups(const AttentionSlice& sl, int64_t i0, int64_t rows, int64_t R, int64_t D, int64_t Dv,
                   float scale, const MaskSet& masks, const float* k_panels, const int64_t* hi,
                   int64_t hi_all, float* qs, float* acc, float* run_max, float* run_sum, float* s,
                   int64_t weights_stride) noexcept {
  for (int64_t g = 0; g < R; g += G)
    kernels::pack_rows<G>(sl.q + (i0 + g) * sl.q_stride, sl.q_stride, std::min<int64_t>(G, rows - g), D,
                          qs + g * D);
  kernels::scale(qs, scale * kLog2e, R * D);
  const bool element_masks = !masks.bools.empty() || !masks.additive.empty();
  // Key tiles outside, groups of G rows inside: a tile of K panels and V rows is reused by all
  // the task's rows while it is in cache.
  for (int64_t j0 = 0; j0 < hi_all; j0 += kKeyTile) {
    for (int64_t g = 0; g < R; g += G) {
      const int64_t hmax = *std::max_element(hi + g, hi + g + G);
      const int64_t hmin = *std::min_element(hi + g, hi + g + G);
      if (j0 >= hmax) continue;  // every key of the tile is hidden from these rows
      const int64_t w = std::min(kKeyTile, hmax - j0), wp = round_up(w, 8);
      tile_scores<G>(D, qs + g * D, k_panels + j0 * D, wp, s);

      for (int64_t r = 0; r < G; ++r) {
        float* sr = s + r * kKeyTile;
        const int64_t row = g + r;
        if (element_masks || j0 + wp > hmin) mask_tile(masks, sl.b, i0 + row, j0, hi[row], sr, wp);
        if (sl.weights && row < rows)  // raw masked base-2 scores; normalised once the row is done
          std::memcpy(sl.weights + (i0 + row) * weights_stride + j0, sr, sizeof(float) * static_cast<size_t>(w));
      }
      float alpha[(G + 3) / 4 * 4];  // online_softmax4 writes four lanes
      bool any = false;
      for (int r = 0; r < G; r += 4)
        any |= kernels::online_softmax4(s + r * kKeyTile, kKeyTile, wp, run_max + g + r, run_sum + g + r,
                                        alpha + r, std::min(4, G - r));
      if (!any) continue;
      for (int64_t r = 0; r < G; ++r)
        if (alpha[r] != 1.0f) kernels::scale(acc + (g + r) * Dv, alpha[r], Dv);
      tile_values<G>(w, s, sl.v + j0 * sl.v_stride, sl.v_stride, acc + g * Dv, Dv);
    }
  }
}

}  // namespace

float row_groups_probe(int rows, int reps) {
  // 64 keys of a tile at D = 64, as attend_groups runs them (the dense layer's product too).
  constexpr int64_t D = 64, T = 64;
  constexpr int G = kernels::kWideRows;
  static float q[G * D], k[T * D], v[T * D], s[G * kKeyTile], acc[G * D];
  // Operands written here, so the compiler cannot take them for the zeros they start as and fold
  // the products away; 0.01 keeps every sum far from denormals and overflow.
  static bool filled = false;
  if (!filled) {
    std::fill(q, q + G * D, 0.01f), std::fill(k, k + T * D, 0.01f), std::fill(v, v + T * D, 0.01f);
    filled = true;
  }
  for (int r = 0; r < reps; ++r) {
    if (rows == G) {
      tile_scores<G>(D, q, k, T, s);
      tile_values<G>(T, s, v, D, acc, D);
    } else {
      tile_scores<4>(D, q, k, T, s);
      tile_values<4>(T, s, v, D, acc, D);
    }
  }
  float sum = s[0];  // every output feeds the checksum, so none of the work is dead
  for (float a : acc) sum += a;
  return sum;
}

void attend_slice(const AttentionSlice& sl, int64_t i0, int64_t i1, int64_t Sk, int64_t D,
                  int64_t Dv, float scale, const MaskSet& masks, const float* k_panels) {
  constexpr int64_t kWide = kernels::kWideRows;
  const int64_t rows = i1 - i0;
  // A single row (a decoder's or a generated token's query) goes alone, through gemm_1xn: the
  // bits of row 0 of a group, without the group's three rows of padding (kernels::kSingleRow).
  const int64_t G = rows == 1 && kernels::kSingleRow ? 1 : row_group_for(rows);
  // A last group of one or two rows goes as single rows, not padded to G: a beam of 5 rows over
  // its source was 8 rows' work in groups of 4 (the cross-attention, 2.3% of a beam-5 Transformer
  // translation in Node 20; 4 + 1 made the translation 1.009-1.012x faster). The same bits: a
  // single row gets its bits within a group, and a group's tile width (its longest key range) is
  // the single row's own where the rows left over see as many keys (always for one).
  const int64_t rest = G > 1 ? rows % G : 0;
  if (kernels::kSingleRow && rows > G && (rest == 1 || (rest == 2 && visible_keys(masks, sl.b, i1 - 1, Sk) ==
                                                                        visible_keys(masks, sl.b, i1 - 2, Sk)))) {
    attend_slice(sl, i0, i1 - rest, Sk, D, Dv, scale, masks, k_panels);
    for (int64_t i = i1 - rest; i < i1; ++i) attend_slice(sl, i, i + 1, Sk, D, Dv, scale, masks, k_panels);
    return;
  }
  const int64_t R = round_up(rows, G);
  // Per task: q rows, output accumulators, running max and sum per row, the score tile (see
  // attend_groups), and each row's visible keys. On the stack where they fit: a decoder step
  // makes dozens of calls (a row, or a beam's rows, over a few keys), each short enough that its
  // two heap allocations showed in profiles.
  constexpr int64_t kStackFloats = 2048, kStackRows = 64;
  alignas(64) float stack_buf[kStackFloats];
  int64_t stack_hi[kStackRows];
  const int64_t floats = R * D + R * Dv + 2 * R + G * kKeyTile;
  std::unique_ptr<float[]> heap_buf(floats > kStackFloats ? new float[floats] : nullptr);
  std::unique_ptr<int64_t[]> heap_hi(R > kStackRows ? new int64_t[R] : nullptr);
  float* qs = heap_buf ? heap_buf.get() : stack_buf;
  float* acc = qs + R * D;
  float* run_max = acc + R * Dv;
  float* run_sum = run_max + R;
  float* s = run_sum + R;
  int64_t* hi = heap_hi ? heap_hi.get() : stack_hi;
  int64_t hi_all = 0;
  for (int64_t r = 0; r < R; ++r) {
    hi[r] = r < rows ? visible_keys(masks, sl.b, i0 + r, Sk) : 0;
    hi_all = std::max(hi_all, hi[r]);
    run_max[r] = kNegInf;
    run_sum[r] = 0.0f;
  }
  std::memset(acc, 0, sizeof(float) * static_cast<size_t>(R * Dv));
  if (G == 1)
    attend_groups<1>(sl, i0, rows, R, D, Dv, scale, masks, k_panels, hi, hi_all, qs, acc, run_max, run_sum, s, Sk);
  else if (G == kWide)
    attend_groups<kWide>(sl, i0, rows, R, D, Dv, scale, masks, k_panels, hi, hi_all, qs, acc, run_max, run_sum, s, Sk);
  else
    attend_groups<4>(sl, i0, rows, R, D, Dv, scale, masks, k_panels, hi, hi_all, qs, acc, run_max, run_sum, s, Sk);

  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = i0 + r;
    float* out = sl.out + i * sl.out_stride;
    const float inv = run_sum[r] > 0.0f ? 1.0f / run_sum[r] : 0.0f;  // 0: every key masked
    bool finite = std::isfinite(run_max[r]) || hi[r] == 0;
    for (int64_t c = 0; c < Dv; ++c) finite &= std::isfinite(out[c] = acc[r * Dv + c] * inv);
    // A score past float range (+inf, inf - inf = NaN), or every visible score -inf (overflowed,
    // or masked): one check per row here, the exact recomputation only for such rows.
    if (!finite) {
      exact_row(sl, i, hi[r], Sk, D, Dv, scale, masks, k_panels);
      continue;
    }
    if (sl.weights) {
      float* wr = sl.weights + i * Sk;
      if (inv != 0.0f) {
        kernels::exp2_shift_sum(wr, run_max[r], hi[r]);
        kernels::scale(wr, inv, hi[r]);
      } else {
        std::memset(wr, 0, sizeof(float) * static_cast<size_t>(hi[r]));
      }
      std::memset(wr + hi[r], 0, sizeof(float) * static_cast<size_t>(Sk - hi[r]));
    }
  }
}

void attend_slices(int64_t batch, const std::function<AttentionSlice(int64_t)>& slice, int64_t Sq,
                   int64_t Sk, int64_t D, int64_t Dv, float scale, const MaskSet& masks,
                   ThreadPool* pool) {
  check_query_offset(masks.query_offset);
  // Keys packed once per slice (O(Sk D), not O(Sq Sk)): the QK^T panels of every task. In chunks
  // of kPackRows keys, so a single long slice does not pack on one thread while the others wait.
  const int64_t panel_size = kernels::panels_size(Sk, D);
  std::unique_ptr<float[]> panels(new float[batch * panel_size]);
  const int64_t chunks = (Sk + kPackRows - 1) / kPackRows;
  parallel_for(pool, batch * chunks, [&](int64_t t) {
    const int64_t b = t / chunks, j0 = t % chunks * kPackRows;
    const AttentionSlice s = slice(b);
    kernels::pack_panels(s.k + j0 * s.k_stride, s.k_stride, std::min(kPackRows, Sk - j0), D,
                         panels.get() + b * panel_size + j0 * D);
  });
  // Tasks of kRowsPerTask rows, so the split (and every result bit) is the same for any thread
  // count. Later rows see more keys under a causal mask: hand those out first to balance.
  const int64_t blocks = (Sq + kRowsPerTask - 1) / kRowsPerTask;
  parallel_for(pool, batch * blocks, [&](int64_t t) {
    const int64_t b = t % batch, i0 = (blocks - 1 - t / batch) * kRowsPerTask;
    attend_slice(slice(b), i0, std::min(Sq, i0 + kRowsPerTask), Sk, D, Dv, scale, masks,
                 panels.get() + b * panel_size);
  });
}

}  // namespace attnlab
