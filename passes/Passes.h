// Every pass of the pipeline: each stage declares its entry point, with its
// documentation, in its folder's public header (passes/<stage>/<Stage>.h).
// The order they run in is pipeline/Pipeline.cpp's list of stages.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "passes/auto_shard/AutoShard.h"
#include "passes/explicit/ExplicitShardings.h"
#include "passes/export/Export.h"
#include "passes/import/Import.h"
#include "passes/infer_types/InferTypes.h"
#include "passes/inline_calls/InlineCalls.h"
#include "passes/partition/Partition.h"
#include "passes/propagate/Propagate.h"
#include "passes/verify/Verify.h"
