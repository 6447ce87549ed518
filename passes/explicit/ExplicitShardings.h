// The explicit-shardings stage (`--explicit`): JAX sharding in types.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "passes/propagate/ShardingOrigins.h"
#include <functional>
#include <unordered_set>

namespace shardc {

/// explicit-shardings (`--explicit`, replaces propagate-shardings): JAX
/// sharding in types. Every value's sharding is computed in program order by
/// its op's rule from its operands' closed shardings: unannotated parameters
/// are replicated on the program's single non-maximal mesh; elementwise ops
/// take the per-dim consensus of their operands (but select's cases, when
/// nothing broadcasts, and concat's operands must be sharded alike);
/// matmul/einsum keep batch dims (sharded alike on both operands) and free
/// dims (a contracting dim sharded on both operands needs an out_sharding);
/// reductions drop reduced dims; reshape allows one split or merge whose
/// axes fit (JAX's rule); slice and pad keep their operand's sharding (to
/// size-1 dims only: replicated); nullary ops are replicated;
/// sharding_constraint asserts, reshard changes.
/// A written out_sharding overrides the rule and resolves its ambiguities.
/// Open dims and priorities are errors, and so is every ambiguous or illegal
/// result, with a note giving a concrete out_sharding or reshard. Afterwards
/// every value carries a closed sharding. Returns false when it reported an
/// error. The sharding_constraint ops in `typedConstraints` assert nothing
/// and take their operand's sharding (mixed meshes: JAX's constraints that
/// name auto axes only, whose explicit axes are the value's type).
bool inferExplicitShardings(Module &module, DiagnosticEngine &diags,
                            const std::unordered_set<const Op *> &typedConstraints = {});

/// Whether the program's meshes have both explicit and auto axes
/// (LANGUAGE.md section 10).
bool hasMixedAxes(Module &module);

/// Mixed meshes: inferExplicitShardings on every sharding restricted to the
/// explicit axes (sharding_constraint asserts on them, reshard moves them and
/// may not name an auto axis; a constraint naming auto axes only keeps the
/// value's explicit axes and adds its own, as JAX's with_sharding_constraint
/// on a mixed mesh), then propagateShardings for the auto axes,
/// the explicit parts held fixed (written auto axes are constraints); the
/// auto_axes / explicit_axes regions are lowered away before propagation
/// (their body inlined between reshards). `checkOnly`: the explicit checks
/// only, nothing lowered or propagated. Fills `origins` when not null.
/// Returns false when it reported an error.
/// `decideAutoAxes`, when given, runs where propagation does (step 5), before
/// it, on a program without auto_axes / explicit_axes regions: the
/// auto-shard solver, given whether a value may take a layout (its explicit
/// axes are the value's explicit type) and how to name the ops the lowering
/// made (a region's edges, by the region) in its report.
using ExplicitTypeCheck = std::function<bool(const Value &, const Sharding &)>;
using OpDescription = std::function<std::string(const Op &)>;
using AutoAxesSolver =
    std::function<void(Module &, const ExplicitTypeCheck &, const OpDescription &)>;
bool inferMixedShardings(Module &module, DiagnosticEngine &diags, ShardingOrigins *origins,
                         bool checkOnly, const AutoAxesSolver &decideAutoAxes = nullptr);

/// Inlines every auto_axes / explicit_axes body between the reshards and
/// identities its boundary implies (what inferMixedShardings does before
/// propagation and undoes after it), for partitioning: every value must
/// have its sharding already.
void lowerAxesRegions(Module &module);

} // namespace shardc
