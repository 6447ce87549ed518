// The core of propagate-shardings for one op, public so that the unit tests
// and later stages can use it:
//
//   propagate_projection.cpp  tensor sharding -> factor shardings (splitting
//                             axes into sub-axes) and back (merging them)
//   propagate_factors.cpp     the per-factor decision for one op: compatible
//                             axes, legality per tensor, conflicts between
//                             factors (Shardy's aggressive strategy)
#pragma once

#include "ir/AxisAlgebra.h"
#include "ir/IR.h"
#include "passes/rules/ShardingRules.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace shardc::propagation {

// ---- projection ---------------------------------------------------------------

/// One factor of one tensor.
struct FactorSharding {
  bool present = false;          // the tensor has this factor
  std::vector<AxisRef> axes;     // major to minor
  std::vector<AxisRef> overflow; // axes left over when a non-minor-most factor
                                 // and the next axis are coprime
  bool closed = false;           // its dim is closed (or follows an overflow)
  bool minorMost = false;        // last factor of its dim
  std::vector<int> majors;       // the factors before it in its dim
};

/// One tensor of an op, projected onto the op's factors.
struct TensorProjection {
  /// False: the tensor takes no part (another mesh, a maximal mesh).
  bool present = true;
  std::vector<FactorSharding> factors; // by factor index
  /// Axes this tensor may not take: explicitly replicated, already on a dim
  /// without factors, or manual in an enclosing manual_computation.
  std::vector<AxisRef> blocked;
  int64_t elements = 1; // conflicts prefer the larger tensor
};

/// All tensors of one op: operands first, then results.
struct Projection {
  std::vector<TensorProjection> tensors;
  size_t numOperands = 0;
};

/// Projects `sharding` (null: no sharding yet, every dim open and empty) of a
/// tensor whose dims map to `dims` onto the rule's factors. Step by step:
/// the axes of each dim go to its factors major to minor; a factor that is not
/// the dim's minor-most takes axes until it is full, splitting an axis by gcd
/// where it is larger ("x"=4 over factors 2,2 gives "x":(1)2 and "x":(2)2);
/// the minor-most factor takes whatever is left (non-divisible included).
TensorProjection projectTensor(const Sharding *sharding, const TensorFactors &dims,
                               const ShardingRule &rule, const Mesh &mesh,
                               const std::vector<AxisRef> &forbidden);
/// The same, into `out` (reusing its vectors' memory).
void projectTensor(TensorProjection &out, const Sharding *sharding, const TensorFactors &dims,
                   const ShardingRule &rule, const Mesh &mesh,
                   const std::vector<AxisRef> &forbidden);

/// The dims of `tensor` back as axes lists (merging consecutive sub-axes). A
/// dim without factors keeps `oldDims[d]` (when given). Stops in a dim after a
/// factor with overflow axes or one that is not full (a later factor would
/// need a strided view).
std::vector<std::vector<AxisRef>> projectBack(const TensorProjection &tensor,
                                              const TensorFactors &dims, const ShardingRule &rule,
                                              const Mesh &mesh,
                                              const std::vector<DimSharding> *oldDims);

/// Whether `tensor` may add axes to factor `f` now: present, open, no
/// overflow, and every factor before it in its dim already full.
bool canGrow(const TensorProjection &tensor, int f, const ShardingRule &rule, const Mesh &mesh);

// ---- the per-factor decision ---------------------------------------------------

enum class Direction { None, Forward, Backward, Both };

/// What one op's factor propagation did.
struct FactorUpdate {
  std::vector<bool> changed; // per tensor (operands then results)
  std::vector<int> source;   // per factor: the tensor its axes came from, -1 if none
  std::vector<std::vector<AxisRef>> compatible; // per factor, before per-tensor legality
  /// Working memory of propagateFactors, kept between calls.
  std::vector<int64_t> sourceSize;
  std::vector<int> order;
  std::vector<AxisRef> candidate;
};

/// Decides, per factor, the axes every tensor gains and writes them into
/// `projection` (only ever appending). `direction(f)` says which tensors may
/// lead factor f; `elementwise` keeps axes from moving sideways between
/// operands past what the results have (Shardy's rule for elementwise ops).
FactorUpdate propagateFactors(Projection &projection, const ShardingRule &rule,
                              const std::function<Direction(int)> &direction, bool elementwise,
                              const Mesh &mesh);
/// The same, into `out` (reusing its vectors' memory).
void propagateFactors(Projection &projection, const ShardingRule &rule,
                      const std::function<Direction(int)> &direction, bool elementwise,
                      const Mesh &mesh, FactorUpdate &out);

} // namespace shardc::propagation
