// shardc's auto-sharding flags: parsing and their usage checks.
#include "tools/shardc/AutoShardFlags.h"

#include <cstdlib>

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
  app.add_option_function<std::string>(
         "--solver-gap",
         [&options](const std::string &text) {
           char *end = nullptr;
           double percent = std::strtod(text.c_str(), &end);
           if (text.empty() || *end != '\0' || !(percent >= 0 && percent <= 100))
             throw CLI::ValidationError("--solver-gap",
                                        "expected a percentage from 0 to 100, got '" + text + "'");
           options.autoShardOptions.relativeGap = percent / 100;
         },
         "with --auto-shard: stop when the plan is proven within this percentage of the "
         "optimum (0: prove it optimal) [1]")
      ->type_name("PERCENT");
}

void checkAutoShardFlags(const CLI::App &app, const DriverOptions &options) {
  if (options.autoShard)
    return;
  for (const char *flag :
       {"--memory-budget", "--cost-model", "--solver-time-limit", "--solver-gap"})
    if (app.count(flag) > 0)
      throw CLI::ValidationError(flag, "goes with --auto-shard");
  if (options.report == "auto-sharding")
    throw CLI::ValidationError("--report", "auto-sharding goes with --auto-shard");
}

} // namespace shardc
