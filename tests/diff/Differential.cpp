// The checks of Differential.h, stage by stage; each failure names its stage
// and quotes the compiler's diagnostics.
#include "tests/diff/Differential.h"

#include "ir/Printer.h"
#include "tools/shardc/Pipeline.h"

#include <fmt/format.h>

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
  return "simulation is not built yet: run with --no-simulate";
}

} // namespace shardc::difftest
