// shardc-difftest: generates random programs (RandomProgram.h) and checks,
// for each seed, that the compiler accepts them and that every stage agrees:
//   1. the program verifies and propagation completes it (the generator only
//      writes valid programs, so any error is a bug on one side or the other);
//   2. propagation is idempotent: the --emit=sharded text, compiled again,
//      prints the same text;
//   3. the partitioned program, run for every device (--simulate), computes
//      what the reference interpreter computes on the global program.
// A failing seed prints its program, so it can be replayed with
// `shardc-difftest --seeds N:N+1 --print`.
#include "tests/diff/Differential.h"
#include "tests/diff/RandomProgram.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <fstream>

namespace {

struct Range {
  uint64_t begin = 0, end = 200;
};

bool parseRange(const std::string &text, Range &range) {
  size_t colon = text.find(':');
  try {
    if (colon == std::string::npos) {
      range.begin = std::stoull(text);
      range.end = range.begin + 1;
    } else {
      range.begin = std::stoull(text.substr(0, colon));
      range.end = std::stoull(text.substr(colon + 1));
    }
  } catch (const std::exception &) {
    return false;
  }
  return range.begin < range.end;
}

} // namespace

int main(int argc, char **argv) {
  using namespace shardc::difftest;
  std::string seeds = "0:200";
  std::string keepDir;
  std::string writeDir;
  bool print = false;
  bool quiet = false;
  ProgramOptions programOptions;
  CheckOptions checkOptions;

  CLI::App app{"shardc-difftest: random programs, compiled and run both ways", "shardc-difftest"};
  app.add_option("--seeds", seeds, "seeds to run, BEGIN:END (END excluded) or one seed")
      ->capture_default_str();
  app.add_option("--max-ops", programOptions.maxOps, "largest number of ops per program")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--max-dim", programOptions.maxDim, "largest extent of a dimension")
      ->check(CLI::Range(2, 4096))
      ->capture_default_str();
  app.add_flag("--no-simulate", checkOptions.skipSimulation,
               "only check that programs compile and propagate (no interpreter run)");
  app.add_flag("--print", print, "print every program before checking it");
  app.add_flag("-q,--quiet", quiet, "print failures and the summary only");
  app.add_option("--keep-failing", keepDir, "write each failing program to DIR/seed-N.shd");
  app.add_option("--write-programs", writeDir,
                 "write every program to DIR/seed-N.shd and check nothing (the end-to-end "
                 "tests build and run them as executables)");
  CLI11_PARSE(app, argc, argv);

  Range range;
  if (!parseRange(seeds, range)) {
    std::fprintf(stderr, "shardc-difftest: --seeds wants BEGIN:END with BEGIN < END: '%s'\n",
                 seeds.c_str());
    return 2;
  }

  auto start = std::chrono::steady_clock::now();
  uint64_t passed = 0, failed = 0;
  for (uint64_t seed = range.begin; seed < range.end; ++seed) {
    std::string program = generateProgram(seed, programOptions);
    if (print)
      fmt::print("// ---- seed {}\n{}", seed, program);
    if (!writeDir.empty()) {
      std::string path = fmt::format("{}/seed-{}.shd", writeDir, seed);
      if (!(std::ofstream(path) << program)) {
        std::fprintf(stderr, "shardc-difftest: cannot write %s\n", path.c_str());
        return 1;
      }
      ++passed;
      continue;
    }
    std::string failure = checkProgram(program, fmt::format("seed-{}.shd", seed), checkOptions);
    if (failure.empty()) {
      ++passed;
      continue;
    }
    ++failed;
    fmt::print("FAIL seed {}: {}\n---- program (replay: --seeds {})\n{}----\n", seed, failure, seed,
               program);
    if (!keepDir.empty())
      std::ofstream(fmt::format("{}/seed-{}.shd", keepDir, seed)) << program;
    std::fflush(stdout);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!quiet || failed)
    fmt::print("seeds {}:{} in {:.1f} s\n", range.begin, range.end, seconds);
  fmt::print("{} passed, {} failed\n", passed, failed);
  return failed ? 1 : 0;
}
