// The checks of Differential.h, stage by stage; each failure names its stage
// and kind, and quotes the compiler's diagnostics.
#include "tests/diff/Differential.h"

#include "backend/interpreter/Interpreter.h"
#include "backend/interpreter/Npy.h"
#include "ir/Printer.h"
#include "passes/auto_shard/AutoShard.h"
#include "pipeline/Pipeline.h"

#include <fmt/format.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

namespace shardc::difftest {

const char *kindName(FailureKind kind) {
  switch (kind) {
  case FailureKind::None:
    return "pass";
  case FailureKind::Invalid:
    return "invalid-program";
  case FailureKind::Rejected:
    return "rejected";
  case FailureKind::Internal:
    return "internal-error";
  case FailureKind::Crash:
    return "crash";
  case FailureKind::MismatchSimulate:
    return "mismatch-simulate";
  case FailureKind::MismatchMpi:
    return "mismatch-mpi";
  case FailureKind::NotIdempotent:
    return "not-idempotent";
  }
  return "?";
}

namespace {

std::string renderAll(const DiagnosticEngine &diags) {
  std::string out;
  for (const Diagnostic &d : diags.diagnostics())
    out += renderText(d, RenderOptions{});
  return out;
}

/// Compiles `text` as far as `emit` and returns the module, or null with the
/// failure in `result`: `errorKind` for reported errors, Internal for an
/// exception (shardc's exit 3).
std::unique_ptr<Module> compileText(const SourceFile &file, std::string_view emit,
                                    FailureKind errorKind, CheckResult &result,
                                    const CheckOptions &options) {
  DiagnosticEngine diags;
  std::unique_ptr<Module> module;
  AutoShardOptions autoShard;
  CompileOptions compileOptions;
  compileOptions.emit = emit;
  // The global program (--emit=ir) is the reference: never auto-sharded.
  if (options.autoShard && emit != "ir")
    compileOptions.autoShard = &autoShard;
  try {
    module = compile(file, diags, compileOptions);
  } catch (const std::exception &e) {
    result = {FailureKind::Internal, fmt::format("--emit={}: internal error: {}", emit, e.what())};
    return nullptr;
  }
  if (!module)
    result = {errorKind, fmt::format("--emit={} failed:\n{}", emit, renderAll(diags))};
  return module;
}

/// Compares results; the first difference, or empty.
std::string compareResults(const std::vector<interp::Tensor> &expected,
                           const std::vector<interp::Tensor> &actual, double rtol, double atol) {
  if (expected.size() != actual.size())
    return fmt::format("result count differs: {} != {}", actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    std::string why;
    if (expected[i].type() != actual[i].type())
      return fmt::format("result {}: type {} != {}", i, actual[i].type().str(),
                         expected[i].type().str());
    if (!interp::allClose(actual[i], expected[i], rtol, atol, &why))
      return fmt::format("result {}: {}", i, why);
  }
  return "";
}

/// Runs a command line; its exit code (128 + the signal when killed), with
/// stdout and stderr in `output`.
int runCommand(const std::string &command, std::string &output) {
  FILE *pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe)
    return -1;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe))
    output.append(buffer, n);
  int status = pclose(pipe);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Builds the executable of `program` and runs it under MPI at its device
