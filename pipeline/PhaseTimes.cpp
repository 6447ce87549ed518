#include "pipeline/PhaseTimes.h"

#include <fmt/format.h>

namespace shardc {

void PhaseTimes::add(const std::string &name, double seconds) {
  for (auto &[phase, total] : phases_)
    if (phase == name) {
      total += seconds;
      return;
    }
  phases_.emplace_back(name, seconds);
}

std::string PhaseTimes::render() const {
  double total = 0;
  for (const auto &phase : phases_)
    total += phase.second;
  std::string out = "shardc: time per phase (wall clock)\n";
  for (const auto &[name, seconds] : phases_)
    out += fmt::format("  {:<26} {:9.4f} s  {:5.1f}%\n", name, seconds,
                       total > 0 ? 100 * seconds / total : 0.0);
  out += fmt::format("  {:<26} {:9.4f} s\n", "total", total);
  for (const std::string &note : notes_)
    out += note;
  return out;
}

} // namespace shardc
