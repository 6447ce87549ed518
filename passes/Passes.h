// The passes of the pipeline: each stage declares its entry point, with its
// documentation, in its folder's public header (passes/<stage>/<Stage>.h).
// One table (allPasses) drives `shardc --list-passes`; the driver runs them in
// the order of that table.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "passes/explicit/ExplicitShardings.h"
#include "passes/export/Export.h"
#include "passes/infer_types/InferTypes.h"
#include "passes/partition/Partition.h"
#include "passes/propagate/Propagate.h"
#include "passes/verify/Verify.h"

#include <string>
#include <vector>

namespace shardc {

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
