// Unit tests for shardc-calibrate's statistics (tools/shardc-calibrate/
// Estimate.h) on made-up timings with disturbed samples: a disturbance only
// adds time, and a few disturbed samples must not move a figure.
#include "tools/shardc-calibrate/Estimate.h"

#include <catch2/catch.hpp>

#include <vector>

using namespace shardc::calibrate;

namespace {

constexpr double us = 1e-6;

/// Blocks of `rounds` rounds taking `perRound` seconds each, `count` of them,
/// with `extra` seconds added to the blocks at `disturbed`.
std::vector<double> blocks(int count, int rounds, double perRound,
                           const std::vector<int> &disturbed = {}, double extra = 0) {
  std::vector<double> times(static_cast<size_t>(count), rounds * perRound);
  for (int i : disturbed)
    times[static_cast<size_t>(i)] += extra;
  return times;
}

} // namespace

TEST_CASE("calibrate estimate: sampleQuantile picks an order statistic", "[calibrate]") {
  const std::vector<double> samples = {5, 1, 4, 2, 3};
  CHECK(sampleQuantile(samples, 0) == 1);
  CHECK(sampleQuantile(samples, 0.25) == 2);
  CHECK(sampleQuantile(samples, 0.5) == 3);
  CHECK(sampleQuantile(samples, 1) == 5);
  CHECK(sampleQuantile({4, 1, 3, 2}, 0.5) == 2); // the lower median of an even count
  CHECK(sampleQuantile({7}, 0.25) == 7);
  CHECK(sampleQuantile({}, 0.5) == 0);
}

TEST_CASE("calibrate estimate: a time stands while most samples are disturbed", "[calibrate]") {
  // Ten gemm runs of 20 ms, six of them slowed by another program's time
  // slices (the median would be one of them); the lower quartile is not.
  std::vector<double> runs = {0.020, 0.020, 0.020, 0.031, 0.036, 0.052, 0.020, 0.045, 0.150, 0.028};
  CHECK(sampleQuantile(runs, 0.5) > 0.025);
  CHECK(oneSidedTime(runs) == Approx(0.020));
  // Nor does one lucky sample decide it, as the minimum would.
  runs[0] = 0.012;
  CHECK(oneSidedTime(runs) == Approx(0.020));
}

TEST_CASE("calibrate estimate: busy latency with disturbed blocks", "[calibrate]") {
  const int rounds = 40, pairs = 11;
  const double round = 250 * us, added = 100 * us;
  SECTION("undisturbed") {
    BusyLatencySample s = busyLatencyEstimate(blocks(pairs, rounds, round + added),
                                              blocks(pairs, rounds, round), rounds);
    CHECK(s.added == Approx(added));
    CHECK(s.round == Approx(round));
  }
  SECTION("five of eleven synchronized blocks took 112 ms more") {
    // What one stall in a block of 40 rounds did before: 2.8 ms a round.
    BusyLatencySample s =
        busyLatencyEstimate(blocks(pairs, rounds, round + added, {0, 3, 4, 7, 10}, 0.112),
                            blocks(pairs, rounds, round), rounds);
    CHECK(s.added == Approx(added));
  }
  SECTION("disturbed free blocks do not cancel the figure") {
    BusyLatencySample s =
        busyLatencyEstimate(blocks(pairs, rounds, round + added),
                            blocks(pairs, rounds, round, {1, 2, 5, 9}, 0.05), rounds);
    CHECK(s.added == Approx(added));
    CHECK(s.round == Approx(round));
  }
  SECTION("a slow spell over both kinds cancels") {
    // Another program took half the cores for the whole measurement: both
    // kinds of block slow down alike, the difference stays.
    BusyLatencySample s = busyLatencyEstimate(blocks(pairs, rounds, 2 * round + added),
                                              blocks(pairs, rounds, 2 * round), rounds);
    CHECK(s.added == Approx(added));
  }
  SECTION("never negative") {
    BusyLatencySample s = busyLatencyEstimate(blocks(pairs, rounds, round),
                                              blocks(pairs, rounds, round + added), rounds);
    CHECK(s.added == 0);
  }
}

TEST_CASE("calibrate estimate: the lockstep latency is the kinds' median", "[calibrate]") {
  // One kind (all_gather) measured 78 us while the others took 5-7 us.
  CHECK(lockstepLatency({77.9 * us, 6.6 * us, 4.6 * us, 5.2 * us}) == Approx(5.2 * us));
}

