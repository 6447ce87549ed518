// The export stage: one closed layout per value before partitioning.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"

namespace shardc {

/// export: closes every sharding (open dims closed, priorities dropped) and
/// gives a value without one the replicated sharding of the program's only
/// mesh, so that every value has exactly one layout for partitioning.
bool exportShardings(Module &module, DiagnosticEngine &diags);

} // namespace shardc
