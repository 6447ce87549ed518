// Internals of the --explicit pass (passes/explicit_shardings*.cpp): the walk
// (explicit_shardings.cpp) and the per-op result rules
// (explicit_shardings_rules.cpp, explicit_shardings_reshape.cpp). Not part
// of the public interface (Passes.h).
#pragma once

#include "ir/IR.h"

#include <optional>
#include <string>
#include <vector>

namespace shardc::explicit_shardings {

/// Equal axes, major to minor (open and priority are ignored: in --explicit
/// mode every sharding is closed and has none).
bool sameDim(const DimSharding &a, const DimSharding &b);
/// A closed sharding of `mesh` with these dims and nothing replicated.
Sharding makeSharding(const std::string &mesh, std::vector<DimSharding> dims);
/// A closed dim with these axes and no location.
DimSharding closedDim(std::vector<AxisRef> axes = {});
/// The first axis that `sharding` names twice (or two overlapping sub-axes
/// of one axis), or nullopt.
std::optional<AxisRef> duplicateAxis(const Sharding &sharding);
/// `sharding` with every later mention of an already used axis dropped (for
/// a suggested out_sharding).
Sharding withoutDuplicateAxes(Sharding sharding);
/// `sharding` with dim `d` set to `dim` and those axes dropped from the other
/// dims (for a suggested reshard).
Sharding withDim(Sharding sharding, size_t d, const DimSharding &dim);

/// The body's view of a manual_computation in/out sharding: every axis of
/// `manual` dropped, closed.
Sharding withoutManualAxes(const Sharding &sharding, const std::vector<AxisRef> &manual);
/// `outer` with its free axes replaced by those of `body` (manual axes stay
/// major-most in each dim): the out_sharding a body value would satisfy.
Sharding withFreeAxes(const Sharding &outer, const Sharding &body,
                      const std::vector<AxisRef> &manual);
/// `{"x", "y"}`.
std::string axisSet(const std::vector<AxisRef> &axes);

/// `%b`.
std::string valueName(const Value &value);
/// The op written with `sharding` as its out_sharding, the fix for an
/// ambiguous result: `%r = matmul %a, %b : tensor<8x32xf32> sharding<...>`.
std::string exampleOutSharding(const Op &op, const Sharding &sharding);
/// A reshard of `value` to `sharding`: `%b2 = reshard %b sharding<...>`.
std::string exampleReshard(const Value &value, const Sharding &sharding);

/// The note texts every fix hint starts with.
std::string outShardingNote(const Op &op, const Sharding &sharding);
std::string reshardNote(const Value &value, const Sharding &sharding);

/// Result sharding of an op whose rule is factor based (ShardingRules.h):
/// unary, convert, binary and select, matmul and einsum, reduce_*,
/// transpose, broadcast, concat, slice and pad. Every operand has a sharding.
/// A written out_sharding on the result resolves ambiguities (conflicting
/// operand dims, batch dims sharded differently, concat operands or select
/// cases sharded unlike, an axis named twice, contracting dims sharded on
/// both sides) and is returned, whatever the contracting dims; operand
/// constraints (a size-1 broadcast dim must not be sharded, except on axes
/// of size 1, which it passes on as in JAX; one mesh) are
/// errors either way. Concatenated, sliced and padded dims pass their
/// sharding through, as in JAX, also where the axes don't divide them (JAX
/// rejects that); a slice or pad to size-1 dims only is replicated.
/// Reports and returns nullopt on error.
std::optional<Sharding> inferFactorOp(const Op &op, const Module &module, DiagnosticEngine &diags);

/// Result sharding of a reshape (JAX's rule: size-1 dims stripped, then a
/// single split or merge whose axes fit the result dims; an unsharded
/// operand always gives an unsharded result). Reports and returns nullopt
/// when an out_sharding is needed.
std::optional<Sharding> inferReshape(const Op &op, const Module &module, DiagnosticEngine &diags);

} // namespace shardc::explicit_shardings
