// The native backend linked in (shardc-llvm, the unit tests, the difftest,
// the fuzzer): NativeHandle.h's functions call backend/llvm directly.
#include "tools/shardc/NativeHandle.h"

namespace shardc {

std::unique_ptr<Backend> makeNativeBackend(const NativeOptions &options,
                                           const std::string &programName,
                                           const std::string &output) {
  return std::make_unique<NativeBackend>(options, programName, output);
}

void rememberCommandLine(int, char **) {}

void handOverIfBackend(const DriverOptions &) {}

} // namespace shardc
