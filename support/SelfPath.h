// Where the running executable lives: the compiler finds its runtime
// (backend/llvm/Link.cpp) and shardc finds shardc-llvm (tools/shardc/
// hand_over.cpp) beside it.
#pragma once

#include <string>

namespace shardc {

/// The directory of the running executable, resolved through symlinks
/// (/proc/self/exe); empty when it cannot be read.
std::string executableDir();

} // namespace shardc
