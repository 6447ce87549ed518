#include "support/SelfPath.h"

#include <unistd.h>

namespace shardc {

std::string executableDir() {
  char path[4096];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0)
    return "";
  std::string file(path, static_cast<size_t>(n));
  size_t slash = file.rfind('/');
  return slash == std::string::npos ? "" : file.substr(0, slash);
}

} // namespace shardc
