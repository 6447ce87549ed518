// libFuzzer target: the compiler up to propagation on arbitrary text. For any
// input, shardc must not crash, hang, leak or hit undefined behaviour (the
// sanitizers and libFuzzer catch those), and a program that passes every
// check must print as text that compiles again and prints identically
// (../shared/LANGUAGE.md section 7).
//
// Run by hand: build with -DSHARDC_FUZZ=ON (clang), then
//   build-asan/tests/fuzz/fuzz_parser -dict=tests/fuzz/shd.dict CORPUS_DIR tests/fuzz/corpus
#include "frontend/SourceInput.h"
#include "pipeline/Pipeline.h"
#include "tools/shardc/VerifyDiagnostics.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using namespace shardc;

[[noreturn]] void fail(const char *what, const std::string &text,
                       const std::deque<Diagnostic> &diags = {}) {
  std::fprintf(stderr, "fuzz_parser: %s\n--- text ---\n%s\n--- diagnostics ---\n", what,
               text.c_str());
  for (const Diagnostic &d : diags)
    std::fputs(renderText(d, RenderOptions{}).c_str(), stderr);
  std::abort();
}

/// print -> parse -> print must be a fixed point for a module that passed.
void checkRoundTrip(const Module &module) {
  std::string printed = emitModule(module, "ir");
  SourceFile reparsedFile("printed.shd", printed);
  DiagnosticEngine diags;
  std::unique_ptr<Module> reparsed = compile(reparsedFile, diags);
  if (!reparsed)
    fail("the printed form of a valid program does not compile", printed, diags.diagnostics());
  if (emitModule(*reparsed, "ir") != printed)
    fail("printing is not stable: print(parse(print(m))) != print(m)", printed);
}

/// A program that passes the checks goes through propagation and through
/// --explicit without crashing; a propagated program prints as text that
/// compiles (an explicit-mode error is a legitimate answer, not a failure).
void checkLaterStages(const SourceFile &file) {
  DiagnosticEngine diags;
  CompileOptions propagate;
  propagate.emit = "sharded";
  if (std::unique_ptr<Module> sharded = compile(file, diags, propagate)) {
    std::string printed = emitModule(*sharded, "sharded");
    SourceFile printedFile("sharded.shd", printed);
    DiagnosticEngine reparseDiags;
    if (!compile(printedFile, reparseDiags))
      fail("the --emit=sharded form of a valid program does not compile", printed,
           reparseDiags.diagnostics());
  } else if (!diags.hasErrors()) {
    fail("propagation failed without reporting an error", file.text());
  }
  DiagnosticEngine explicitDiags;
  CompileOptions explicitMode;
  explicitMode.explicitMode = true;
  if (!compile(file, explicitDiags, explicitMode) && !explicitDiags.hasErrors())
    fail("--explicit failed without reporting an error", file.text());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  // The driver refuses binary input before parsing; such inputs teach the
  // fuzzer nothing about the compiler, so keep them out of the corpus.
  if (findNonText(text))
    return -1;
  for (std::string &chunk : splitInput(text)) {
    SourceFile file("fuzz.shd", std::move(chunk));
    DiagnosticEngine diags;
    std::unique_ptr<Module> module = compile(file, diags);
    if (!module && !diags.hasErrors())
      fail("compile() failed without reporting an error", file.text());
    // Render every diagnostic both ways: locations must stay inside the file.
    for (const Diagnostic &d : diags.diagnostics())
      (void)renderText(d, RenderOptions{true});
    (void)renderJson(diags.diagnostics());
    DiagnosticEngine mismatches;
    (void)verifyDiagnostics(file, diags.diagnostics(), mismatches);
    if (!module)
      continue;
    checkRoundTrip(*module);
    checkLaterStages(file);
  }
  return 0;
}
