// Pricing for auto-sharding: compute time of a strategy (a contraction's
// flops plus the bytes it packs and its canonical copies, other ops' bytes
// less those of values fused into their consumer's loop, per device against
// the cost model's rates), its own reduction, its memory, and the
// alpha-beta time of the reshard planner's plans (with the runtime's packing
// of blocks that are not contiguous), so that the solver and the
// partitioner price the same collectives.
#include "passes/auto_shard/AutoShardInternal.h"

#include "ir/AxisAlgebra.h"
#include "ir/ContractionPlan.h"
#include "ir/ElementalOps.h"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <unordered_map>

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

/// Elements before `dim` in a row-major `shape`: how many separate rows of
/// the dim there are.
int64_t outerOf(const std::vector<int64_t> &shape, int64_t dim) {
  int64_t outer = 1;
  for (int64_t d = 0; d < dim && d < static_cast<int64_t>(shape.size()); ++d)
    outer *= shape[static_cast<size_t>(d)];
  return outer;
}

/// Bytes the runtime copies beside the MPI call of `step` (read once and
/// written once each): MPI moves one contiguous block per group member, so
/// a step on a dim that is not the outermost packs its input
/// (reduce_scatter, all_to_all's split dim) or unpacks what arrives
/// (all_gather, all_to_all's concat dim), as runtime/Collectives.cpp and
/// AllToAll.cpp do. The calibration times contiguous blocks.
double packedBytes(const ReshardStep &step, DType dtype, int64_t groupSize) {
  const std::vector<int64_t> &after = step.localShapeAfter;
  double bytes = shapeBytes(dtype, after);
  switch (step.kind) {
  case ReshardStepKind::AllGather:
    return outerOf(after, step.dim) > 1 ? bytes : 0;
  case ReshardStepKind::ReduceScatter:
    return outerOf(after, step.dim) > 1 ? bytes * static_cast<double>(groupSize) : 0;
  case ReshardStepKind::AllToAll:
    return (outerOf(after, step.dim) > 1 ? bytes : 0) +
           (outerOf(after, step.concatDim) > 1 ? bytes : 0);
  default:
    return 0;
  }
}

/// Bytes of the canonical copies a contraction takes on a device when its
/// local operands or result are not matrices BLAS reads in place
/// (ir/ContractionPlan.h, as backend/llvm/Contraction.cpp copies them).
double canonicalCopyBytes(const Op &op, const Strategy &s, const Mesh &mesh, DType dtype) {
  if (!isFloat(dtype) || s.operands.size() != op.operands.size())
    return 0;
  std::vector<std::vector<int64_t>> operands;
  for (size_t i = 0; i < op.operands.size(); ++i)
    operands.push_back(localShape(op.operands[i]->type.shape, s.operands[i], mesh));
  std::vector<int64_t> result = localShape(op.result()->type.shape, s.computed, mesh);
  std::string error;
  std::optional<ContractionPlan> plan = ContractionPlan::of(op, operands, result, error);
  std::optional<GemmPlan> gemm = plan ? planGemm(*plan) : std::nullopt;
  if (!gemm)
    return 0;
  double bytes = 0;
  if (!gemm->a.direct)
    bytes += shapeBytes(dtype, operands[0]);
  if (!gemm->b.direct)
    bytes += shapeBytes(dtype, operands[1]);
  if (!gemm->c.direct)
    bytes += shapeBytes(dtype, result);
  return bytes;
}

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
  KeyWords key;
  key.reserve(48);
  appendReshardKey(key, type, from, partialKind, partial, to);
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
  return plans_.emplace(std::move(key), planReshard(request)).first->second;
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
    if (step.mesh)
      seconds +=
          2 * packedBytes(step, dtype, productOf(step.axes, *step.mesh)) / model_.memoryBandwidth;
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

namespace {

/// Ops whose result can be computed inside the loop of the op reading it.
/// (A reduction's result is stored: each of its elements is a loop.)
bool computedInPlace(OpKind kind) {
  return isElementalOp(kind) && opInfo(kind).group != OpGroup::Reduction;
}

} // namespace

void Pricer::noteFusion(const Block &body) {
  // Uses per value; a use inside a nested block or by `return` counts as
  // two (the value is stored for it).
  std::unordered_map<const Value *, int> uses;
  std::unordered_map<const Value *, const Op *> reader;
  std::function<void(const Block &, bool)> count = [&](const Block &block, bool nested) {
    for (const auto &op : block.ops) {
      for (const Value *v : op->operands) {
        uses[v] += nested ? 2 : 1;
        reader[v] = op.get();
      }
      for (const Block *inner : {op->body.get(), op->cond.get(), op->elseBody.get()})
        if (inner)
          count(*inner, true);
    }
    for (const Value *v : block.returned)
      uses[v] += 2;
  };
  count(body, false);
  for (const auto &op : body.ops)
    if (computedInPlace(op->kind) && op->results.size() == 1) {
      const Value *v = op->result();
      auto it = uses.find(v);
      if (it != uses.end() && it->second == 1 && isElementalOp(reader[v]->kind))
        fused_.insert(v);
    }
}

void Pricer::price(const Op *op, const TensorType &type, Strategy &s) {
  const Mesh &mesh = meshOf(s.result);
  s.memory = localBytes(type, s.result, mesh);
  // An identity moves no data (partition_ops.cpp).
  if (!op || op->kind == OpKind::Identity) {
    s.compute = s.communication = 0;
    return;
  }
  // Computed layout (before the reduction) and bytes touched per device.
  double bytes = 0;
  for (size_t i = 0; i < op->operands.size() && i < s.operands.size(); ++i)
    if (!fused_.count(op->operands[i]))
      bytes += localBytes(op->operands[i]->type, s.operands[i], mesh);
  const Sharding &computed = s.computed;
  if (!fused_.count(op->result()))
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
  // Copies into and out of the GEMM's canonical layout: read and written
  // once each, held (shardrt_alloc'd) while the op runs.
  double copies = group == OpGroup::Contraction ? canonicalCopyBytes(*op, s, mesh, type.dtype) : 0;
  seconds += 2 * copies / model_.memoryBandwidth;
  s.compute = seconds;
  s.communication = 0;
  s.transient = arenaBytes(copies);
  if (!s.partial.empty() || !sameLayout(computed, s.result, mesh)) {
    const ReshardPlan &reduction = plan(type, computed, s.partial, s.partialKind, s.result);
    s.communication = time(reduction, type.dtype);
    // The result is the value's own bytes; the computed one is live until
    // the reduction has read it (while the copies are, and after them).
    double held = arenaBytes(localBytes(type, computed, mesh));
    s.transient = held + std::max(arenaBytes(copies),
                                  workingBytes(reduction, type, computed, /*withResult=*/false));
  }
}

} // namespace shardc::autoshard
