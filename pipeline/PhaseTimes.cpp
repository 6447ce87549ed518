#include "pipeline/PhaseTimes.h"

#include <fmt/format.h>

#include <sys/resource.h>

#include <algorithm>

namespace shardc {

int64_t peakResidentBytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
  return static_cast<int64_t>(usage.ru_maxrss) * 1024; // Linux: kibibytes
}

void PhaseTimes::add(const std::string &name, double seconds, int64_t peakBytes) {
  for (Phase &phase : phases_)
    if (phase.name == name) {
      phase.seconds += seconds;
      phase.peakBytes = std::max(phase.peakBytes, peakBytes);
      return;
    }
  phases_.push_back(Phase{name, seconds, peakBytes});
}

std::string PhaseTimes::render() const {
  double total = 0;
  for (const Phase &phase : phases_)
    total += phase.seconds;
  std::string out = "shardc: time per phase (wall clock; peak resident memory at its end)\n";
  for (const Phase &phase : phases_)
    out += fmt::format("  {:<26} {:9.4f} s  {:5.1f}%  {:7.1f} MiB\n", phase.name, phase.seconds,
                       total > 0 ? 100 * phase.seconds / total : 0.0,
                       static_cast<double>(phase.peakBytes) / (1 << 20));
  out += fmt::format("  {:<26} {:9.4f} s\n", "total", total);
  for (const std::string &note : notes_)
    out += note;
  return out;
}

} // namespace shardc
