// The verify-shardings stage: every invariant of the seed representation.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"

namespace shardc {

/// verify-shardings: checks every invariant of the seed representation on
/// meshes, shardings and manual_computation ops, in Shardy's order, reporting
/// the first error per sharding. Runs after infer-types (ranks are known).
/// Returns false when it reported an error.
bool verifyShardings(Module &module, DiagnosticEngine &diags);

} // namespace shardc
