// Small builders the unit tests share: meshes and axis references written
// inline, and the error messages a run reported.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Sharding.h"

#include <string>
#include <utility>
#include <vector>

// ASan and UBSan make the code several times slower, more so while ctest
// and lit share the cores. The few tests that bound a search's wall time
// scale their limits by this factor, so that they check the search and not
// the machine's load.
#if defined(__SANITIZE_ADDRESS__)
#define SHARDC_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SHARDC_TEST_SANITIZED 1
#endif
#endif

namespace shardc::testing {

#ifdef SHARDC_TEST_SANITIZED
inline constexpr double kSanitizerSlowdown = 2.5;
/// The sanitizer build looks for memory errors, not for every input a
/// numeric sweep tries: there the sweeps over millions of floats take about
/// one in four of the inputs the optimized build takes (53 s -> 13 s, 47 s ->
/// 12 s), and the strategy-problem tests a quarter of their random problems
/// (sampledRounds, StrategyProblemHelpers.h).
inline constexpr bool kSampleSweeps = true;
#else
inline constexpr double kSanitizerSlowdown = 1;
inline constexpr bool kSampleSweeps = false;
#endif

/// A mesh named "m" with these axes, in the default device order unless
/// `deviceIds` is given.
inline Mesh makeMesh(const std::vector<std::pair<std::string, int64_t>> &axes,
                     std::vector<int64_t> deviceIds = {}) {
  Mesh mesh;
  mesh.name = "m";
  for (const auto &[name, size] : axes)
    mesh.axes.push_back(MeshAxis{name, size, {}});
  mesh.deviceIds = std::move(deviceIds);
  mesh.deviceIdsWritten = !mesh.deviceIds.empty();
  return mesh;
}

/// The full axis `"name"`.
inline AxisRef full(const std::string &name) { return AxisRef{name, 0, 0, {}}; }
/// The sub-axis `"name":(pre)size`.
inline AxisRef sub(const std::string &name, int64_t pre, int64_t size) {
  return AxisRef{name, pre, size, {}};
}

/// The axes as written ("a", "b":(2)2).
inline std::vector<std::string> names(const std::vector<AxisRef> &axes) {
  std::vector<std::string> out;
  for (const AxisRef &a : axes)
    out.push_back(a.str());
  return out;
}

/// The messages of the errors in `diags`, in order (warnings and notes left out).
inline std::vector<std::string> errorMessages(const DiagnosticEngine &diags) {
  std::vector<std::string> out;
  for (const Diagnostic &d : diags.diagnostics())
    if (d.severity == Severity::Error)
      out.push_back(d.message);
  return out;
}

} // namespace shardc::testing
