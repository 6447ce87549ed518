// The machine model auto-sharding prices strategies with: compute rates,
// memory bandwidth and, per mesh axis, collective latency and bandwidth
// (alpha-beta). Built-in defaults for the development machine, or a JSON file
// (--cost-model FILE.json, written by hand or by shardc-calibrate).
//
// JSON format (every field optional; missing ones keep the defaults):
//
//   {
//     "flops": {"f32": 1.0e11, "f64": 5.0e10, "i32": 5.0e10, "i64": 2.5e10, "i1": 5.0e10},
//                                      // operations per second per device
//     "memory_bandwidth": 2.0e10,      // bytes per second per device
//     "collective": {"latency": 5.0e-5, "bandwidth": 3.0e9},
//                                      // every mesh axis: seconds, bytes/s
//     "axes": {"x": {"latency": 2.0e-4, "bandwidth": 1.0e9}}
//                                      // per mesh axis name, e.g. across nodes
//   }
//
// A collective over several axes pays the largest latency and the smallest
// bandwidth of its axes.
#pragma once

#include "ir/Types.h"

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace shardc::autoshard {

/// Latency (seconds) and bandwidth (bytes per second) of collectives on one
/// mesh axis.
struct AxisCost {
  double latency = 5e-5;
  double bandwidth = 3e9;
};

struct CostModel {
  /// Operations per second per device, by element type.
  std::map<DType, double> flops;
  /// Bytes per second per device.
  double memoryBandwidth = 2e10;
  /// Every mesh axis not in `axes`.
  AxisCost collective;
  std::map<std::string, AxisCost> axes;

  /// The rate for `dtype` (the f32 rate when not given).
  double flopRate(DType dtype) const;
  /// The cost of a collective over these mesh axis names.
  AxisCost axisCost(const std::vector<std::string> &axisNames) const;
};

/// The built-in model of the machine shardc was measured on (DESIGN.md):
/// ~100 GFLOP/s f32 (sgemm, one core), ~50 f64, ~20 GB/s memory, MPI
/// collectives ~3 GB/s with ~50 us latency.
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
