// Atomic output: temporary file beside the target, then rename(2).
#include "tools/shardc/OutputFile.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shardc {
namespace {

/// Writes all of `text` to `fd`; returns false with errno set on failure.
bool writeAll(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return false;
    text.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

} // namespace

std::string writeOutput(const std::string &path, std::string_view text) {
  auto failure = [&](int err) {
    return fmt::format("cannot write '{}': {}", path, std::strerror(err));
  };
  if (path == "-") {
    std::fflush(stdout);
    return writeAll(STDOUT_FILENO, text) ? std::string() : failure(errno);
  }

  // A device, FIFO or socket (/dev/null, /dev/stdout, a named pipe) is
  // written in place: renaming over it would replace it with a file.
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
      return failure(errno);
    bool ok = writeAll(fd, text);
    int err = errno;
    ::close(fd);
    return ok ? std::string() : failure(err);
  }

  // Through a symbolic link, replace the file it points to, not the link.
  std::string target = path;
  if (char *real = ::realpath(path.c_str(), nullptr)) {
    target = real;
    std::free(real);
  }

  // The temporary file must be in the target's directory: rename(2) only
  // replaces atomically within one file system.
  std::string temp = target + ".tmp-XXXXXX";
  int fd = ::mkstemp(temp.data());
  if (fd < 0)
    return failure(errno);
  bool ok = writeAll(fd, text);
  int err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  // mkstemp creates the file 0600; give it the usual 0666 & ~umask.
  mode_t mask = ::umask(0);
  ::umask(mask);
  if (ok && ::chmod(temp.c_str(), 0666 & ~mask) != 0) {
    ok = false;
    err = errno;
  }
  if (ok && std::rename(temp.c_str(), target.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(temp.c_str());
    return failure(err);
  }
  return {};
}

} // namespace shardc
