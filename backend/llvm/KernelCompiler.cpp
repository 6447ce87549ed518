// Kernels optimized and compiled on threads, or taken from the cache.
#include "backend/llvm/KernelCompiler.h"

#include "backend/llvm/Target.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace shardc::llvmgen {
namespace {

/// Runs `work(i, machine)` for every i in `indices` on up to
/// kernelCompileThreads() threads, each with a target machine of its own
/// (a TargetMachine is not to be shared between threads). False with the
/// first error.
bool onThreads(const std::vector<size_t> &indices, const std::string &cpu,
               const std::function<bool(size_t, llvm::TargetMachine &, std::string &)> &work,
               std::string &error) {
  if (indices.empty())
    return true;
  const size_t threads = std::min<size_t>(kernelCompileThreads(), indices.size());
  std::atomic<size_t> next{0};
  std::mutex errorLock;
  bool failed = false;
  auto worker = [&] {
    std::string problem;
    std::unique_ptr<llvm::TargetMachine> machine = createTargetMachine(cpu, problem);
    for (size_t n = next++; machine && n < indices.size(); n = next++)
      if (!work(indices[n], *machine, problem))
        break;
    if (!problem.empty()) {
      std::lock_guard<std::mutex> lock(errorLock);
      if (!failed)
        error = problem;
      failed = true;
      next = indices.size(); // the others stop after their kernel
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &thread : pool)
    thread.join();
  return !failed;
}

} // namespace

unsigned kernelCompileThreads() {
  if (const char *jobs = std::getenv("SHARDC_JOBS"); jobs && *jobs) {
    char *end = nullptr;
    long n = std::strtol(jobs, &end, 10);
    if (*end == '\0' && n > 0)
      return static_cast<unsigned>(std::min<long>(n, 256));
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

bool optimizeKernels(std::vector<KernelUnit> &kernels, const std::string &cpu,
                     const KernelCache *cache, std::vector<std::string> &objects,
                     KernelCompileStats &stats, std::string &error) {
  objects.assign(kernels.size(), std::string());
  std::vector<size_t> missing;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (cache)
      if (std::optional<std::string> object = cache->load(kernels[i].key)) {
        objects[i] = std::move(*object);
        ++stats.fromCache;
        continue;
      }
    missing.push_back(i);
  }
  stats.compiled += static_cast<int64_t>(missing.size());
  return onThreads(
      missing, cpu,
      [&](size_t i, llvm::TargetMachine &machine, std::string &) {
        optimizeModule(*kernels[i].module, machine);
        return true;
      },
      error);
}

bool compileKernels(std::vector<KernelUnit> &kernels, const std::string &cpu,
                    const KernelCache *cache, bool keepModules, std::vector<std::string> &objects,
                    KernelCompileStats &stats, std::string &error) {
  std::vector<size_t> missing;
  for (size_t i = 0; i < kernels.size(); ++i)
    if (objects[i].empty())
      missing.push_back(i);
  std::atomic<int64_t> stored{0};
  bool ok = onThreads(
      missing, cpu,
      [&](size_t i, llvm::TargetMachine &machine, std::string &problem) {
        if (!emitObject(*kernels[i].module, machine, objects[i], problem))
          return false;
        if (cache && cache->store(kernels[i].key, objects[i]))
          ++stored;
        return true;
      },
      error);
  stats.stored += stored;
  if (!keepModules)
    for (KernelUnit &kernel : kernels) {
      kernel.module.reset();
      kernel.context.reset();
    }
  return ok;
}

} // namespace shardc::llvmgen
