// The cost model's defaults and its JSON form (the format is documented in
// CostModel.h, where shardc-calibrate and users read it).
#include "passes/auto_shard/CostModel.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace shardc::autoshard {
namespace {

using nlohmann::json;

double positive(const json &object, const char *field, double fallback, const std::string &where) {
  if (!object.contains(field))
    return fallback;
  const json &v = object.at(field);
  if (!v.is_number() || v.get<double>() <= 0)
    throw CostModelError(where + " - \"" + field + "\" must be a positive number");
  return v.get<double>();
}

const json &objectField(const json &object, const char *field, const std::string &where) {
  const json &v = object.at(field);
  if (!v.is_object())
    throw CostModelError(where + " - \"" + field + "\" must be an object");
  return v;
}

const char *const kCollectiveKinds[] = {"all_gather", "all_reduce", "reduce_scatter", "all_to_all",
                                        "collective_permute"};

bool isKind(const std::string &name) {
  return std::find_if(std::begin(kCollectiveKinds), std::end(kCollectiveKinds),
                      [&](const char *k) { return name == k; }) != std::end(kCollectiveKinds);
}

/// An axis object: latency, bandwidth and optional per-kind objects; kinds
/// not given keep those of `fallback` unless the axis sets its own latency
/// or bandwidth.
AxisCost readAxis(const json &object, const AxisCost &fallback, const std::string &where) {
  AxisCost out(positive(object, "latency", fallback.latency, where),
               positive(object, "bandwidth", fallback.bandwidth, where));
  if (!object.contains("latency") && !object.contains("bandwidth"))
    out.kinds = fallback.kinds;
  for (const auto &item : object.items()) {
    const std::string &key = item.key();
    if (key == "latency" || key == "bandwidth")
      continue;
    if (!isKind(key))
      throw CostModelError(where + " - unknown field: \"" + key + "\"");
    std::string kindWhere = where + ".\"" + key + "\"";
    if (!item.value().is_object())
      throw CostModelError(kindWhere + " - must be an object");
    out.kinds[key] = CollectiveCost{positive(item.value(), "latency", out.latency, kindWhere),
                                    positive(item.value(), "bandwidth", out.bandwidth, kindWhere)};
  }
  return out;
}

json axisToJson(const AxisCost &c) {
  json out = {{"latency", c.latency}, {"bandwidth", c.bandwidth}};
  for (const auto &[kind, k] : c.kinds)
    out[kind] = {{"latency", k.latency}, {"bandwidth", k.bandwidth}};
  return out;
}

} // namespace

double CostModel::flopRate(DType dtype) const {
  auto it = flops.find(dtype);
  if (it != flops.end())
    return it->second;
  it = flops.find(DType::F32);
  return it != flops.end() ? it->second : 1e11;
}

CollectiveCost AxisCost::of(const std::string &kind) const {
  auto it = kinds.find(kind);
  return it != kinds.end() ? it->second : CollectiveCost{latency, bandwidth};
}

CollectiveCost CostModel::axisCost(const std::vector<std::string> &axisNames,
                                   const std::string &kind) const {
  if (axisNames.empty())
    return collective.of(kind);
  CollectiveCost out{0, 0};
  for (const std::string &name : axisNames) {
    auto it = axes.find(name);
    CollectiveCost c = (it != axes.end() ? it->second : collective).of(kind);
    out.latency = std::max(out.latency, c.latency);
    out.bandwidth = out.bandwidth == 0 ? c.bandwidth : std::min(out.bandwidth, c.bandwidth);
  }
  return out;
}

CostModel defaultCostModel() {
  CostModel model;
  model.flops = {{DType::F32, 1.7e11},
                 {DType::F64, 8e10},
                 {DType::I32, 5e10},
                 {DType::I64, 2.5e10},
                 {DType::I1, 5e10}};
  model.memoryBandwidth = 1e10;
  model.gemmBandwidth = 7.5e9;
  model.collective = AxisCost{5e-5, 3e9};
  return model;
}

CostModel parseCostModel(const std::string &text, const std::string &origin) {
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded())
    throw CostModelError(origin + " - not valid JSON");
  if (!doc.is_object())
    throw CostModelError(origin + " - the cost model must be a JSON object");
  CostModel model = defaultCostModel();
  for (const auto &item : doc.items()) {
    // A plain variable: C++17 lambdas cannot capture structured bindings
    // (clang rejects it).
    const std::string &key = item.key();
    static const char *const known[] = {"flops", "memory_bandwidth", "gemm_bandwidth", "collective",
                                        "axes"};
    if (std::find_if(std::begin(known), std::end(known), [&](const char *k) { return key == k; }) ==
        std::end(known))
      throw CostModelError(origin + " - unknown field: \"" + key + "\"");
  }
  if (doc.contains("flops")) {
    const json &flops = objectField(doc, "flops", origin);
    for (const auto &[key, value] : flops.items()) {
      std::optional<DType> dtype = parseDType(key);
      if (!dtype)
        throw CostModelError(origin + " - \"flops\" has an unknown element type: \"" + key + "\"");
      model.flops[*dtype] = positive(flops, key.c_str(), 1, origin + " \"flops\"");
    }
  }
  model.memoryBandwidth = positive(doc, "memory_bandwidth", model.memoryBandwidth, origin);
  model.gemmBandwidth = positive(doc, "gemm_bandwidth", model.gemmBandwidth, origin);
  if (doc.contains("collective"))
    model.collective = readAxis(objectField(doc, "collective", origin), model.collective,
                                origin + " \"collective\"");
  if (doc.contains("axes"))
    for (const auto &[name, value] : objectField(doc, "axes", origin).items()) {
      std::string where = origin + " \"axes\".\"" + name + "\"";
      if (!value.is_object())
        throw CostModelError(where + " - must be an object");
      model.axes[name] = readAxis(value, model.collective, where);
    }
  return model;
}

CostModel loadCostModel(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw CostModelError(path + " - cannot read the cost model file");
  std::stringstream text;
  text << in.rdbuf();
  return parseCostModel(text.str(), path);
}

std::string costModelToJson(const CostModel &model) {
  json doc;
  for (const auto &[dtype, rate] : model.flops)
    doc["flops"][dtypeName(dtype)] = rate;
  doc["memory_bandwidth"] = model.memoryBandwidth;
  doc["gemm_bandwidth"] = model.gemmBandwidth;
  doc["collective"] = axisToJson(model.collective);
  for (const auto &[name, c] : model.axes)
    doc["axes"][name] = axisToJson(c);
  return doc.dump(2) + "\n";
}

} // namespace shardc::autoshard
