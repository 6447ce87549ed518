// shardc without LLVM (NativeHandle.h): whatever needs the backend execs
// shardc-llvm, the same driver with LLVM, from shardc's own directory, with
// the command line unchanged (argv[0] too, so messages still say shardc).
// Nothing has been read or written when it does: the flags' checks run
// while the command line is parsed, the back half is asked for once it is
// parsed, before the input is read.
#include "tools/shardc/NativeHandle.h"

#include "support/SelfPath.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace shardc {
namespace {

char **commandLine = nullptr;

[[noreturn]] void handOver() {
  const std::string dir = executableDir();
  const std::string full = (dir.empty() ? std::string(".") : dir) + "/shardc-llvm";
  if (commandLine) {
    std::fflush(nullptr);
    ::execv(full.c_str(), commandLine);
  }
  std::fprintf(stderr,
               "shardc: cannot run %s, the compiler's LLVM back end, which -o, --emit=llvm, "
               "--target-cpu, --flush-denormals and --version need: %s\n",
               full.c_str(), commandLine ? std::strerror(errno) : "no command line");
  std::exit(3);
}

} // namespace

void rememberCommandLine(int, char **argv) { commandLine = argv; }

void handOverIfBackend(const DriverOptions &options) {
  if (usesBackend(options))
    handOver();
}

std::unique_ptr<Backend> makeNativeBackend(const NativeOptions &, const std::string &,
                                           const std::string &) {
  handOver();
}

std::string checkTargetCpu(const std::string &) { handOver(); }

std::string checkFlushDenormals() { handOver(); }

std::string runtimeLocationText() { handOver(); }

} // namespace shardc
