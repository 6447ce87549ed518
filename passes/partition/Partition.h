// The partition stage: the global program to its per-device (SPMD) form.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "passes/partition/PartitionReport.h"

namespace shardc {

/// What partitioning does beyond computing each op in its operands' layout.
/// A plan made under an auto-shard memory budget wants neither: the solver
/// priced each op in that layout and counts a consumer's resharded copy at
/// that consumer only (a reused copy lives to its last use).
struct PartitionOptions {
  /// A value resharded to one layout is resharded once per
  /// manual_computation and that copy serves every later use (GSPMD's
  /// reshard cache): three projections of one gathered input gather it once.
  bool reuseReshards = true;
  /// Each op is computed the way that sends the fewest bytes: its operands'
  /// layouts, or another operand's or its result's (partition_ops.cpp).
  bool cheapestAssignment = true;
};

/// partition: rewrites each function into its per-device (SPMD) form: one
/// manual_computation over every axis per run of ops on one mesh, local
/// (padded) shapes, the collectives the reshard planner chose, padding
/// masks before reductions and contractions. A reshard across meshes stays
/// a global op between runs. Records every collective in `report` when
/// given. An op it cannot partition throws InternalError naming the op and
/// why: every program the checks accept must partition.
bool partitionModule(Module &module, DiagnosticEngine &diags, CollectiveReport *report,
                     const PartitionOptions &options = {});
bool partitionModule(Module &module, DiagnosticEngine &diags);

} // namespace shardc
