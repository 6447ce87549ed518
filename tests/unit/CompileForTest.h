// The unit tests' one way to compile a program written inline: the source
// outlives the test (the module's locations point into it), the compiler's
// messages go to the test's output, and the program must compile.
#pragma once

#include "pipeline/Pipeline.h"

#include <catch2/catch.hpp>

#include <deque>
#include <memory>
#include <string>
#include <string_view>

namespace shardc::testing {

/// `text`, as the file `name`, compiled up to the stage whose `--emit=` kind
/// is `emit` (empty: the checks only). REQUIREs a module and no errors.
inline std::unique_ptr<Module> compileForTest(const std::string &name, const std::string &text,
                                              std::string_view emit = {}) {
  static std::deque<SourceFile> sources; // never freed: locations point here
  const SourceFile &file = sources.emplace_back(name, text);
  DiagnosticEngine diags;
  CompileOptions options;
  options.emit = emit;
  std::unique_ptr<Module> module = compile(file, diags, options);
  for (const Diagnostic &d : diags.diagnostics())
    UNSCOPED_INFO(d.message);
  REQUIRE(module);
  REQUIRE_FALSE(diags.hasErrors());
  return module;
}

} // namespace shardc::testing
