// shardc-difftest: generates random programs (RandomProgram.h) and checks,
// for each seed, that the compiler accepts them and that every stage agrees:
//   1. the program verifies (else the generator is wrong: invalid-program)
//      and propagation completes it;
//   2. propagation is idempotent: the --emit=sharded text, compiled again,
//      prints the same text;
//   3. the partitioned program, run for every device (--simulate), computes
//      what the reference interpreter computes on the global program;
//   4. on every K-th seed (--mpi-every K), the executable built by shardc
//      and run under mpiexec at the program's device count computes it too.
// Failures are counted by kind (Differential.h); a failing seed prints its
// program and replays with `shardc-difftest --seeds N --verbose`.
#include "tests/diff/Differential.h"
#include "tests/diff/RandomProgram.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

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

/// shardc next to this tool in the build tree (tests/diff/ -> tools/shardc/).
std::string defaultShardc(const char *argv0) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path self = fs::canonical("/proc/self/exe", ec);
  if (ec)
    self = argv0;
  return (self.parent_path() / ".." / ".." / "tools" / "shardc" / "shardc").lexically_normal();
}

} // namespace

int main(int argc, char **argv) {
  using namespace shardc::difftest;
  std::string seeds = "0:200";
  std::string keepDir;
  std::string writeDir;
  bool print = false;
  bool quiet = false;
  bool verbose = false;
  uint64_t mpiEvery = 25;
  ProgramOptions programOptions;
  CheckOptions checkOptions;
  checkOptions.shardc = defaultShardc(argv[0]);
  checkOptions.workDir = (std::filesystem::temp_directory_path() / "shardc-difftest").string();

  CLI::App app{"shardc-difftest: random programs, compiled and run three ways", "shardc-difftest"};
  app.add_option("--seeds", seeds, "seeds to run, BEGIN:END (END excluded) or one seed")
      ->capture_default_str();
  app.add_option("--max-ops", programOptions.maxOps, "largest number of ops per program")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--max-dim", programOptions.maxDim, "largest extent of a dimension")
      ->check(CLI::Range(2, 4096))
      ->capture_default_str();
  app.add_option("--axis-types", programOptions.axisTypes,
                 "the chance that a program's mesh has axis types (explicit axes, auto_axes "
                 "and explicit_axes regions); 1: every program with mesh axes")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_flag("--auto-shard", checkOptions.autoShard,
               "compile with --auto-shard: the solver decides the shardings a program leaves "
               "out (then every check as without it)");
  app.add_flag("--no-simulate", checkOptions.skipSimulation,
               "only check that programs compile and propagate (no interpreter run)");
  app.add_option("--mpi-every", mpiEvery,
                 "also build and run under MPI every K-th seed (seed % K == 0); 0: never")
      ->capture_default_str();
  app.add_option("--shardc", checkOptions.shardc, "the shardc that builds the executables")
      ->capture_default_str();
  app.add_option("--mpiexec", checkOptions.mpiexec, "the MPI launcher")->capture_default_str();
  app.add_option("--work-dir", checkOptions.workDir,
                 "where executables and their results go (failing ones are kept)")
      ->capture_default_str();
  app.add_flag("--print", print, "print every program before checking it");
  app.add_flag("-v,--verbose", verbose, "print every program and its outcome");
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
  if (mpiEvery && !writeDir.empty())
    mpiEvery = 0;
  if (mpiEvery && !checkOptions.skipSimulation && !std::filesystem::exists(checkOptions.shardc)) {
    std::fprintf(stderr, "shardc-difftest: no shardc at %s: give --shardc, or --mpi-every 0\n",
                 checkOptions.shardc.c_str());
    return 2;
  }

  auto start = std::chrono::steady_clock::now();
  uint64_t passed = 0, failed = 0;
  std::map<FailureKind, std::vector<uint64_t>> byKind;
  std::map<int, uint64_t> mpiRuns; // ranks -> programs run under MPI
  for (uint64_t seed = range.begin; seed < range.end; ++seed) {
    std::string program = generateProgram(seed, programOptions);
    if (print || verbose)
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
    CheckOptions options = checkOptions;
    if (!mpiEvery || seed % mpiEvery != 0)
      options.shardc.clear();
    CheckResult result = checkProgram(program, fmt::format("seed-{}.shd", seed), options);
    if (result.ranks)
      ++mpiRuns[result.ranks];
    if (result.kind == FailureKind::None) {
      ++passed;
      if (verbose)
        fmt::print("ok seed {}{}\n", seed,
                   result.ranks ? fmt::format(" (mpiexec -n {})", result.ranks) : "");
      continue;
    }
    ++failed;
    byKind[result.kind].push_back(seed);
    fmt::print("FAIL seed {} [{}]: {}\n---- program (replay: shardc-difftest --seeds {} "
               "--verbose{})\n{}----\n",
               seed, kindName(result.kind), result.message, seed,
               result.ranks || options.shardc.size() ? " --mpi-every 1" : "", program);
    if (!keepDir.empty())
      std::ofstream(fmt::format("{}/seed-{}.shd", keepDir, seed)) << program;
    std::fflush(stdout);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!quiet || failed)
    fmt::print("seeds {}:{} in {:.1f} s\n", range.begin, range.end, seconds);
  // The summary: one line per failure kind with its first seeds, and the
  // MPI sample by rank count (scripts/soak.sh adds these lines up).
  for (const auto &[kind, list] : byKind) {
    std::vector<uint64_t> first(list.begin(), list.begin() + std::min<size_t>(list.size(), 10));
    fmt::print("kind {} {} seeds {}\n", kindName(kind), list.size(), fmt::join(first, " "));
  }
  for (const auto &[ranks, count] : mpiRuns)
    fmt::print("mpi -n {} {}\n", ranks, count);
  fmt::print("{} passed, {} failed\n", passed, failed);
  return failed ? 1 : 0;
}
