// Shapes and numpy-style broadcasting of mask operands over [lead..., rows, cols].
#include <gtest/gtest.h>

#include <vector>

#include "attnlab/error.hpp"
#include "attnlab/shape.hpp"
#include "check.hpp"
#include "reference.hpp"

using attnlab::Broadcast;
using attnlab::broadcast_to;
using attnlab::Shape;

namespace {

// Every element of the target maps to the operand element numpy broadcasting picks.
void ExpectMatchesNumpy(const Shape& operand, const Shape& target) {
  SCOPED_TRACE("operand " + attnlab::to_string(operand) + " -> target " +
               attnlab::to_string(target));
  const Broadcast bc = broadcast_to(operand, target, "m");
  const int64_t rows = target[target.size() - 2], cols = target.back();
  const int64_t batch = ref::product(target) / (rows * cols);
  ASSERT_EQ(static_cast<int64_t>(bc.batch_offset.size()), batch);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        const int64_t got = bc.batch_offset[b] + i * bc.row_stride + j * bc.col_stride;
        const int64_t want = ref::broadcast_index(operand, target, (b * rows + i) * cols + j);
        ASSERT_EQ(got, want) << "at b=" << b << " i=" << i << " j=" << j;
      }
}

}  // namespace

TEST(Shape, NumelAndToString) {
  EXPECT_EQ(attnlab::numel({}), 1);
  EXPECT_EQ(attnlab::numel({2, 3, 4}), 24);
  EXPECT_EQ(attnlab::numel({5, 0, 2}), 0);
  EXPECT_EQ(attnlab::to_string({}), "[]");
  EXPECT_EQ(attnlab::to_string({7}), "[7]");
  EXPECT_EQ(attnlab::to_string({2, 3, 4}), "[2, 3, 4]");
}

TEST(Shape, BroadcastSameShape) {
  const Broadcast bc = broadcast_to({2, 3, 4, 5}, {2, 3, 4, 5}, "m");
  EXPECT_EQ(bc.row_stride, 5);
  EXPECT_EQ(bc.col_stride, 1);
  ASSERT_EQ(bc.batch_offset.size(), 6u);
  for (int64_t b = 0; b < 6; ++b) EXPECT_EQ(bc.batch_offset[b], b * 20);
}

TEST(Shape, BroadcastMatrixOverLeadingDims) {
  const Broadcast bc = broadcast_to({4, 5}, {2, 3, 4, 5}, "m");
  EXPECT_EQ(bc.row_stride, 5);
  EXPECT_EQ(bc.col_stride, 1);
  EXPECT_EQ(bc.batch_offset, std::vector<int64_t>(6, 0));
}

TEST(Shape, BroadcastKeyPaddingShape) {
  // [B, 1, 1, S] over [B, H, L, S]: one row per batch, shared by heads and queries.
  const Broadcast bc = broadcast_to({2, 1, 1, 5}, {2, 3, 4, 5}, "m");
  EXPECT_EQ(bc.row_stride, 0);
  EXPECT_EQ(bc.col_stride, 1);
  EXPECT_EQ(bc.batch_offset, (std::vector<int64_t>{0, 0, 0, 5, 5, 5}));
}

TEST(Shape, BroadcastPerBatchMatrix) {
  // [B, 1, Sq, Sk] over [B, H, Sq, Sk].
  const Broadcast bc = broadcast_to({2, 1, 4, 5}, {2, 3, 4, 5}, "m");
  EXPECT_EQ(bc.row_stride, 5);
  EXPECT_EQ(bc.col_stride, 1);
  EXPECT_EQ(bc.batch_offset, (std::vector<int64_t>{0, 0, 0, 20, 20, 20}));
}

TEST(Shape, BroadcastColumnVector) {
  // [Sq, 1]: one value per query row, repeated over keys.
  const Broadcast bc = broadcast_to({4, 1}, {2, 4, 5}, "m");
  EXPECT_EQ(bc.row_stride, 1);
  EXPECT_EQ(bc.col_stride, 0);
  EXPECT_EQ(bc.batch_offset, (std::vector<int64_t>{0, 0}));
}

