// The propagate-shardings stage: Shardy's propagation of partial shardings.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "passes/propagate/ShardingOrigins.h"

namespace shardc {

/// propagate-shardings: completes every value's sharding the way OpenXLA
/// Shardy's default pipeline does: factor-based op rules (rules/ShardingRules.h),
/// user priorities (p0 to the whole program first, then p1, ...), op
/// priorities, aggressive conflict resolution, open dims grow and closed
/// dims never change, explicitly replicated axes are never used, shardings
/// never cross meshes. Afterwards every value carries a closed sharding
/// without priorities (what --emit=sharded prints). Returns false when it
/// reported an error.
bool propagateShardings(Module &module, DiagnosticEngine &diags);
/// The same, also filling `origins` (when not null) with the origin of every
/// axis of every value and function result (--explain, hover).
bool propagateShardings(Module &module, DiagnosticEngine &diags, ShardingOrigins *origins);

} // namespace shardc