/// count on the inputs of seed 1; compares its results with `expected`.
CheckResult runMpi(const std::string &program, const std::string &name,
                   const std::vector<interp::Tensor> &expected, const CheckOptions &options) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(options.workDir) / fs::path(name).stem();
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::path source = dir / name, exe = dir / "prog", out = dir / "out";
  std::ofstream(source) << program;
  std::string log;
  int code = runCommand(fmt::format("'{}' '{}' -o '{}'{}", options.shardc, source.string(),
                                    exe.string(), options.autoShard ? " --auto-shard" : ""),
                        log);
  if (code == 1)
    return {FailureKind::Rejected, "shardc -o (exit 1):\n" + log};
  if (code != 0)
    return {code == 3 ? FailureKind::Internal : FailureKind::Crash,
            fmt::format("shardc -o (exit {}):\n{}", code, log)};
  std::string help;
  std::smatch match;
  if (runCommand(fmt::format("'{}' --help", exe.string()), help) != 0 ||
      !std::regex_search(help, match, std::regex("mpirun -n (\\d+)")))
    return {FailureKind::Crash, "the executable's --help:\n" + help};
  int ranks = std::stoi(match[1]);
  log.clear();
  code = runCommand(fmt::format("timeout 120 '{}' -n {} '{}' --random-inputs 1 --output-dir '{}'",
                                options.mpiexec, ranks, exe.string(), out.string()),
                    log);
  if (code != 0)
    return {FailureKind::Crash, fmt::format("mpiexec -n {} (exit {}):\n{}", ranks, code, log),
            ranks};
  std::vector<interp::Tensor> actual;
  try {
    for (size_t i = 0; i < expected.size(); ++i)
      actual.push_back(interp::readNpyAnyType((out / fmt::format("result{}.npy", i)).string()));
  } catch (const std::exception &e) {
    return {FailureKind::Crash, fmt::format("mpiexec -n {}: reading results: {}", ranks, e.what()),
            ranks};
  }
  std::string why = compareResults(expected, actual, options.rtol, options.atolMpi);
  if (!why.empty())
    return {FailureKind::MismatchMpi,
            fmt::format("executable under mpiexec -n {} vs --interpret: {}", ranks, why), ranks};
  fs::remove_all(dir);
  return {FailureKind::None, "", ranks};
}

} // namespace

CheckResult checkProgram(const std::string &program, const std::string &name,
                         const CheckOptions &options) {
  CheckResult result;
  // 1. The program is valid (else the generator is wrong) and propagation
  //    completes it.
  SourceFile source(name, program);
  std::unique_ptr<Module> global = compileText(source, "ir", FailureKind::Invalid, result, options);
  if (!global)
    return result;
  std::unique_ptr<Module> sharded =
      compileText(source, "sharded", FailureKind::Rejected, result, options);
  if (!sharded)
    return result;

  // 2. Propagation is idempotent: its printed result propagates to itself.
  //    Not checked under --auto-shard: solving the printed program is
  //    another problem (the first solve's constraints are written shardings
  //    there), and where uneven layouts of loop-carried values tie it may
  //    choose another plan of the same cost (seeds 138, 147 and 210 of
  //    0:600 when this was written).
  if (!options.autoShard) {
    std::string once = printModule(*sharded);
    SourceFile again(name + " (propagated)", once);
    std::unique_ptr<Module> twice =
        compileText(again, "sharded", FailureKind::Rejected, result, options);
    if (!twice)
      return {result.kind, "the propagated program does not compile again: " + result.message};
    if (std::string text = printModule(*twice); text != once)
      return {
          FailureKind::NotIdempotent,
          fmt::format("propagation is not idempotent:\n---- once\n{}---- twice\n{}", once, text)};
  }
  if (options.skipSimulation)
    return result;

  // 3. The per-device program, run for every device, computes what the
  //    global program computes, on the same random inputs (those of
  //    `--random-inputs 1`).
  std::unique_ptr<Module> spmd =
      compileText(source, "spmd", FailureKind::Rejected, result, options);
  if (!spmd)
    return result;
  const Function *globalMain = global->findFunction("main");
  const Function *spmdMain = spmd->findFunction("main");
  if (!globalMain || !spmdMain)
    return {FailureKind::Invalid, "no @main on one side"};
  std::vector<interp::Tensor> args;
  for (size_t i = 0; i < globalMain->body.args.size(); ++i)
    args.push_back(interp::randomTensor(globalMain->body.args[i]->type, 1, i));
  std::vector<interp::Tensor> expected, actual;
  try {
    expected = interp::runFunction(*global, *globalMain, args);
  } catch (const std::exception &e) {
    return {FailureKind::Crash, fmt::format("--interpret failed: {}", e.what())};
  }
  try {
    actual = interp::runFunction(*spmd, *spmdMain, args);
  } catch (const std::exception &e) {
    return {FailureKind::Crash, fmt::format("--simulate failed: {}\n---- spmd program\n{}",
                                            e.what(), printModule(*spmd))};
  }
  if (std::string why = compareResults(expected, actual, options.rtol, options.atol); !why.empty())
    return {FailureKind::MismatchSimulate,
            fmt::format("--simulate vs --interpret: {}\n---- spmd program\n{}", why,
                        printModule(*spmd))};

  // 4. The executable under MPI computes it too.
  if (options.shardc.empty())
    return result;
  return runMpi(program, name, expected, options);
}

} // namespace shardc::difftest