TEST_CASE("calibrate estimate: a busy latency past both limits is not believed", "[calibrate]") {
  const double lockstep = lockstepLatency({1.3 * us, 1.5 * us, 6.1 * us, 0.9 * us});
  SECTION("the bad calibration: 2.8 ms on 250 us rounds, 1.3 us in lockstep") {
    const BusyLatencySample bad{2800 * us, 250 * us};
    CHECK(busyLatencyLimit(bad, lockstep) < bad.added);
    CHECK(chooseBusyLatency({bad}, lockstep) < 0);
    CHECK(chooseBusyLatency({bad, {3100 * us, 260 * us}}, lockstep) < 0);
    // Measured again once the burst has passed: the believed attempt.
    CHECK(chooseBusyLatency({bad, {120 * us, 250 * us}}, lockstep) == Approx(120 * us));
  }
  SECTION("figures measured here are believed") {
    // 4 ranks on 2 cores, idle and while another program ran.
    CHECK(chooseBusyLatency({{150 * us, 250 * us}}, lockstep) == Approx(150 * us));
    CHECK(chooseBusyLatency({{465 * us, 607 * us}}, 1.13 * us) == Approx(465 * us));
    // 4 ranks on one core with --quick's 50 us rounds: a time slice spans
    // several rounds, and the lockstep limit holds it.
    CHECK(chooseBusyLatency({{300 * us, 54 * us}}, 10 * us) == Approx(300 * us));
  }
  SECTION("the smallest believed attempt wins") {
    CHECK(chooseBusyLatency({{180 * us, 250 * us}, {90 * us, 250 * us}, {140 * us, 250 * us}},
                            lockstep) == Approx(90 * us));
    CHECK(chooseBusyLatency({}, lockstep) < 0);
  }
}

TEST_CASE("calibrate estimate: another program's share of the cores", "[calibrate]") {
  // 4 ranks on 2 cores for 1 s: 2 s of CPU on a quiet machine.
  CHECK(coreShare(2.0, 1.0, 2) == Approx(1.0));
  CHECK(coreShare(2.05, 1.0, 2) == 1.0); // clock skew between ranks
  // A test run on both cores left them 0.9 s of CPU.
  const double busyMachine = coreShare(0.9, 1.0, 2);
  CHECK(busyMachine == Approx(0.45));
  CHECK(busyLatencyDisturbed({100 * us, 250 * us, busyMachine}));
  CHECK_FALSE(busyLatencyDisturbed({100 * us, 250 * us, coreShare(1.96, 1.0, 2)}));
  CHECK(busyLatencyDisturbed({100 * us, 250 * us, coreShare(1.6, 1.0, 2)})); // one other program
  CHECK(coreShare(1.0, 0.0, 2) == 1);                                        // nothing measured
}

TEST_CASE("calibrate estimate: an undisturbed attempt is preferred", "[calibrate]") {
  const double lockstep = 1.5 * us;
  // Measured while a test run took half the cores, then again on a quiet
  // machine: the quiet figure, though the disturbed one is smaller.
  CHECK(chooseBusyLatency({{60 * us, 700 * us, 0.45}, {110 * us, 250 * us, 0.97}}, lockstep) ==
        Approx(110 * us));
  // Every attempt disturbed: the smallest believed one all the same.
  CHECK(chooseBusyLatency({{600 * us, 700 * us, 0.45}, {400 * us, 650 * us, 0.5}}, lockstep) ==
        Approx(400 * us));
  // An undisturbed attempt past the limit is still not believed.
  CHECK(chooseBusyLatency({{2800 * us, 250 * us, 0.97}, {500 * us, 700 * us, 0.5}}, lockstep) ==
        Approx(500 * us));
}

TEST_CASE("calibrate estimate: fallback for a busy latency not believed", "[calibrate]") {
  CHECK(fallbackBusyLatency({}) == 0);
  CHECK(fallbackBusyLatency({80 * us, 120 * us}) == Approx(120 * us));
}

TEST_CASE("calibrate estimate: gemm rates with the operands no faster than memory", "[calibrate]") {
  // Products at 100 GFLOP/s whose operands move at 5 GB/s; memory at 7 GB/s.
  auto product = [](double flops, double bytes, double rate, double bandwidth) {
    return GemmSample{flops, bytes, flops / rate + bytes / bandwidth};
  };
  const double square = 2.0 * 1024 * 1024 * 1024, squareBytes = 3.0 * 4 * 1024 * 1024;
  const double skinny = 2.0 * 128 * 1024 * 4096,
               skinnyBytes = 4.0 * (128 * 1024 + 1024 * 4096 + 128 * 4096);
  GemmRates clean = fitGemm(product(square, squareBytes, 100e9, 5e9),
                            product(skinny, skinnyBytes, 100e9, 5e9), 7e9);
  CHECK(clean.flopRate == Approx(100e9));
  CHECK(clean.operandBandwidth == Approx(5e9));
  SECTION("a slow square product: no solution, the memory's bandwidth") {
    // The square product was disturbed, so the skinny one looks cheaper per
    // flop and per byte; this wrote 1e15 B/s (operands free) before.
    GemmSample slowSquare = product(square, squareBytes, 100e9, 5e9);
    slowSquare.seconds *= 1.5;
    GemmRates r = fitGemm(slowSquare, product(skinny, skinnyBytes, 100e9, 5e9), 7e9);
    CHECK(r.operandBandwidth == 7e9);
    CHECK(r.flopRate > 0);
    CHECK(r.flopRate < 100e9);
  }
  SECTION("a solution faster than memory is clamped to it") {
    GemmSample slowSkinny = product(skinny, skinnyBytes, 100e9, 5e9);
    slowSkinny.seconds *= 0.9; // the skinny product's bytes look almost free
    GemmRates r = fitGemm(product(square, squareBytes, 100e9, 5e9), slowSkinny, 7e9);
    CHECK(r.operandBandwidth == 7e9);
  }
}
