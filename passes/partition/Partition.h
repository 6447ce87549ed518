// The partition stage: the global program to its per-device (SPMD) form.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "passes/partition/PartitionReport.h"

namespace shardc {

/// partition: rewrites each function into its per-device (SPMD) form: one
/// manual_computation over every axis per run of ops on one mesh, local
/// (padded) shapes, the collectives the reshard planner chose, padding
/// masks before reductions and contractions. A reshard across meshes stays
/// a global op between runs. Records every collective in `report` when
/// given. An op it cannot partition throws InternalError naming the op and
/// why: every program the checks accept must partition.
bool partitionModule(Module &module, DiagnosticEngine &diags, CollectiveReport *report);
bool partitionModule(Module &module, DiagnosticEngine &diags);

} // namespace shardc
