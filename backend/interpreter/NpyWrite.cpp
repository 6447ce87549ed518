// Writing .npy files (version 1.0), atomically: a temporary file beside the
// target, renamed into place only when everything was written.
#include "backend/interpreter/Npy.h"

#include "support/Npy.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shardc::interp {

std::string encodeNpy(const Tensor &t) {
  std::string out = support::npyHeaderBytes(npyDescr(t.dtype()), t.shape().data(), t.rank());
  int64_t width = dtypeBytes(t.dtype());
  size_t dataStart = out.size();
  out.resize(dataStart + static_cast<size_t>(t.size() * width));
  char *data = out.data() + dataStart;
  for (int64_t i = 0; i < t.size(); ++i) {
    char *p = data + i * width;
    switch (t.dtype()) {
    case DType::F32: {
      float f = static_cast<float>(t.floatAt(i));
      std::memcpy(p, &f, 4);
      break;
    }
    case DType::F64: {
      double f = t.floatAt(i);
      std::memcpy(p, &f, 8);
      break;
    }
    case DType::I32: {
      int32_t v = static_cast<int32_t>(t.intAt(i));
      std::memcpy(p, &v, 4);
      break;
    }
    case DType::I64: {
      int64_t v = t.intAt(i);
      std::memcpy(p, &v, 8);
      break;
    }
    case DType::I1:
      *p = static_cast<char>(t.intAt(i) != 0);
      break;
    }
  }
  return out;
}

namespace {

/// Writes `bytes` to a new temporary file beside `path`; returns its name.
std::string writeTemporary(const std::string &path, const std::string &bytes) {
  std::string temp = path + ".tmp-XXXXXX";
  int fd = ::mkstemp(temp.data());
  if (fd < 0)
    throw Error(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  size_t done = 0;
  int err = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      err = errno;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 && err == 0)
    err = errno;
  // mkstemp creates the file 0600; give it the usual 0666 & ~umask.
  mode_t mask = ::umask(0);
  ::umask(mask);
  if (err == 0 && ::chmod(temp.c_str(), 0666 & ~mask) != 0)
    err = errno;
  if (err != 0) {
    ::unlink(temp.c_str());
    throw Error(fmt::format("cannot write '{}': {}", path, std::strerror(err)));
  }
  return temp;
}

} // namespace

void writeNpyFiles(const std::vector<std::pair<std::string, Tensor>> &files) {
  std::vector<std::string> temps;
  try {
    for (const auto &[path, tensor] : files)
      temps.push_back(writeTemporary(path, encodeNpy(tensor)));
  } catch (const Error &) {
    for (const std::string &temp : temps)
      ::unlink(temp.c_str());
    throw;
  }
  for (size_t i = 0; i < files.size(); ++i)
    if (std::rename(temps[i].c_str(), files[i].first.c_str()) != 0) {
      int err = errno;
      for (size_t j = i; j < temps.size(); ++j)
        ::unlink(temps[j].c_str());
      throw Error(fmt::format("cannot write '{}': {}", files[i].first, std::strerror(err)));
    }
}

void writeNpy(const std::string &path, const Tensor &t) { writeNpyFiles({{path, t}}); }

} // namespace shardc::interp
