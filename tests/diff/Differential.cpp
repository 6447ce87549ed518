// The checks of Differential.h, stage by stage; each failure names its stage
// and quotes the compiler's diagnostics.
#include "tests/diff/Differential.h"

#include "backend/interpreter/Interpreter.h"
#include "ir/Printer.h"
#include "pipeline/Pipeline.h"

#include <fmt/format.h>

#include <algorithm>

namespace shardc::difftest {
namespace {

std::string renderAll(const DiagnosticEngine &diags) {
  std::string out;
  for (const Diagnostic &d : diags.diagnostics())
    out += renderText(d, RenderOptions{});
  return out;
}

/// Compiles `text` as far as `emit` and returns the module, or null with the
/// diagnostics in `failure`.
std::unique_ptr<Module> compileText(const SourceFile &file, std::string_view emit,
                                    std::string &failure) {
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = compile(file, diags, CompileOptions{emit});
  if (!module)
    failure = fmt::format("--emit={} failed:\n{}", emit, renderAll(diags));
  return module;
}

/// Runs @main of both modules on the same random inputs; a mismatch or a
/// runtime error on either side is the failure. Without `spmd`, only that
/// the global program runs.
std::string compareRuns(const Module &global, const Module *spmd, const CheckOptions &options) {
  const Function *globalMain = global.findFunction("main");
  const Function *spmdMain = spmd ? spmd->findFunction("main") : nullptr;
  if (!globalMain || (spmd && !spmdMain))
    return "no @main on one side";
  std::vector<interp::Tensor> args;
  for (size_t i = 0; i < globalMain->body.args.size(); ++i)
    args.push_back(interp::randomTensor(globalMain->body.args[i]->type, 1, i));
  std::vector<interp::Tensor> expected, actual;
  try {
    expected = interp::runFunction(global, *globalMain, args);
  } catch (const interp::Error &e) {
    return fmt::format("--interpret failed: {}", e.what());
  }
  if (!spmd)
    return "";
  try {
    actual = interp::runFunction(*spmd, *spmdMain, args);
  } catch (const interp::Error &e) {
    return fmt::format("--simulate failed: {}\n---- spmd program\n{}", e.what(),
                       printModule(*spmd));
  }
  if (expected.size() != actual.size())
    return fmt::format("result count differs: {} != {}", expected.size(), actual.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    std::string why;
    if (expected[i].type() != actual[i].type())
      why = fmt::format("type {} != {}", actual[i].type().str(), expected[i].type().str());
    else if (interp::allClose(actual[i], expected[i], options.rtol, options.atol, &why))
      continue;
    return fmt::format("result {} differs (simulated vs interpreted): {}\n---- spmd program\n{}", i,
                       why, printModule(*spmd));
  }
  return "";
}

} // namespace

std::string checkProgram(const std::string &program, const std::string &name,
                         const CheckOptions &options) {
  std::string failure;
  // 1. The program is valid and propagation completes it.
  SourceFile source(name, program);
  std::unique_ptr<Module> sharded = compileText(source, "sharded", failure);
  if (!sharded)
    return failure;

  // 2. Propagation is idempotent: its printed result propagates to itself.
  std::string once = printModule(*sharded);
  SourceFile again(name + " (propagated)", once);
  std::unique_ptr<Module> twice = compileText(again, "sharded", failure);
  if (!twice)
    return "the propagated program does not compile again: " + failure;
  if (std::string text = printModule(*twice); text != once)
    return fmt::format("propagation is not idempotent:\n---- once\n{}---- twice\n{}", once, text);

  if (options.skipSimulation)
    return "";

  // 3. The per-device program, run for every device, computes what the
  //    global program computes, on the same random inputs.
  std::unique_ptr<Module> global = compileText(source, "ir", failure);
  if (!global)
    return failure;
  std::vector<std::string> kinds = emitKinds();
  if (std::find(kinds.begin(), kinds.end(), "spmd") == kinds.end())
    return compareRuns(*global, nullptr, options).empty()
               ? "this build has no partitioner (--emit=spmd): run with --no-simulate"
               : compareRuns(*global, nullptr, options);
  std::unique_ptr<Module> spmd = compileText(source, "spmd", failure);
  if (!spmd)
    return failure;
  return compareRuns(*global, spmd.get(), options);
}

} // namespace shardc::difftest
