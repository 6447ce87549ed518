// One differential check of one program: compile it, propagate it, compile
// the propagated text again, partition it, and run both the global and the
// per-device program on the same random inputs.
#pragma once

#include <string>

namespace shardc::difftest {

struct CheckOptions {
  /// Stop after the compile and propagation checks (no interpreter run).
  bool skipSimulation = false;
  /// Float tolerance of the comparison (integers and i1 compare exactly).
  double rtol = 1e-4;
  double atol = 1e-5;
};

/// Checks `program` (its text; `name` labels diagnostics) and returns what
/// went wrong, or an empty string when every check passed.
std::string checkProgram(const std::string &program, const std::string &name,
                         const CheckOptions &options);

} // namespace shardc::difftest
