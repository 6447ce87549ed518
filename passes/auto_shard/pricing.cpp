// Pricing for auto-sharding: compute time of a strategy (a contraction's
// flops plus the bytes it packs, other ops' bytes, per device against the
// cost model's rates), its own reduction, its memory, and the alpha-beta
// time of the reshard planner's plans, so that the solver and the
// partitioner price the same collectives.
#include "passes/auto_shard/AutoShardInternal.h"

#include "ir/AxisAlgebra.h"

#include <algorithm>
#include <stdexcept>

namespace shardc::autoshard {

double shapeBytes(DType dtype, const std::vector<int64_t> &shape) {
  double n = static_cast<double>(dtypeBytes(dtype));
  for (int64_t d : shape)
    n *= static_cast<double>(d);
  return n;
}

double localBytes(const TensorType &type, const Sharding &s, const Mesh &mesh) {
  return shapeBytes(type.dtype, localShape(type.shape, s, mesh));
}

namespace {

/// A tiny per-kind epsilon: among plans of equal time, prefer
/// reduce_scatter over all_reduce, and fewer steps.
double tieBreak(ReshardStepKind kind) { return kind == ReshardStepKind::AllReduce ? 2e-9 : 1e-9; }

} // namespace

const Mesh &Pricer::meshOf(const Sharding &s) const {
  const Mesh *mesh = module_.findMesh(s.meshName);
  if (!mesh)
    throw std::logic_error("auto-shard - unknown mesh: @" + s.meshName);
  return *mesh;
}

const ReshardPlan &Pricer::plan(const TensorType &type, const Sharding &from,
                                const std::vector<AxisRef> &partial, const std::string &partialKind,
                                const Sharding &to) {
  std::string key = type.str() + from.str() + "|" + partialKind;
  for (const AxisRef &a : partial)
    key += a.str();
  key += "|" + to.str();
  auto it = plans_.find(key);
  if (it != plans_.end())
    return it->second;
  ReshardRequest request;
  request.type = type;
  request.sourceMesh = &meshOf(from);
  request.source = from;
  request.partialAxes = partial;
  request.partialKind = partialKind;
  request.targetMesh = &meshOf(to);
  request.target = to;
  return plans_.emplace(key, planReshard(request)).first->second;
}

double Pricer::time(const ReshardPlan &plan, DType dtype) const {
  double seconds = 0;
  for (const ReshardStep &step : plan.steps) {
    if (step.kind == ReshardStepKind::Relabel)
      continue;
    if (step.kind == ReshardStepKind::AllSlice) { // a local copy of the block kept
      seconds += shapeBytes(dtype, step.localShapeAfter) / model_.memoryBandwidth;
      continue;
    }
    std::vector<std::string> names;
    for (const AxisRef &a : step.axes)
      names.push_back(a.name);
    CollectiveCost c = model_.axisCost(names, reshardStepName(step.kind));
    seconds += c.latency + static_cast<double>(step.bytes) / c.bandwidth + tieBreak(step.kind);
  }
  return seconds;
}

namespace {

/// The scratch the runtime's collective takes beside its input and output,
/// at most (runtime/Collectives.cpp): all_gather unpacks from a gathered
/// copy, all_to_all packs what it sends and what it receives,
/// reduce_scatter packs its input and receives the others' blocks, a large
/// all_reduce receives the others' blocks.
double scratchBytes(ReshardStepKind kind, double input, double output) {
  switch (kind) {
  case ReshardStepKind::AllGather:
    return output;
  case ReshardStepKind::AllToAll:
    return 2 * output;
  case ReshardStepKind::ReduceScatter:
    return 2 * input;
  case ReshardStepKind::AllReduce:
    return input;
  default:
    return 0;
  }
}

} // namespace

double Pricer::workingBytes(const ReshardPlan &plan, const TensorType &type, const Sharding &from,
                            bool withResult) const {
  std::vector<const ReshardStep *> moving;
  for (const ReshardStep &step : plan.steps)
    if (step.kind != ReshardStepKind::Relabel)
      moving.push_back(&step);
  double most = 0, input = localBytes(type, from, meshOf(from));
  for (size_t k = 0; k < moving.size(); ++k) {
    double output = shapeBytes(type.dtype, moving[k]->localShapeAfter);
    bool last = k + 1 == moving.size();
    // The source is its value's own bytes; a step's input is the previous
    // step's output, live with it; each step's output is an arena slot.
    double held = (k > 0 ? arenaBytes(input) : 0) + (last && !withResult ? 0 : arenaBytes(output));
    most = std::max(most, held + scratchBytes(moving[k]->kind, input, output));
    input = output;
  }
  return most;
}

void Pricer::price(const Op *op, const TensorType &type, Strategy &s) {
  const Mesh &mesh = meshOf(s.result);
  s.memory = localBytes(type, s.result, mesh);
  if (!op) {
    s.compute = s.communication = 0;
    return;
  }
  // Computed layout (before the reduction) and bytes touched per device.
  double bytes = 0;
  for (size_t i = 0; i < op->operands.size() && i < s.operands.size(); ++i)
    bytes += localBytes(op->operands[i]->type, s.operands[i], mesh);
  const Sharding &computed = s.computed;
  bytes += localBytes(type, computed, mesh);
  double seconds = bytes / model_.memoryBandwidth;
  OpGroup group = opInfo(op->kind).group;
  if (group == OpGroup::Contraction && !s.factorAxes.empty()) {
    std::optional<ShardingRule> rule = getShardingRule(*op);
    double flops = 2;
    for (size_t f = 0; rule && f < rule->numFactors(); ++f)
      flops *= static_cast<double>(rule->factorSizes[f]) /
               static_cast<double>(productOf(s.factorAxes[f], mesh));
    seconds = flops / model_.flopRate(type.dtype) + bytes / model_.gemmBandwidth;
  }
  s.compute = seconds;
  s.communication = 0;
  s.transient = 0;
  if (!s.partial.empty() || !sameLayout(computed, s.result, mesh)) {
    const ReshardPlan &reduction = plan(type, computed, s.partial, s.partialKind, s.result);
    s.communication = time(reduction, type.dtype);
    // The result is the value's own bytes; the computed one is live until
    // the reduction has read it.
    s.transient = arenaBytes(localBytes(type, computed, mesh)) +
                  workingBytes(reduction, type, computed, /*withResult=*/false);
  }
}

} // namespace shardc::autoshard
