// What the driver needs from the LLVM backend, behind functions that name no
// LLVM type, so that the `shardc` command need not load LLVM.
//
// Loading libLLVM-14.so alone costs about 75 ms of CPU at every start (its
// static constructors and relocations: an empty program linked with it
// starts in 74 ms, one without it in 2 ms), while most invocations (checks,
// --emit of a stage, --interpret, --simulate) never lower to LLVM. So there
// are two executables of the same driver:
//   shardc       without LLVM (hand_over.cpp): when the command line asks
//                for the back half (-o PROG, --emit=llvm, --target-cpu,
//                --flush-denormals, --version), it execs shardc-llvm beside
//                it with the same arguments, before reading any input;
//   shardc-llvm  with it (native_linked.cpp), as are the unit tests, the
//                difftest and the fuzzer.
#pragma once

#include "backend/llvm/NativeBackend.h"
#include "tools/shardc/Driver.h"

#include <memory>
#include <string>

namespace shardc {

/// The native backend for one program (NativeBackend's arguments).
std::unique_ptr<Backend> makeNativeBackend(const NativeOptions &options,
                                           const std::string &programName,
                                           const std::string &output);

/// Keeps the command line for a hand-over (shardc's main calls it first).
void rememberCommandLine(int argc, char **argv);

/// Called once the command line is parsed and checked: shardc hands an
/// invocation that runs the back half over to shardc-llvm (and does not
/// return); shardc-llvm runs it itself.
void handOverIfBackend(const DriverOptions &options);

} // namespace shardc
