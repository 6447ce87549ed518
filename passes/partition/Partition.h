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
///
/// With `reuseReshards`, a value resharded to one layout is resharded once
/// per manual_computation and that copy serves every later use (GSPMD's
/// reshard cache): three projections of one gathered input gather it once.
/// The copy then lives to its last use, which a plan made under a memory
/// budget does not count (it counts a consumer's copy at its consumer):
/// the pipeline turns reuse off there.
bool partitionModule(Module &module, DiagnosticEngine &diags, CollectiveReport *report,
                     bool reuseReshards = true);
bool partitionModule(Module &module, DiagnosticEngine &diags);

} // namespace shardc
