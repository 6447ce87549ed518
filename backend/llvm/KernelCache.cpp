// The on-disk kernel cache: entry names, the entry format and its checks,
// atomic writes.
//
// An entry is "shardc-kernel 1 <bytes> <sha1 of the object>\n" and then the
// object code.
#include "backend/llvm/KernelCache.h"

#include "backend/llvm/KernelUnit.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>

namespace shardc::llvmgen {
namespace {

constexpr const char *kMagic = "shardc-kernel 1 ";

/// The running shardc's size and modification time.
std::string executableStamp() {
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status("/proc/self/exe", status))
    return "unknown";
  return std::to_string(status.getSize()) + "@" +
         std::to_string(status.getLastModificationTime().time_since_epoch().count());
}

std::string env(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}

} // namespace

std::string defaultKernelCacheDir() {
  if (std::string dir = env("SHARDC_CACHE_DIR"); !dir.empty())
    return dir;
  if (std::string dir = env("XDG_CACHE_HOME"); !dir.empty())
    return dir + "/shardc";
  if (std::string home = env("HOME"); !home.empty())
    return home + "/.cache/shardc";
  return "";
}

KernelCache::KernelCache(std::string dir, const std::string &target)
    : dir_(std::move(dir)), identity_("shardc " SHARDC_VERSION "; LLVM " LLVM_VERSION_STRING "; " +
                                      target + "; build " + executableStamp()) {}

std::string KernelCache::entryPath(const std::string &key) const {
  return dir_ + "/kernels/" + sha1Hex(identity_ + "\n" + key) + ".o";
}

std::optional<std::string> KernelCache::load(const std::string &key) const {
  if (dir_.empty())
    return std::nullopt;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file = llvm::MemoryBuffer::getFile(
      entryPath(key), /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!file)
    return std::nullopt;
  llvm::StringRef text = (*file)->getBuffer();
  if (!text.consume_front(kMagic))
    return std::nullopt;
  size_t newline = text.find('\n');
  if (newline == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef header = text.take_front(newline);
  llvm::StringRef object = text.drop_front(newline + 1);
  auto [bytesText, digest] = header.split(' ');
  uint64_t bytes = 0;
  if (bytesText.getAsInteger(10, bytes) || bytes != object.size() || bytes == 0)
    return std::nullopt;
  std::string content = object.str();
  if (sha1Hex(content) != digest)
    return std::nullopt;
  return content;
}

bool KernelCache::store(const std::string &key, const std::string &object) const {
  if (dir_.empty())
    return false;
  const std::string path = entryPath(key);
  llvm::SmallString<256> directory(path);
  llvm::sys::path::remove_filename(directory);
  if (llvm::sys::fs::create_directories(directory))
    return false;
  int fd = -1;
  llvm::SmallString<256> temporary;
  if (llvm::sys::fs::createUniqueFile(directory + "/.entry-%%%%%%%%%%%%.part", fd, temporary))
    return false;
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << kMagic << object.size() << ' ' << sha1Hex(object) << '\n' << object;
    out.close();
    if (out.has_error()) {
      out.clear_error();
      llvm::sys::fs::remove(temporary);
      return false;
    }
  }
  if (llvm::sys::fs::rename(temporary, path)) {
    llvm::sys::fs::remove(temporary);
    return false;
  }
  return true;
}

} // namespace shardc::llvmgen
