// The statistics shardc-calibrate turns its timings into: a low quantile
// where noise only adds time, and the busy latency with the bound that keeps
// a disturbed measurement from deciding a whole model.
#pragma once

#include <vector>

namespace shardc::calibrate {

/// The sample at `fraction` (0 = the smallest, 0.5 = the median, the lower
/// one of an even count) of `samples`; 0 when there are none.
double sampleQuantile(std::vector<double> samples, double fraction);

/// The time of a measurement repeated `samples.size()` times whose noise is
/// one-sided (another process's time slice, a page fault, an interrupt only
/// ever add time): the lower quartile, which stands while up to three
/// quarters of the samples are disturbed and, unlike the minimum, does not
/// report the one luckiest run.
double oneSidedTime(const std::vector<double> &samples);

/// One measurement of what a collective adds among busy ranks.
struct BusyLatencySample {
  /// What a collective after each round of arithmetic adds to the round.
  double added = 0;
  /// The round's time without the collective.
  double round = 0;
  /// The share of the cores the measured ranks could use that they had
  /// while measuring (coreShare); less than 1 when another program ran.
  double coreShare = 1;
};

/// The share of `cores` cores that ranks using `cpuSeconds` of CPU time in
/// all over `wallSeconds` had, at most 1. The ranks never sleep (their
/// waits poll and yield), so on a quiet machine they use every core they
/// can (`cores` = the fewer of the ranks and the cores they may run on):
/// what is missing went to another program.
double coreShare(double cpuSeconds, double wallSeconds, int cores);

/// A share of the cores below which a busy latency was measured while
/// another program ran (0.98-0.99 on the quiet machine with 4 ranks on 2
/// cores; 0.74-0.81 with one other program running, which put the figure at
/// 230-330 us against 100-130 us quiet; 0.2-0.55 during a test run). Such a
/// figure measures that program too: measured again, and warned about when
/// every attempt was disturbed.
constexpr double kBusyLatencyMinCoreShare = 0.9;

/// True when `sample` was measured with less than kBusyLatencyMinCoreShare.
bool busyLatencyDisturbed(const BusyLatencySample &sample);

/// The busy latency from blocks of `rounds` rounds of arithmetic timed with
/// (`synchronized`) and without (`free`) a collective after each round: the
/// difference of the two medians per round, never negative, and the free
/// round's time. Medians, not a low quantile: the time slices a
/// synchronized block loses to waiting are the figure itself, caught in
/// some blocks and not in others, and a slow spell of the machine that
/// falls on both kinds of block alike cancels in the difference.
BusyLatencySample busyLatencyEstimate(const std::vector<double> &synchronized,
                                      const std::vector<double> &free, int rounds);

/// The lockstep latency of an axis: the median of its collective kinds'
/// small-size latencies (one odd kind does not move it).
double lockstepLatency(const std::vector<double> &kindLatencies);

/// The two limits of a believable busy latency; past both, time was taken by
/// something outside the measured ranks (another program's burst):
/// - kBusyLatencyLimitRatio x the axis's lockstep latency. Waiting for a
///   partner's share of a time slice puts the busy latency 10-400x above
///   the lockstep one here (30-150 us on the idle machine and up to 700 us
///   while another program ran, against 1-6 us, with 4 ranks on 2 cores).
/// - kBusyLatencyLimitRounds x the round of arithmetic between collectives:
///   waiting ranks give their cores up, so a collective makes the ranks
///   sharing the cores take turns at worst, about a round more (0.1-0.6
///   with 4 ranks on 2 cores and 250 us rounds, up to 1.4 under load). The
///   first limit covers short rounds, where one time slice spans several.
constexpr double kBusyLatencyLimitRatio = 300;
/// See kBusyLatencyLimitRatio.
constexpr double kBusyLatencyLimitRounds = 2;

/// The largest busy latency believed for `sample` on an axis of lockstep
/// latency `lockstep`: the larger of the two limits.
double busyLatencyLimit(const BusyLatencySample &sample, double lockstep);

/// The busy latency of an axis of lockstep latency `lockstep` from
/// `attempts` (each made because the ones before were past the limit or
/// disturbed): the smallest believed one (a disturbance only adds time),
/// one measured undisturbed when there is one, or a negative value when
/// none is believed.
double chooseBusyLatency(const std::vector<BusyLatencySample> &attempts, double lockstep);

/// Flops, bytes (its operands and result) and seconds of one product.
struct GemmSample {
  double flops = 0, bytes = 0, seconds = 0;
};

/// A product's flop rate and the bandwidth at which it moves its operands.
struct GemmRates {
  double flopRate = 0, operandBandwidth = 0;
};

/// The rates from a square and a skinny product, solving
/// seconds = flops / flopRate + bytes / operandBandwidth for the two. A
/// product reads its operands from memory at least once, so they move no
/// faster than `memoryBandwidth` (the triad's): a faster solution, or none
/// (noise made one product look cheaper per flop and per byte), is noise,
/// and the operands are priced at the memory's bandwidth with the rate
/// solved from the square product. (An infinite bandwidth, written before,
/// made every plan that keeps whole weights look free of operand traffic.)
GemmRates fitGemm(const GemmSample &square, const GemmSample &skinny, double memoryBandwidth);

/// The busy latency written for an axis whose every attempt was past the
/// bound: the largest figure believed on another axis of the same run (the
/// same ranks on the same cores), or 0 when no axis was believed (each
/// collective kind then keeps its lockstep latency).
double fallbackBusyLatency(const std::vector<double> &believedOnOtherAxes);

} // namespace shardc::calibrate
