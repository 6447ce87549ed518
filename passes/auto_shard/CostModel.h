// The machine model auto-sharding prices strategies with: compute rates,
// memory bandwidth and, per mesh axis, collective latency and bandwidth
// (alpha-beta). Built-in defaults for the development machine, or a JSON file
// (--cost-model FILE.json, written by hand or by shardc-calibrate).
//
// JSON format (every field optional; missing ones keep the defaults):
//
//   {
//     "flops": {"f32": 1.7e11, "f64": 8.0e10, "i32": 5.0e10, "i64": 2.5e10, "i1": 5.0e10},
//                                      // operations per second per device
//     "gemm_bandwidth": 7.5e9,         // bytes per second a contraction moves
//                                      // its operands and result at
//     "memory_bandwidth": 1.0e10,      // bytes per second per device
//     "collective": {"latency": 5.0e-5, "bandwidth": 3.0e9},
//                                      // every mesh axis: seconds, bytes/s
//     "axes": {"x": {"latency": 2.0e-4, "bandwidth": 1.0e9,
//                    "all_reduce": {"latency": 3.0e-4, "bandwidth": 8.0e8}}}
//                                      // per mesh axis name, e.g. across nodes,
//                                      // and per collective kind within it
//   }
//
// A contraction (matmul, einsum) takes flops / flops[dtype] plus the bytes of
// its operands and result over gemm_bandwidth: BLAS packs its operands, so a
// skinny product that reads a large weight for few rows is slower per flop
// than a square one (on the development machine 128x1024x4096 f32 runs at
// 120 GFLOP/s against 149 for 1024^3). Other ops move their bytes at
// memory_bandwidth. Collective bandwidths count the bytes the reshard planner
// counts per device ((n-1) L for all_gather, 2(n-1)/n L for all_reduce, ...).
// A collective over several axes pays the largest latency and the smallest
// bandwidth of its axes; a kind given for an axis (or under "collective")
// overrides that axis's latency and bandwidth for that kind.
#pragma once

#include "ir/Types.h"

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace shardc::autoshard {

/// Latency (seconds) and bandwidth (bytes per second) of one collective.
struct CollectiveCost {
  double latency = 5e-5;
  double bandwidth = 3e9;
};

/// The collectives on one mesh axis: every kind, unless measured apart.
struct AxisCost : CollectiveCost {
  /// By kind name ("all_gather", "all_reduce", "reduce_scatter",
  /// "all_to_all", "collective_permute").
  std::map<std::string, CollectiveCost> kinds;

  AxisCost() = default;
  AxisCost(double latency, double bandwidth) : CollectiveCost{latency, bandwidth} {}
  /// The cost of a collective of `kind` ("" for any) on this axis.
  CollectiveCost of(const std::string &kind) const;
};

struct CostModel {
  /// Operations per second per device, by element type.
  std::map<DType, double> flops;
  /// Bytes per second per device.
  double memoryBandwidth = 1e10;
  /// Bytes per second a contraction moves its operands and result at, on
  /// top of its flops (BLAS packing).
  double gemmBandwidth = 7.5e9;
  /// Every mesh axis not in `axes`.
  AxisCost collective;
  std::map<std::string, AxisCost> axes;

  /// The rate for `dtype` (the f32 rate when not given).
  double flopRate(DType dtype) const;
  /// The cost of a collective of `kind` ("" for any) over these mesh axis
  /// names.
  CollectiveCost axisCost(const std::vector<std::string> &axisNames,
                          const std::string &kind = "") const;
};

/// The built-in model of the machine shardc was measured on (DESIGN.md;
/// shardc-calibrate on 2 ranks of a 2-core Xeon, avx512): 170 GFLOP/s f32
/// and 80 f64 per rank with operands moved at 7.5 GB/s, 10 GB/s memory per
/// rank, MPI collectives ~3 GB/s; latency 50 us, an allowance for meshes
/// spanning nodes (one node measures ~1 us).
CostModel defaultCostModel();

/// A cost model file that cannot be used: the message names the file and
/// the field, e.g. `model.json - "memory_bandwidth" must be a positive number`.
struct CostModelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Reads `path` over the defaults. Throws CostModelError.
CostModel loadCostModel(const std::string &path);
/// Parses JSON text (`origin` names it in errors) over the defaults.
CostModel parseCostModel(const std::string &text, const std::string &origin);
/// The JSON form of `model` (what shardc-calibrate writes).
std::string costModelToJson(const CostModel &model);

} // namespace shardc::autoshard
