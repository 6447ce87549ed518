// Linking a compiled program into an executable: where libshardrt is (the
// build tree or an installed prefix) and the system compiler's link line
// (the C++ compiler, with a RUNPATH to the runtime; OpenBLAS; glibc's libmvec).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace shardc::llvmgen {

struct RuntimeLocation {
  std::string libraryDir; ///< holds libshardrt.a
  std::string origin;     ///< how it was found, for `shardc --version`
};

/// libshardrt.a next to this shardc: $SHARDC_RUNTIME_DIR when set, else
/// <prefix>/lib/shardc for an installed <prefix>/bin/shardc, else the build
/// tree's runtime/. Nullopt with `error` listing where it looked.
std::optional<RuntimeLocation> findRuntime(std::string &error);

/// The command that links `objects` into `output`, as argv (the objects as
/// they are given: paths, or one `@FILE` naming a file that lists them).
std::vector<std::string> linkCommand(const std::vector<std::string> &objects,
                                     const std::string &output, const RuntimeLocation &runtime);

/// Links `objects` into the executable `output`: written under a temporary
/// name in output's directory and renamed when complete, so a failed link
/// leaves no file. Many objects (a program of many distinct kernels) go to
/// the compiler in a response file. False with `error` (the linker's own
/// message included).
bool linkExecutable(const std::vector<std::string> &objects, const std::string &output,
                    const RuntimeLocation &runtime, std::string &error);

} // namespace shardc::llvmgen
