// Internals of the reference interpreter, shared by its per-op-group files.
// Not part of the interpreter's interface (Interpreter.h).
#pragma once

#include "backend/interpreter/Interpreter.h"
#include "ir/AxisAlgebra.h"

#include <string>
#include <vector>

namespace shardc::interp::detail {

/// The instances a block runs as (SPMD_CONTRACT.md section 2). Outside any
/// manual_computation there is one, with no mesh; inside, one per
/// combination of coordinates of the manual axes, row-major in mesh axis
/// order (the instance linear index).
struct Instances {
  const Mesh *mesh = nullptr;
  /// Indices into mesh->axes of the manual axes, ascending.
  std::vector<int> manualAxes;
  /// Per instance, its coordinate along every axis of the mesh (0 along
  /// the axes that are not manual).
  std::vector<std::vector<int64_t>> coords;

  size_t count() const { return coords.size(); }
  bool isManual(const std::string &axis) const;
};

/// The runtime error for `op`: `<op> - <message>` at the op.
[[noreturn]] void fail(const Op &op, const std::string &message);

// ---- per-instance ops: one instance's operands -> its result ---------------

/// Unary, convert, binary and select (ElementwiseOps.cpp).
Tensor evalElementwise(const Op &op, const std::vector<const Tensor *> &operands);
/// matmul and einsum (ContractionOps.cpp).
Tensor evalContraction(const Op &op, const std::vector<const Tensor *> &operands);
/// reduce_sum, reduce_max, reduce_min, reduce_mean (ReductionOps.cpp).
Tensor evalReduction(const Op &op, const Tensor &input);
/// reshape, transpose, broadcast, concat, slice, pad (ShapeOps.cpp).
Tensor evalShapeOp(const Op &op, const std::vector<const Tensor *> &operands);
/// constant, iota, random_uniform, random_normal (CreationOps.cpp).
Tensor evalCreation(const Op &op);

// ---- collectives: every instance's operand -> every instance's result -------

/// The collectives and axis_index (Collectives.cpp). `operands[i]` is
/// instance i's operand (empty for axis_index).
std::vector<Tensor> evalCollective(const Op &op, const Instances &instances,
                                   const std::vector<const Tensor *> &operands);

// ---- block helpers shared by shape ops, manual_computation, collectives ------

/// Elements [start, start + size) of `dim`; positions past the end of the
/// dim are zeros (padding).
Tensor sliceDim(const Tensor &t, size_t dim, int64_t start, int64_t size);
/// The tensors joined along `dim` (same dtype, other dims equal).
Tensor concatDim(const std::vector<const Tensor *> &parts, size_t dim);

} // namespace shardc::interp::detail
