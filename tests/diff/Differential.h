// One differential check of one program: compile it, propagate it, compile
// the propagated text again, partition it, run both the global and the
// per-device program on the same random inputs and, when asked, build the
// executable and run it under MPI on those inputs too.
#pragma once

#include <string>

namespace shardc::difftest {

/// What went wrong with one program; the soak summary counts each kind.
enum class FailureKind {
  None,
  /// The checks (parse, types, shardings) reject it: the generator wrote an
  /// invalid program (a generator bug).
  Invalid,
  /// It verifies, then a later stage reports an error (exit 1 on a valid
  /// program): a compiler finding.
  Rejected,
  /// An internal error (an exception: exit 3 in shardc).
  Internal,
  /// --interpret or --simulate stopped with a runtime error, or the
  /// executable failed (a signal or a nonzero exit under MPI).
  Crash,
  /// --simulate computes something else than --interpret.
  MismatchSimulate,
  /// The executable under MPI computes something else than --interpret.
  MismatchMpi,
  /// Propagation's printed result does not propagate to itself.
  NotIdempotent,
};

/// The kind's name in summaries (`mismatch-mpi`, ...).
const char *kindName(FailureKind kind);

struct CheckOptions {
  /// Stop after the compile and propagation checks (no interpreter run).
  bool skipSimulation = false;
  /// Compile with --auto-shard (the solver decides what the program leaves
  /// out, then propagation), in every check and for the executable.
  bool autoShard = false;
  /// Float tolerances (f32 and f64 alike: an f64 value may be a converted
  /// f32 one); integers and i1 compare exactly. The executable's math
  /// library differs from the interpreter's, hence its looser atol.
  double rtol = 1e-4;
  double atol = 1e-5;
  double atolMpi = 1e-4;
  /// Also build the executable with this shardc and run it under `mpiexec`
  /// (empty: no MPI run). Files go under `workDir`.
  std::string shardc;
  std::string mpiexec = "mpiexec.mpich";
  std::string workDir = "/tmp";
};

struct CheckResult {
  FailureKind kind = FailureKind::None;
  std::string message;
  /// The device count (MPI ranks) of the program, 0 when not run under MPI.
  int ranks = 0;
};

/// Checks `program` (its text; `name` labels diagnostics and files) and
/// returns what went wrong, kind None when every check passed.
CheckResult checkProgram(const std::string &program, const std::string &name,
                         const CheckOptions &options);

} // namespace shardc::difftest
