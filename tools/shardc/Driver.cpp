// One shardc invocation: input -> chunks -> pipeline -> diagnostics/output.
#include "tools/shardc/Driver.h"

#include "frontend/SourceInput.h"
#include "ir/Visualize.h"
#include "pipeline/Pipeline.h"
#include "tools/shardc/Explain.h"
#include "tools/shardc/NativeHandle.h"
#include "tools/shardc/OutputFile.h"
#include "tools/shardc/RunProgram.h"
#include "tools/shardc/VerifyDiagnostics.h"

#include <cstdio>
#include <deque>
#include <optional>
#include <vector>

namespace shardc {
namespace {

/// Sends diagnostics to stderr: text as they come, or JSON all at once at
/// the end (one array for the whole run, so a tool can parse it).
class Reporter {
public:
  explicit Reporter(const DriverOptions &options) : options_(options) {}
  ~Reporter() {
    if (options_.json)
      std::fprintf(stderr, "%s\n", renderJson(all_).c_str());
  }

  void report(const std::deque<Diagnostic> &diags) {
    for (const Diagnostic &d : diags)
      report(d);
  }
  void report(const Diagnostic &d) {
    if (options_.json)
      all_.push_back(d);
    else
      std::fputs(renderText(d, RenderOptions{options_.color}).c_str(), stderr);
  }
  void error(Loc loc, std::string message) {
    report(Diagnostic{Severity::Error, loc, std::move(message), {}});
  }

private:
  const DriverOptions &options_;
  std::deque<Diagnostic> all_;
};

/// The Loc just past the last byte of `file`.
Loc endOf(const SourceFile &file) {
  const std::string &text = file.text();
  size_t lineStart = text.rfind('\n');
  lineStart = lineStart == std::string::npos ? 0 : lineStart + 1;
  return Loc{&file, file.lineCount(), static_cast<int>(text.size() - lineStart) + 1, 1};
}

} // namespace

namespace {

int runPipeline(const DriverOptions &options, PhaseTimes *times) {
  const std::string name = options.input == "-" ? "<stdin>" : options.input;
  std::deque<SourceFile> files; // every buffer a diagnostic may point into
  Reporter reporter(options);

  std::string error;
  std::optional<std::string> text = readSource(options.input, error);
  if (!text) {
    reporter.error(Loc{}, error);
    return 1;
  }
  if (std::optional<NotText> bad = findNonText(*text)) {
    // Show the text before the bad byte, with the caret just after it.
    const SourceFile &prefix = files.emplace_back(name, text->substr(0, bad->offset));
    reporter.error(endOf(prefix), "file is not text (" + bad->reason + ")");
    return 1;
  }

  std::vector<std::string> chunks =
      options.splitInputFile ? splitInput(*text) : std::vector<std::string>{std::move(*text)};
  bool failed = false;
  std::string output;
  size_t printed = 0;
  for (std::string &chunk : chunks) {
    const SourceFile &file = files.emplace_back(name, std::move(chunk));
    DiagnosticEngine diags;
    diags.setErrorLimit(options.verifyDiagnostics ? 0 : options.errorLimit);
    ShardingOrigins origins;      // filled by propagation for --explain
    CollectiveReport collectives; // filled by partition for --report=collectives
    AutoShardReport autoReport;   // filled by auto-shard for --report=auto-sharding
    AutoShardOptions autoOptions = options.autoShardOptions;
    const bool collectiveReport = options.report == "collectives";
    autoOptions.report = options.report == "auto-sharding" ? &autoReport : nullptr;
    CompileOptions compileOptions;
    // --simulate runs the partitioned (per-device) program; an executable
    // and --emit=llvm run the back half after it.
    // (Both sides string_view: a std::string temporary here would dangle.)
    const bool lowers = usesBackend(options);
    compileOptions.emit =
        options.simulate || lowers ? std::string_view("spmd") : std::string_view(options.emit);
    compileOptions.explicitMode = options.explicitMode;
    compileOptions.throughPropagation = options.visualize || options.explain;
    compileOptions.origins = options.explain ? &origins : nullptr;
    compileOptions.collectives = collectiveReport ? &collectives : nullptr;
    compileOptions.autoShard = options.autoShard ? &autoOptions : nullptr;
    // --report=auto-sharding runs through propagation (what the plan decided).
    if (autoOptions.report && compileOptions.emit.empty())
      compileOptions.emit = "sharded";
    compileOptions.times = times;
    std::unique_ptr<Backend> backend;
    if (lowers) {
      NativeOptions native = options.native;
      // --emit=llvm and --print-ir-after show every kernel as optimized,
      // which a kernel taken from the cache is not.
      const bool printsIR =
          options.emit == "llvm" || !options.printIRAfter.empty() || options.printIRAfterAll;
      native.useCache = native.useCache && !printsIR;
      native.keepIR = printsIR;
      native.releaseScratch = options.autoShard && autoOptions.memoryBudget.has_value();
      backend = makeNativeBackend(native, name, options.output);
      compileOptions.backend = backend.get();
      compileOptions.buildExecutable = options.buildExecutable;
    }
    compileOptions.printIRAfter = options.printIRAfter;
    compileOptions.printIRAfterAll = options.printIRAfterAll;
    if (!options.printIRAfter.empty() || options.printIRAfterAll)
      compileOptions.dumpIR = [](const std::string &ir) { std::fputs(ir.c_str(), stderr); };
    std::unique_ptr<Module> module = compile(file, diags, compileOptions);
    if (backend && times && options.buildExecutable && module && !diags.hasErrors())
      times->addNote(backend->kernelSummary());
    if (options.verifyDiagnostics) {
      DiagnosticEngine mismatches;
      failed |= !verifyDiagnostics(file, diags.diagnostics(), mismatches);
      reporter.report(mismatches.diagnostics());
    } else {
      failed |= !module || diags.hasErrors();
      reporter.report(diags.diagnostics());
    }
    if (module && !failed && (options.interpret || options.simulate)) {
      PhaseTimer timer(times, options.interpret ? "interpret" : "simulate");
      DiagnosticEngine runDiags;
      failed |= !runProgram(*module, options.run, runDiags);
      reporter.report(runDiags.diagnostics());
    }
    if (module && !options.emit.empty()) {
      if (printed++ > 0)
        output.append(kSplitMarker).append("\n");
      PhaseTimer timer(times, "print");
      output += options.emit == "llvm" ? backend->printIR() : emitModule(*module, options.emit);
    }
    if (module && options.visualize) {
      if (printed++ > 0)
        output.append(kSplitMarker).append("\n");
      PhaseTimer timer(times, "print");
      output += visualizeModule(*module, VisualizeOptions{options.visualizeColor});
    }
    if (module && options.explain) {
      if (printed++ > 0)
        output.append(kSplitMarker).append("\n");
      PhaseTimer timer(times, "print");
      output += explainModule(*module, options.explicitMode ? nullptr : &origins);
    }
    if (module && !options.report.empty()) {
      if (printed++ > 0)
        output.append(kSplitMarker).append("\n");
      PhaseTimer timer(times, "print");
      output += collectiveReport ? renderCollectiveReport(collectives)
                                 : formatAutoShardReport(autoReport);
    }
    if (options.exitsAfter && &chunk == &chunks.back())
      static_cast<void>(module.release()); // the process ends: no need to free it
  }
  if (failed ||
      (options.emit.empty() && !options.visualize && !options.explain && options.report.empty()))
    return failed ? 1 : 0;

  PhaseTimer writeTimer(times, "print");
  error = writeOutput(options.output, output);
  if (!error.empty()) {
    reporter.error(Loc{}, error);
    return 1;
  }
  return 0;
}

} // namespace

int runDriver(const DriverOptions &options) {
  if (!options.timePasses)
    return runPipeline(options, nullptr);
  PhaseTimes times;
  int status = runPipeline(options, &times);
  std::fputs(times.render().c_str(), stderr);
  return status;
}

} // namespace shardc
