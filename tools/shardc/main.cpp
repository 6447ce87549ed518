// shardc, the command-line driver (../shared/LANGUAGE.md section 8). It parses
// options and hands them to the driver library; the stages themselves are
// listed in Pipeline.cpp. It is linked twice: shardc, without LLVM, and
// shardc-llvm, with it, to which shardc hands the back half (NativeHandle.h).
//
// Exit codes: 0 success, 1 the input program is wrong (or unreadable),
// 2 bad command-line usage, 3 an internal error (a bug in shardc).
#include "pipeline/Pipeline.h"
#include "tools/shardc/AutoShardFlags.h"
#include "tools/shardc/Driver.h"
#include "tools/shardc/NativeHandle.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <unistd.h>

#ifdef SHARDC_MIMALLOC
#include <mimalloc.h>
#endif

namespace {

#ifdef SHARDC_SANITIZER_BUILD
constexpr bool kSanitizerBuild = true;
#else
constexpr bool kSanitizerBuild = false;
#endif

std::string versionText() {
  return fmt::format("shardc version {}\nbuild: {}\npipeline: {}; --emit={}\n{}", SHARDC_VERSION,
                     SHARDC_BUILD_INFO, shardc::passNames(), fmt::join(shardc::emitKinds(), "|"),
                     shardc::runtimeLocationText());
}

/// Colour by default only on a terminal, and never when NO_COLOR is set
/// (https://no-color.org); --color and --no-color override both.
bool defaultColor(int fd = STDERR_FILENO) {
  const char *noColor = std::getenv("NO_COLOR");
  return ::isatty(fd) && !(noColor && *noColor);
}

/// Parses the command line and runs the driver; returns the exit code.
int run(int argc, char **argv) {
  shardc::DriverOptions options;
  bool verifyOnly = false;
  bool listPassesFlag = false;
  bool color = false;
  std::string format = "text";

  CLI::App app{"shardc: a compiler for sharded tensor programs (.shd)", "shardc"};
  // Computed only when asked for: it says where the runtime is, which the
  // back end finds (tools/shardc/NativeHandle.h).
  app.set_version_flag("--version", std::function<std::string()>(versionText),
                       "print the version and build, then exit");
  app.set_help_flag("-h,--help", "print this help, then exit");
  app.add_option("FILE", options.input, "the .shd source file ('-' reads stdin)");
  CLI::Option *verifyOnlyOpt = app.add_flag(
      "--verify-only", verifyOnly, "parse, type-check and verify; print nothing on success");
  CLI::Option *emitOpt = app.add_option("--emit", options.emit, "print the program after a stage")
                             ->check(CLI::IsMember(shardc::emitKinds()));
  CLI::Option *outputOpt =
      app.add_option("-o", options.output,
                     "the executable to build; with --emit, --visualize, --explain or --report: "
                     "where they write ('-' = stdout, the default)");
  CLI::Option *visualizeOpt =
      app.add_flag("--visualize", options.visualize,
                   "draw which devices hold which block of each sharded value (stdout or -o)");
  CLI::Option *explainOpt =
      app.add_flag("--explain,--debug-origins", options.explain,
                   "after propagation, say where each axis of each value's sharding came from "
                   "(stdout or -o)");
  CLI::Option *reportOpt =
      app.add_option("--report", options.report,
                     "collectives: every collective partitioning inserted, with bytes per "
                     "device; auto-sharding: the solver's plan (stdout or -o)")
          ->check(CLI::IsMember({"collectives", "auto-sharding"}));
  shardc::addAutoShardFlags(app, options);
  CLI::Option *verifyDiagsOpt =
      app.add_flag("--verify-diagnostics", options.verifyDiagnostics,
                   "check diagnostics against the file's `// expected-error {{...}}` comments");
  CLI::Option *targetCpuOpt =
      app.add_option("--target-cpu", options.native.targetCpu,
                     "the CPU generated code is tuned for and may use (an LLVM CPU name)")
          ->check(shardc::checkTargetCpu)
          ->capture_default_str();
  CLI::Option *noCacheOpt = app.add_flag_function(
      "--no-cache", [&options](int64_t) { options.native.useCache = false; },
      "compile every kernel, neither reading nor writing the kernel cache "
      "($SHARDC_CACHE_DIR, else $XDG_CACHE_HOME/shardc or ~/.cache/shardc)");
  CLI::Option *flushOpt = app.add_flag(
      "--flush-denormals", options.native.flushDenormals,
      "the executable computes with denormal floats flushed to zero (x86 FTZ and DAZ), as JAX "
      "and TensorFlow do on CPU: no slow path when values underflow (softmax of large scores), "
      "at the cost of IEEE results below the smallest normal float");
  flushOpt->check([](const std::string &) { return shardc::checkFlushDenormals(); });
  app.add_flag("--time-passes", options.timePasses,
               "when the run ends, print the wall time of every phase on stderr");
  app.add_flag("--explicit", options.explicitMode,
               "JAX sharding in types: every sharding computed by its op's rule, no propagation");
  app.add_flag("--split-input-file", options.splitInputFile,
               "compile each `// -----` chunk of the file on its own");
  app.add_flag("--list-passes", listPassesFlag, "list the passes in pipeline order, then exit");
  app.add_option("--print-ir-after", options.printIRAfter,
                 "after stage NAME (repeatable), print the IR on stderr, as mlir-opt does")
      ->check(CLI::IsMember(shardc::stagesWithIR()));
  app.add_flag("--print-ir-after-all", options.printIRAfterAll,
               "print the IR on stderr after every stage that has IR to show");
  CLI::Option *colorOpt =
      app.add_flag("--color,!--no-color", color,
                   "colour diagnostics and --visualize (default: when their stream is a terminal "
                   "and NO_COLOR is unset)");
  app.add_option("--diagnostics-format", format, "how diagnostics are printed")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app.add_option("--error-limit", options.errorLimit,
                 "stop reporting after N errors (0 = no limit)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  CLI::Option *interpretOpt =
      app.add_flag("--interpret", options.interpret,
                   "run @main with the reference interpreter (global program)");
  CLI::Option *simulateOpt = app.add_flag(
      "--simulate", options.simulate, "partition, then run every device's program in one process");
  app.add_option("--input", options.run.inputs, "NAME=FILE.npy: the value of parameter %NAME")
      ->check([](const std::string &v) {
        return v.find('=') == 0 || v.find('=') == std::string::npos ? "expected NAME=FILE.npy" : "";
      });
  app.add_option("--output-dir", options.run.outputDir,
                 "where --interpret/--simulate write result0.npy, ... (default: a summary)");
  app.add_option("--random-inputs", options.run.randomSeed,
                 "SEED: random values for the parameters without --input");
  for (CLI::Option *other : {verifyOnlyOpt, emitOpt, outputOpt, visualizeOpt, explainOpt,
                             verifyDiagsOpt, app.get_option("--split-input-file")})
    interpretOpt->excludes(other), simulateOpt->excludes(other);
  interpretOpt->excludes(simulateOpt);
  verifyOnlyOpt->excludes(emitOpt)->excludes(verifyDiagsOpt);
  reportOpt->excludes(verifyOnlyOpt)->excludes(emitOpt)->excludes(verifyDiagsOpt);
  reportOpt->excludes(visualizeOpt)->excludes(explainOpt);
  visualizeOpt->excludes(verifyOnlyOpt)->excludes(emitOpt)->excludes(verifyDiagsOpt);
  explainOpt->excludes(verifyOnlyOpt)
      ->excludes(emitOpt)
      ->excludes(verifyDiagsOpt)
      ->excludes(visualizeOpt);

  try {
    app.parse(argc, argv);
    if (listPassesFlag) {
      fmt::print("{}", shardc::passTable());
      return 0;
    }
    if (app.count("FILE") == 0)
      throw CLI::RequiredError("FILE");
    shardc::checkAutoShardFlags(app, options);
    bool prints =
        !options.emit.empty() || options.visualize || options.explain || !options.report.empty();
    bool runs = options.interpret || options.simulate;
    options.buildExecutable =
        outputOpt->count() > 0 && !prints && !runs && !verifyOnly && !options.verifyDiagnostics;
    if (options.buildExecutable && options.output == "-")
      throw CLI::ValidationError("-o",
                                 "an executable cannot be written to stdout: give a file name");
    if (options.buildExecutable && options.splitInputFile)
      throw CLI::ValidationError("--split-input-file", "an executable is built from one program");
    if (targetCpuOpt->count() > 0 && !options.buildExecutable && options.emit != "llvm")
      throw CLI::ValidationError("--target-cpu", "goes with -o PROG or --emit=llvm");
    if (noCacheOpt->count() > 0 && !options.buildExecutable)
      throw CLI::ValidationError("--no-cache", "goes with -o PROG");
    if (flushOpt->count() > 0 && !options.buildExecutable && options.emit != "llvm")
      throw CLI::ValidationError("--flush-denormals", "goes with -o PROG or --emit=llvm");
    if (!verifyOnly && !options.verifyDiagnostics && !prints && !runs && !options.buildExecutable)
      throw CLI::ValidationError("nothing to do: give -o PROG, --verify-only, --emit=ir, "
                                 "--interpret or --verify-diagnostics");
    if (!runs &&
        (!options.run.inputs.empty() || !options.run.outputDir.empty() || options.run.randomSeed))
      throw CLI::ValidationError("--input, --output-dir and --random-inputs go with "
                                 "--interpret or --simulate");
  } catch (const CLI::ParseError &e) {
    app.exit(e);
    return e.get_exit_code() == 0 ? 0 : 2;
  }

  options.color = colorOpt->count() > 0 ? color : defaultColor();
  options.json = format == "json";
  // --visualize draws on stdout or -o: the same rule, for that stream.
  options.visualizeColor =
      colorOpt->count() > 0 ? color : options.output == "-" && defaultColor(STDOUT_FILENO);
  // A sanitizer build frees everything, so that LeakSanitizer can tell a
  // leak from the program left to the operating system.
  options.exitsAfter = !kSanitizerBuild;
  shardc::handOverIfBackend(options);
  return shardc::runDriver(options);
}

} // namespace

/// How shardc's allocator (mimalloc) takes memory from the kernel. shardc
/// runs for seconds and allocates hundreds of megabytes at 100,000 ops:
/// - It keeps what it freed. By default mimalloc hands freed pages back to
///   the kernel 25 ms later (decommit), so the passes, which allocate after
///   the parse tree is freed, faulted the same memory in again page by page:
///   at 100,000 ops 5,200 faults more in propagation and 6,200 in
///   partitioning (more on a busy machine: the delay is in wall time).
/// - It takes memory in 2 MiB pages where the kernel offers them
///   (transparent huge pages on madvise): a 100,000-op compile to
///   --emit=spmd then takes 3,400 page faults instead of 93,000, and where
///   a fault is expensive (a virtual machine whose kernel traps on each)
///   it ran in 1.95 s instead of 2.9 s. The peak grows by at most a
///   partly used 2 MiB page per segment.
/// MIMALLOC_ALLOW_DECOMMIT and MIMALLOC_LARGE_OS_PAGES, when set, still
/// decide.
static void configureAllocator() {
#ifdef SHARDC_MIMALLOC
  if (!std::getenv("MIMALLOC_ALLOW_DECOMMIT"))
    mi_option_disable(mi_option_allow_decommit);
  if (!std::getenv("MIMALLOC_LARGE_OS_PAGES"))
    mi_option_enable(mi_option_large_os_pages);
#endif
}

int main(int argc, char **argv) {
  configureAllocator();
  shardc::rememberCommandLine(argc, argv);
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "shardc: internal error: %s\n", e.what());
    return 3;
  }
}
