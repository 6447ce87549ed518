// --time-passes: the wall time of every phase of one shardc run (parse, each
// pass, printing, and for an executable lowering, LLVM's O3, code generation
// and the link), with the process's peak resident memory when the phase
// ended, printed as a table on stderr when the run ends. (The memory column
// says which phase grew the process: on a VM, first touching a page costs
// about as much as the work done in it.)
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace shardc {

class PhaseTimes {
public:
  /// Adds `seconds` to the phase `name` (a phase run per chunk of
  /// --split-input-file adds up); phases keep the order they first ran in.
  /// `peakBytes`: the process's peak resident memory when it ended.
  void add(const std::string &name, double seconds, int64_t peakBytes);
  /// A line shown after the table (e.g. the backend's kernel counts).
  void addNote(std::string line) { notes_.push_back(std::move(line)); }
  /// The table: one line per phase, then the total, then the notes.
  std::string render() const;

private:
  struct Phase {
    std::string name;
    double seconds = 0;
    int64_t peakBytes = 0;
  };
  std::vector<Phase> phases_;
  std::vector<std::string> notes_;
};

/// The peak resident memory of this process so far (0 where unknown).
int64_t peakResidentBytes();

/// Times a scope into `times` (when not null) as the phase `name`.
class PhaseTimer {
public:
  PhaseTimer(PhaseTimes *times, std::string name) : times_(times), name_(std::move(name)) {}
  ~PhaseTimer() {
    if (times_)
      times_->add(name_, std::chrono::duration<double>(Clock::now() - start_).count(),
                  peakResidentBytes());
  }
  PhaseTimer(const PhaseTimer &) = delete;
  PhaseTimer &operator=(const PhaseTimer &) = delete;

private:
  using Clock = std::chrono::steady_clock;
  PhaseTimes *times_;
  std::string name_;
  Clock::time_point start_ = Clock::now();
};

} // namespace shardc
