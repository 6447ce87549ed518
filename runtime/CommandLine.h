// The command line of a generated executable (LANGUAGE.md section 8):
//   mpirun -n N ./PROG [--input NAME=A.npy]... [--output-dir DIR] [--profile]
//                            [--trace FILE.json] [--repeat K]
#pragma once

#include "runtime/Context.h"

#include <string>

namespace shardrt {

struct ParsedCommandLine {
  Options options;
  bool help = false;
  std::string error; // non-empty: a bad command line (exit 2)
};

/// Parses argv[1..] against the program's inputs.
ParsedCommandLine parseCommandLine(const shardrt_program &program, int argc, char **argv);
/// The --help text: usage, inputs and outputs with types and shardings.
std::string helpText(const shardrt_program &program, const std::string &programName);

} // namespace shardrt
