// The persistent cache of compiled kernels: one file of object code per
// kernel, named by the SHA-1 of its structural key (KernelUnit.h), the
// target (triple, CPU, features) and the compiler (shardc's version, LLVM's,
// and the shardc executable's size and time, so a rebuilt compiler never
// reuses an older one's code). Entries are written under a temporary name
// and renamed, so concurrent compiles never see half an entry; each carries
// its length and the SHA-1 of its object code, and one that does not match
// (truncated, corrupt) is ignored and compiled again. A cache that cannot be
// read or written is no error: the kernels are compiled.
#pragma once

#include <optional>
#include <string>

namespace shardc::llvmgen {

/// The cache directory: $SHARDC_CACHE_DIR, else $XDG_CACHE_HOME/shardc, else
/// $HOME/.cache/shardc; empty when none of them is set.
std::string defaultKernelCacheDir();

class KernelCache {
public:
  /// A cache in `dir` for code compiled for `target` (a description of the
  /// target machine: triple, CPU, features).
  KernelCache(std::string dir, const std::string &target);

  /// The object code of the kernel with `key`, when an intact entry holds it.
  std::optional<std::string> load(const std::string &key) const;
  /// Stores `object` as the kernel with `key`; false when it could not (the
  /// cache is then only slower, never wrong).
  bool store(const std::string &key, const std::string &object) const;
  /// The file of the entry for `key`.
  std::string entryPath(const std::string &key) const;

private:
  std::string dir_;
  std::string identity_; ///< the target and the compiler, part of every entry's name
};

} // namespace shardc::llvmgen
