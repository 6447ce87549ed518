// What the parts of shardc-calibrate share: its options, the timing of a
// body on every rank of a communicator, and step 2 (per mesh axis).
#pragma once

#include "ir/Sharding.h"
#include "passes/auto_shard/CostModel.h"
#include "runtime/shardrt.h"

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace shardc::calibrate {

/// The command line: what to measure and at what sizes.
struct Options {
  std::string mesh, output;
  int gemmN = 1024;
  size_t streamBytes = 64u << 20;
  size_t collectiveBytes = 8u << 20;
  int repeats = 5;
};

/// Seconds on a steady clock.
double now();

/// Waits for `request` giving the core up between polls (see timing.cpp).
void waitYielding(MPI_Request &request);

/// MPI_Allreduce of `count` `type`s by `op` on `comm`, waiting as
/// waitYielding does.
void allreduceYielding(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm);

/// The slowest rank's time of `body` on `comm`, `repeats` times (after a
/// warm-up run unless `warmUp` is false).
std::vector<double> samples(MPI_Comm comm, int repeats, const std::function<void()> &body,
                            bool warmUp = true);

/// The time of `body` on `comm` from `repeats` samples (oneSidedTime).
double timed(MPI_Comm comm, int repeats, const std::function<void()> &body);

/// Step 2: each axis of `mesh` of size > 1 with its collectives' figures, in
/// the mesh's order; prints them on rank 0, warnings on stderr.
std::vector<std::pair<std::string, autoshard::AxisCost>>
measureAxes(shardrt_context *ctx, const Mesh &mesh, int rank, const Options &o);

} // namespace shardc::calibrate
