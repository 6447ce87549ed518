// The import stage: the steps of Shardy's import pipeline that change what
// propagation decides (LANGUAGE.md section 6: Shardy's default pipeline),
// run before auto-shard and propagation; under JAX's rules only the sorting
// of manual axes, which every later stage relies on. Shardy's apply-sharding-constraints
// step runs at the start of propagation itself (passes/propagate/).
#pragma once

#include "ir/IR.h"

namespace shardc {

/// sdy-manual-axes-cleanup's sort: every manual_computation's manual_axes
/// in the order of its mesh's axes (the verifier accepts any order).
void sortManualAxes(Module &module);

/// sdy-constant-or-scalar-splitter, on every function: each use of a
/// constant expression (a `constant` or `iota`, or a broadcast, reshape,
/// slice or elementwise op of constant expressions) by an op that is not
/// one, or by a `return`, reads a copy of the whole expression of its own,
/// placed before the original ops; so does each use of a broadcast of a
/// rank-0 value. Rank-0 values are not copied (they are never sharded). An
/// original whose every use now reads a copy is removed; one nothing read
/// stays. The first copy of a value keeps its name, later ones are
/// `%<name>.<k>`.
void splitConstants(Module &module);

} // namespace shardc
