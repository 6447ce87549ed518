// The statistics of shardc-calibrate (Estimate.h): quantiles of timings and
// the bounded busy latency.
#include "tools/shardc-calibrate/Estimate.h"

#include <algorithm>

namespace shardc::calibrate {

double sampleQuantile(std::vector<double> samples, double fraction) {
  if (samples.empty())
    return 0;
  fraction = std::clamp(fraction, 0.0, 1.0);
  const size_t index = static_cast<size_t>(fraction * static_cast<double>(samples.size() - 1));
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(index),
                   samples.end());
  return samples[index];
}

double oneSidedTime(const std::vector<double> &samples) { return sampleQuantile(samples, 0.25); }

BusyLatencySample busyLatencyEstimate(const std::vector<double> &synchronized,
                                      const std::vector<double> &free, int rounds) {
  const double perRound = 1.0 / std::max(rounds, 1);
  const double freeBlock = sampleQuantile(free, 0.5);
  return {std::max(0.0, sampleQuantile(synchronized, 0.5) - freeBlock) * perRound,
          freeBlock * perRound};
}

double lockstepLatency(const std::vector<double> &kindLatencies) {
  return sampleQuantile(kindLatencies, 0.5);
}

double busyLatencyLimit(const BusyLatencySample &sample, double lockstep) {
  return std::max(kBusyLatencyLimitRatio * lockstep, kBusyLatencyLimitRounds * sample.round);
}

double coreShare(double cpuSeconds, double wallSeconds, int cores) {
  if (!(wallSeconds > 0) || cores < 1)
    return 1;
  return std::min(1.0, cpuSeconds / (wallSeconds * cores));
}

bool busyLatencyDisturbed(const BusyLatencySample &sample) {
  return sample.coreShare < kBusyLatencyMinCoreShare;
}

double chooseBusyLatency(const std::vector<BusyLatencySample> &attempts, double lockstep) {
  double chosen = -1;
  bool chosenDisturbed = true;
  for (const BusyLatencySample &attempt : attempts) {
    if (attempt.added > busyLatencyLimit(attempt, lockstep))
      continue;
    const bool disturbed = busyLatencyDisturbed(attempt);
    // An undisturbed attempt wins over any disturbed one, then the smaller.
    if (chosen < 0 || (chosenDisturbed && !disturbed) ||
        (disturbed == chosenDisturbed && attempt.added < chosen)) {
      chosen = attempt.added;
      chosenDisturbed = disturbed;
    }
  }
  return chosen;
}

GemmRates fitGemm(const GemmSample &square, const GemmSample &skinny, double memoryBandwidth) {
  // square.seconds = square.flops x + square.bytes y, and the same for
  // skinny: x seconds per flop, y per byte.
  const double det = square.flops * skinny.bytes - skinny.flops * square.bytes;
  const double y =
      det != 0 ? (square.flops * skinny.seconds - skinny.flops * square.seconds) / det : 0;
  const double x = (square.seconds - square.bytes * y) / square.flops;
  if (x > 0 && y > 0 && 1 / y <= memoryBandwidth)
    return {1 / x, 1 / y};
  const double perByte = 1 / memoryBandwidth;
  const double perFlop = (square.seconds - square.bytes * perByte) / square.flops;
  // The operands alone take longer than the square product did: its rate
  // with the operands free.
  return {perFlop > 0 ? 1 / perFlop : square.flops / square.seconds, memoryBandwidth};
}

double fallbackBusyLatency(const std::vector<double> &believedOnOtherAxes) {
  if (believedOnOtherAxes.empty())
    return 0;
  return *std::max_element(believedOnOtherAxes.begin(), believedOnOtherAxes.end());
}

} // namespace shardc::calibrate
