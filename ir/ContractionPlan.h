// matmul and einsum as one problem: an index space of labels (the output's
// first, in output order, then the summed ones), and per operand the stride
// each label moves it by (0: the operand does not depend on the label, as a
// broadcast batch dim of matmul). A label repeated in one einsum term adds
// its strides (a diagonal). The LLVM backend emits contractions from it, and
// auto-sharding prices the copies a strategy's local layouts make it take.
#pragma once

#include "ir/IR.h"

#include <optional>
#include <string>
#include <vector>

namespace shardc {

struct ContractionPlan {
  std::vector<int64_t> sizes;                // per label
  size_t outputRank = 0;                     // labels [0, outputRank) are the output's dims
  std::vector<std::vector<int64_t>> strides; // per operand, per label
  /// Per operand, per dim: its label (kNoLabel for a broadcast dim of size 1).
  std::vector<std::vector<size_t>> operandLabels;
  /// Per label: the result's stride (0 for a summed label). Row-major from
  /// `of`; a piece of a contraction written into part of a larger result
  /// keeps the larger result's strides.
  std::vector<int64_t> resultStrides;
  static constexpr size_t kNoLabel = static_cast<size_t>(-1);

  /// The plan of a matmul or einsum `op` whose operands and result have
  /// these shapes (a device's local blocks, or the op's own types); nullopt
  /// with `error` set when the shapes or the equation do not fit the op.
  static std::optional<ContractionPlan> of(const Op &op,
                                           const std::vector<std::vector<int64_t>> &operandShapes,
                                           const std::vector<int64_t> &resultShape,
                                           std::string &error);
  /// The plan on the op's own operand and result types.
  static std::optional<ContractionPlan> of(const Op &op, std::string &error);
};

/// A float contraction of two operands as batched GEMMs
/// C[b](i, j) = sum_p A[b](i, p) * B[b](p, j), where i, j, p, b each flatten
/// a group of labels (M: lhs and output, N: rhs and output, K: summed, both
/// operands, B: all three). `direct` says whether an operand (or the output)
/// can be passed to BLAS where it is (a matrix per batch, row-major for the
/// output, its leading dim an int); otherwise it is copied into (or out of)
/// a scratch buffer in the canonical layout [B, M, K], [B, K, N], [B, M, N].
struct GemmPlan {
  std::vector<size_t> batch, m, n, k; // label indices
  int64_t M = 1, N = 1, K = 1;
  struct Matrix {
    bool direct = false;
    bool transposed = false; // element (r, c) at r + c * ld, else r * ld + c
    int64_t ld = 1;
    std::vector<int64_t> batchStrides; // per batch label
  };
  Matrix a, b, c;
};

/// Nullopt when the contraction is not two operands with every label in
/// one of the four groups (e.g. a label summed in one operand only).
std::optional<GemmPlan> planGemm(const ContractionPlan &plan);

/// Element strides of a row-major buffer of `shape`.
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &shape);

} // namespace shardc
