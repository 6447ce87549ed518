// shardc's auto-sharding flags: parsing and their usage checks.
#include "tools/shardc/AutoShardFlags.h"

namespace shardc {

void addAutoShardFlags(CLI::App &app, DriverOptions &options) {
  app.add_flag("--auto-shard", options.autoShard,
               "choose the shardings the program leaves out by an ILP over each op's strategies "
               "(compute + resharding time under a memory budget)");
  app.add_option_function<std::string>(
         "--memory-budget",
         [&options](const std::string &text) {
           std::optional<int64_t> bytes = parseByteSize(text);
           if (!bytes)
             throw CLI::ValidationError("--memory-budget",
                                        "expected a positive byte count such as 1048576, 512MiB "
                                        "or 2GiB, got '" +
                                            text + "'");
           options.autoShardOptions.memoryBudget = *bytes;
         },
         "with --auto-shard: bytes per device (suffixes KiB, MiB, GiB)")
      ->type_name("BYTES");
  app.add_option("--cost-model", options.autoShardOptions.costModelPath,
                 "with --auto-shard: the machine's rates as JSON (default: built in)")
      ->type_name("FILE.json");
  app.add_option("--solver-time-limit", options.autoShardOptions.timeLimitSeconds,
                 "with --auto-shard: seconds before the best plan found is used")
      ->check(CLI::PositiveNumber)
      ->capture_default_str()
      ->type_name("SECONDS");
}

void checkAutoShardFlags(const CLI::App &app, const DriverOptions &options) {
  if (options.autoShard)
    return;
  for (const char *flag : {"--memory-budget", "--cost-model", "--solver-time-limit"})
    if (app.count(flag) > 0)
      throw CLI::ValidationError(flag, "goes with --auto-shard");
  if (options.report == "auto-sharding")
    throw CLI::ValidationError("--report", "auto-sharding goes with --auto-shard");
}

} // namespace shardc
