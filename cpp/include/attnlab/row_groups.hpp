// How many rows the fp32 register blocks take at once: 4 (kernels::gemm_4x8), or
// kernels::kWideRows (6 in the relaxed builds, whose fused multiply-add leaves registers for
// gemm_6x8's 12 accumulators) where the engine's compiler makes that faster. Chromium 156 does
// (attention 1.09-1.12x, the dense layer's kernel 1.10x), and Node 20's V8 too (attention
// 1.05-1.06x) since each block is a call of its own (kernels::gemm_rows); an engine may still
// spill them. So the loader times both with row_groups_probe (one attention tile's two products,
// as attend_slice runs them, on `rows`-row groups, `reps` times; returns a checksum; defined
// beside them in flash_attention.cpp) and sets the faster, once per module, before any op runs.
// Users: the fused attention kernel (query rows) and linear_panels.
// A dense layer's bits never depend on it; attention's move in their last bits only where the
// rows of a group see different numbers of keys (causal masks, per-row valid lengths).
#pragma once
#include <cstdint>

namespace attnlab {

// Returns the rows now used (4 if `rows` is not offered by this build).
int set_row_groups(int rows);
int row_groups();
// The group for a block of `rows` rows: row_groups()'s wide size where it is on and pads less than
// groups of 4 would, counted at its 1.08x rate (5-6 rows and 9 or more, for 6), else 4 (so never
// for a single row: a decoder's query, a generated token's dense layers).
int row_group_for(int64_t rows);
float row_groups_probe(int rows, int reps);

}  // namespace attnlab
