// shardc's auto-sharding flags (LANGUAGE.md section 11), kept out of main.cpp
// so that the driver stays a short list of options.
#pragma once

#include "tools/shardc/Driver.h"

#include <CLI/CLI.hpp>

namespace shardc {

/// Adds --auto-shard, --memory-budget=BYTES, --cost-model=FILE.json,
/// --solver-time-limit=SECONDS and --solver-gap=PERCENT to `app`, writing
/// into `options`. A bad byte count, time limit or gap is a usage error
/// (exit 2).
void addAutoShardFlags(CLI::App &app, DriverOptions &options);

/// After parsing: the auto-sharding flags other than --auto-shard, and
/// --report=auto-sharding, need --auto-shard. Throws CLI::ValidationError.
void checkAutoShardFlags(const CLI::App &app, const DriverOptions &options);

} // namespace shardc
