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

AxisCost readAxis(const json &object, AxisCost fallback, const std::string &where) {
  return AxisCost{positive(object, "latency", fallback.latency, where),
                  positive(object, "bandwidth", fallback.bandwidth, where)};
}

} // namespace

double CostModel::flopRate(DType dtype) const {
  auto it = flops.find(dtype);
  if (it != flops.end())
    return it->second;
  it = flops.find(DType::F32);
  return it != flops.end() ? it->second : 1e11;
}

AxisCost CostModel::axisCost(const std::vector<std::string> &axisNames) const {
  if (axisNames.empty())
    return collective;
  AxisCost out{0, 0};
  for (const std::string &name : axisNames) {
    auto it = axes.find(name);
    AxisCost c = it != axes.end() ? it->second : collective;
    out.latency = std::max(out.latency, c.latency);
    out.bandwidth = out.bandwidth == 0 ? c.bandwidth : std::min(out.bandwidth, c.bandwidth);
  }
  return out;
}

CostModel defaultCostModel() {
  CostModel model;
  model.flops = {{DType::F32, 1e11},
                 {DType::F64, 5e10},
                 {DType::I32, 5e10},
                 {DType::I64, 2.5e10},
                 {DType::I1, 5e10}};
  model.memoryBandwidth = 2e10;
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
    static const char *const known[] = {"flops", "memory_bandwidth", "collective", "axes"};
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
  doc["collective"] = {{"latency", model.collective.latency},
                       {"bandwidth", model.collective.bandwidth}};
  for (const auto &[name, c] : model.axes)
    doc["axes"][name] = {{"latency", c.latency}, {"bandwidth", c.bandwidth}};
  return doc.dump(2) + "\n";
}

} // namespace shardc::autoshard
