// Random well-typed, well-sharded .shd programs for differential testing
// (issue 4): the partitioned program run by the simulator must compute what
// the reference interpreter computes on the global program.
//
// A program is one mesh of 1 to 8 devices with 1 to 3 axes (sometimes a
// second mesh over the same devices in another order), a @main whose
// parameters have odd and even shapes and random shardings (sub-axes, open
// dims, priorities, explicitly replicated axes), and a few to a few dozen ops
// drawn from every op group, with out_shardings, sharding_constraints and
// reshards sprinkled in; manual_computations, for, while and if nest in each
// other, and generated functions are called from any of them. Some programs
// give their mesh axis types (explicit and auto axes, LANGUAGE.md section
// 10), with auto_axes and explicit_axes regions nested in all of these.
#pragma once

#include <cstdint>
#include <string>

namespace shardc::difftest {

struct ProgramOptions {
  /// Upper bound on the number of ops in @main (at least 1 is generated).
  int maxOps = 14;
  /// Largest extent of a generated dimension.
  int64_t maxDim = 9;
  /// The chance that a program whose first mesh has axes gives them axis
  /// types (some explicit) and writes auto_axes / explicit_axes regions.
  double axisTypes = 0.3;
};

/// The text of the program for `seed`: the same seed gives the same text on
/// every platform (the generator draws from its own splitmix64 stream).
std::string generateProgram(uint64_t seed, const ProgramOptions &options = {});

} // namespace shardc::difftest
