// Emits a reshard plan (ReshardPlanner.h) as per-device collectives: each
// step becomes all_slice, all_gather, all_to_all, all_reduce,
// reduce_scatter or collective_permute on the local value, plus a `slice`
// that drops the extra padding a gather of padded blocks leaves at the end
// of a dim. Every collective is recorded in the report.
#include "passes/partition/PartitionInternal.h"

namespace shardc::partition {
namespace {

NamedAttribute pairsAttr(const std::vector<std::pair<int64_t, int64_t>> &pairs) {
  Attribute list;
  list.kind = Attribute::Kind::List;
  for (auto [source, target] : pairs)
    list.list.push_back(intListAttr("", {source, target}).value);
  return NamedAttribute{"pairs", list, {}};
}

/// `slice %v` keeping the first `shape[d]` elements of every dim.
Value *trim(Body &body, Value *value, const std::vector<int64_t> &shape, Loc loc) {
  if (value->type.shape == shape)
    return value;
  std::vector<int64_t> zeros(shape.size(), 0), ones(shape.size(), 1);
  return body.emit(
      OpKind::Slice, {value},
      {intListAttr("start", zeros), intListAttr("limit", shape), intListAttr("stride", ones)},
      TensorType{shape, value->type.dtype}, loc, value->name);
}

Value *emitStep(Body &body, Value *v, const ReshardStep &step, Loc loc) {
  TensorType type = v->type;
  const std::string hint = v->name;
  switch (step.kind) {
  case ReshardStepKind::AllSlice:
    type.shape[step.dim] = localDimSize(type.shape[step.dim], productOf(step.axes, body.mesh));
    return body.emit(OpKind::AllSlice, {v}, {intAttr("dim", step.dim), axesAttr("axes", step.axes)},
                     type, loc, hint);
  case ReshardStepKind::AllGather:
    type.shape[step.dim] *= productOf(step.axes, body.mesh);
    return body.emit(OpKind::AllGather, {v},
                     {intAttr("dim", step.dim), axesAttr("axes", step.axes)}, type, loc, hint);
  case ReshardStepKind::AllToAll: {
    int64_t n = productOf(step.axes, body.mesh);
    type.shape[step.dim] /= n;
    type.shape[step.concatDim] *= n;
    return body.emit(OpKind::AllToAll, {v},
                     {intAttr("split_dim", step.dim), intAttr("concat_dim", step.concatDim),
                      axesAttr("axes", step.axes)},
                     type, loc, hint);
  }
  case ReshardStepKind::AllReduce:
    return body.emit(OpKind::AllReduce, {v},
                     {axesAttr("axes", step.axes), stringAttr("kind", step.reduceKind)}, type, loc,
                     hint);
  case ReshardStepKind::ReduceScatter:
    type.shape[step.dim] /= productOf(step.axes, body.mesh);
    return body.emit(OpKind::ReduceScatter, {v},
                     {intAttr("dim", step.dim), axesAttr("axes", step.axes)}, type, loc, hint);
  case ReshardStepKind::CollectivePermute:
    return body.emit(OpKind::CollectivePermute, {v}, {pairsAttr(step.pairs)}, type, loc, hint);
  case ReshardStepKind::Relabel:
  case ReshardStepKind::Broadcast:
    break;
  }
  throw std::logic_error("partition: a cross-mesh step inside one mesh");
}

/// What PartitionCaches::plans and Body::reshards are keyed by: everything
/// the plan depends on (partitioning asks for a key per operand of every op
/// that needs a collective, and per way it weighs).
KeyWords requestKey(const Body &body, const ReshardRequest &request) {
  KeyWords key;
  key.reserve(64);
  appendKey(key, body.mesh.name);
  appendReshardKey(key, request.type, request.source, request.partialKind, request.partialAxes,
                   request.target);
  return key;
}

/// planReshard(request), searched once per distinct request of the function
/// (PartitionCaches::plans, node-based: the plan stays where it is);
/// `key` is requestKey's.
const ReshardPlan &cachedPlan(Body &body, const ReshardRequest &request, KeyWords key, Loc cause) {
  auto search = [&] {
    try {
      return planReshard(request);
    } catch (const std::invalid_argument &e) {
      throw Unsupported(cause, e.what());
    }
  };
  auto known = body.caches->plans.find(key);
  if (known == body.caches->plans.end())
    known = body.caches->plans.emplace(std::move(key), search()).first;
  return known->second;
}

/// The request that moves `value` (of `globalType`) to `target`.
ReshardRequest requestFor(const Body &body, const Local &value, const TensorType &globalType,
                          const Sharding &target) {
  ReshardRequest request;
  request.type = globalType;
  request.sourceMesh = request.targetMesh = &body.mesh;
  request.source = value.sharding;
  request.partialAxes = value.partial;
  request.partialKind = value.partialKind;
  request.target = target;
  for (DimSharding &dim : request.target.dims)
    dim.open = false, dim.priority.reset();
  return request;
}

/// Body::reshards' key: the value is SSA and the plan a function of the
/// request, so the same request for the same local value gives the same
/// copy.
KeyWords reuseKey(const Local &value, const KeyWords &requestKey) {
  KeyWords key;
  key.reserve(requestKey.size() + 1);
  key.push_back(reinterpret_cast<uintptr_t>(value.value));
  key.insert(key.end(), requestKey.begin(), requestKey.end());
  return key;
}

} // namespace

int64_t reshardBytes(Body &body, const Local &value, const TensorType &globalType,
                     const Sharding &target, Loc cause) {
  if (value.partial.empty() && sameLayout(value.sharding, target))
    return 0;
  ReshardRequest request = requestFor(body, value, globalType, target);
  KeyWords key = requestKey(body, request);
  if (body.options.reuseReshards && body.reshards.count(reuseKey(value, key)))
    return 0;
  return cachedPlan(body, request, std::move(key), cause).bytes;
}

Local reshardLocal(Body &body, const Local &value, const TensorType &globalType,
                   const Sharding &target, Loc cause, const std::string &reason) {
  if (value.partial.empty() && sameLayout(value.sharding, target))
    return value;
  ReshardRequest request = requestFor(body, value, globalType, target);
  KeyWords key = requestKey(body, request);
  KeyWords reused;
  if (body.options.reuseReshards) {
    reused = reuseKey(value, key);
    if (auto known = body.reshards.find(reused); known != body.reshards.end())
      return known->second;
  }
  const ReshardPlan &plan = cachedPlan(body, request, std::move(key), cause);
  Value *v = value.value;
  for (const ReshardStep &step : plan.steps) {
    v = trim(body, emitStep(body, v, step, cause), step.localShapeAfter, cause);
    if (body.report) {
      std::string why = reason;
      if (step.wholeDimGather)
        why += " (whole dim: padded blocks do not nest)";
      else if (plan.fallback)
        why += " (planner gave up: gather everything)";
      body.report->add(cause, step, why, v ? v->definingOp : nullptr);
    }
  }
  Local out;
  out.value = v;
  out.sharding = request.target;
  out.sharding.replicated.clear();
  if (body.options.reuseReshards)
    body.reshards.emplace(std::move(reused), out);
  return out;
}

} // namespace shardc::partition
