// The passes of the pipeline, each declared here with its documentation.
// One table (allPasses) drives `shardc --list-passes`; the driver runs them in
// the order of that table.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"

#include <string>
#include <vector>

namespace shardc {

/// infer-types: infers every op result's tensor type from its operands and
/// attributes (numpy/ONNX broadcasting, matmul and einsum dims, reductions
/// with keep_dims, reshape element count, transpose perm, concat, slice and
/// pad bounds, dtype rules) and checks any written result type against it.
/// Returns false when it reported an error.
bool inferTypes(Module &module, DiagnosticEngine &diags);

/// verify-shardings: checks every invariant of the seed representation on
/// meshes, shardings and manual_computation ops, in Shardy's order, reporting
/// the first error per sharding. Runs after infer-types (ranks are known).
/// Returns false when it reported an error.
bool verifyShardings(Module &module, DiagnosticEngine &diags);

/// propagate-shardings: completes every value's sharding the way OpenXLA
/// Shardy's default pipeline does: factor-based op rules (ShardingRules.h),
/// user priorities (p0 to the whole program first, then p1, ...), op
/// priorities, aggressive conflict resolution, open dims grow and closed
/// dims never change, explicitly replicated axes are never used, shardings
/// never cross meshes. Afterwards every value carries a closed sharding
/// without priorities (what --emit=sharded prints). Returns false when it
/// reported an error.
bool propagateShardings(Module &module, DiagnosticEngine &diags);

/// explicit-shardings (`--explicit`, replaces propagate-shardings): JAX
/// sharding in types. Every value's sharding is computed in program order by
/// its op's rule from its operands' closed shardings: unannotated parameters
/// are replicated on the program's single non-maximal mesh; elementwise ops
/// take the per-dim consensus of their operands; matmul/einsum keep batch and
/// free dims (a sharded contracting dim needs an out_sharding); reductions
/// drop reduced dims; reshape allows one split or merge of unsharded dims;
/// nullary ops are replicated; sharding_constraint asserts, reshard changes.
/// A written out_sharding overrides the rule and resolves its ambiguities.
/// Open dims and priorities are errors, and so is every ambiguous or illegal
/// result, with a note giving a concrete out_sharding or reshard. Afterwards
/// every value carries a closed sharding. Returns false when it reported an
/// error.
bool inferExplicitShardings(Module &module, DiagnosticEngine &diags);

/// export: closes every sharding (open dims closed, priorities dropped) and
/// gives a value without one the replicated sharding of the program's only
/// mesh, so that every value has exactly one layout for partitioning.
bool exportShardings(Module &module, DiagnosticEngine &diags);

struct CollectiveReport;
/// partition: rewrites each function into its per-device (SPMD) form: one
/// manual_computation over every axis per run of ops on one mesh, local
/// (padded) shapes, the collectives the reshard planner chose, padding
/// masks before reductions and contractions. A reshard across meshes stays
/// a global op between runs. Records every collective in `report` when
/// given. An op it cannot partition is an error naming the op and why.
bool partitionModule(Module &module, DiagnosticEngine &diags, CollectiveReport *report);
bool partitionModule(Module &module, DiagnosticEngine &diags);

using PassFn = bool (*)(Module &, DiagnosticEngine &);

struct PassInfo {
  const char *name;
  const char *summary;
  const char *description;
  /// Runs the pass; null for "parse", the driver's own first step.
  PassFn run = nullptr;
  /// Set on a pass that runs only with --explicit, in place of the pass
  /// named here.
  const char *explicitReplaces = nullptr;
};

/// Every pass, in pipeline order; the pipeline runs them from this table.
const std::vector<PassInfo> &allPasses();

} // namespace shardc
