// The compiler pipeline, one stage after another (STYLE point 1): reading
// compile() tells a newcomer what shardc does to a program and in what order.
// `--emit=NAME` keys off the same table of stages.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "passes/ShardingOrigins.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace shardc {

/// What `--emit=` can print in this build, in pipeline order. Later stages
/// (sharded, spmd, llvm) add their names here when they land.
std::vector<std::string> emitKinds();

/// Runs the pipeline on one source buffer: parse, then every pass in the
/// order of allPasses(), as far as `emit` needs (all of it when `emit` is
/// empty, as for --verify-only). Stops after the first stage that reports an
/// error and returns null; diagnostics are in `diags` either way.
/// `explicitMode` (--explicit) runs explicit-shardings (JAX sharding in types)
/// in place of propagate-shardings, also for --verify-only.
/// `origins` (--explain) runs through propagate-shardings, which records in
/// it where each axis came from (nothing is recorded with --explicit).
std::unique_ptr<Module> compile(const SourceFile &file, DiagnosticEngine &diags,
                                std::string_view emit = {}, bool explicitMode = false,
                                ShardingOrigins *origins = nullptr);

/// Prints `module` in the form `emit` names (one of emitKinds()).
std::string emitModule(const Module &module, std::string_view emit);

} // namespace shardc