TEST(Shape, BroadcastRowVectorAndScalar) {
  const Broadcast row = broadcast_to({5}, {3, 4, 5}, "m");
  EXPECT_EQ(row.row_stride, 0);
  EXPECT_EQ(row.col_stride, 1);
  EXPECT_EQ(row.batch_offset, (std::vector<int64_t>{0, 0, 0}));
  const Broadcast scalar = broadcast_to({}, {2, 3}, "m");
  EXPECT_EQ(scalar.row_stride, 0);
  EXPECT_EQ(scalar.col_stride, 0);
  EXPECT_EQ(scalar.batch_offset, (std::vector<int64_t>{0}));
}

TEST(Shape, BroadcastMiddleDimension) {
  // [1, H, Sq, 1] over [B, H, Sq, Sk]: per-head, per-row values.
  const Broadcast bc = broadcast_to({1, 3, 4, 1}, {2, 3, 4, 5}, "m");
  EXPECT_EQ(bc.row_stride, 1);
  EXPECT_EQ(bc.col_stride, 0);
  EXPECT_EQ(bc.batch_offset, (std::vector<int64_t>{0, 4, 8, 0, 4, 8}));
}

TEST(Shape, BroadcastNoLeadingDims) {
  const Broadcast bc = broadcast_to({3, 1}, {3, 4}, "m");
  EXPECT_EQ(bc.row_stride, 1);
  EXPECT_EQ(bc.col_stride, 0);
  EXPECT_EQ(bc.batch_offset, (std::vector<int64_t>{0}));
}

TEST(Shape, BroadcastAgreesWithNumpyIndexing) {
  const Shape target{2, 3, 4, 5};
  for (const Shape& op : std::vector<Shape>{{2, 3, 4, 5}, {4, 5}, {5}, {1}, {}, {4, 1},
                                            {2, 1, 4, 5}, {2, 1, 1, 5}, {1, 3, 1, 5},
                                            {3, 4, 1}, {1, 1, 1, 1}, {2, 3, 1, 1}, {1, 4, 5}})
    ExpectMatchesNumpy(op, target);
  ExpectMatchesNumpy({3, 1, 2}, {2, 3, 4, 2});
  ExpectMatchesNumpy({2, 1, 1, 1, 3}, {2, 2, 3, 2, 3});
  ExpectMatchesNumpy({1, 1}, {1, 1});
}

TEST(Shape, BroadcastErrorsNameTheOperand) {
  // A mismatched dimension.
  EXPECT_TRUE(check::ThrowsError([] { broadcast_to({3, 5}, {2, 4, 5}, "attnMask"); },
                                 "attnMask"));
  EXPECT_TRUE(check::ThrowsError([] { broadcast_to({2, 1, 1, 6}, {2, 3, 4, 5}, "keyPaddingMask"); },
                                 "keyPaddingMask"));
  // A mismatched leading dimension.
  EXPECT_TRUE(check::ThrowsError([] { broadcast_to({3, 1, 4, 5}, {2, 3, 4, 5}, "bias"); },
                                 "bias"));
  // More dimensions than the target.
  EXPECT_TRUE(check::ThrowsError([] { broadcast_to({1, 4, 5}, {4, 5}, "extra"); }, "extra"));
  // A target without [rows, cols].
  EXPECT_TRUE(check::ThrowsError([] { broadcast_to({5}, {5}, "tooShort"); }, "tooShort"));
  // The message shows both shapes.
  EXPECT_TRUE(check::ThrowsError([] { broadcast_to({3, 5}, {2, 4, 5}, "m"); }, "[3, 5]"));
  EXPECT_TRUE(check::ThrowsError([] { broadcast_to({3, 5}, {2, 4, 5}, "m"); }, "[2, 4, 5]"));
}
