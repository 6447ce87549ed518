// auto_axes / explicit_axes regions lowered to plain ops and raised back
// (mixed_axes.cpp steps 4 and 6; partitioning lowers them once more).
// Private to passes/explicit.
#pragma once

#include "ir/IR.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace shardc {

/// Lowers every auto_axes / explicit_axes op of a module, innermost first:
/// its body inlined between edge ops, a `reshard` where the region moves a
/// value (an explicit_axes operand to its in_sharding, an auto_axes result to
/// its out_sharding) and an `identity` where only the type changes. raise()
/// puts the regions back.
class AxesRegionLowering {
public:
  void lower(Module &module);

  /// Every lowered region back in place, outermost first: its arguments and
  /// results are the edges' results again, its body the ops between. Ops
  /// inserted among them since (the solver's sharding_constraint ops, each
  /// just before the op that reads it) go with their readers: one before an
  /// in edge reads a value from outside and goes before the region, any
  /// later one into the body. The region's operands and returned values are
  /// the edges' operands, which such an op may have replaced.
  void raise();

  /// How a report names `op` when it is an edge of a lowered region
  /// (`%la = argument 0 of auto_axes at line 6`, `%y = result 0 of ...`);
  /// empty for any other op.
  std::string describeEdge(const Op &op) const;

  /// The sharding of each reshard lower() added (in the edge ops).
  const std::vector<Sharding *> &reshardTargets() const { return reshardTargets_; }

private:
  struct LoweredRegion {
    Block *parent;
    std::unique_ptr<Op> region;
    std::vector<Op *> ops; // in the parent: the in edges, the body, the out edges
    size_t inEdges = 0, outEdges = 0;
    std::vector<std::optional<TensorType>> argTypes, resultTypes; // as written
  };

  void lowerBlock(Block &b);
  std::unique_ptr<Op> edge(const Op &region, const Sharding *target, Value *from,
                           std::unique_ptr<Value> result);
  static std::vector<size_t> positions(const LoweredRegion &r);

  std::vector<LoweredRegion> lowered_; // innermost first
  std::vector<Sharding *> reshardTargets_;
};

} // namespace shardc
