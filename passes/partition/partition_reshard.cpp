// Emits a reshard plan (ReshardPlanner.h) as per-device collectives: each
// step becomes all_slice, all_gather, all_to_all, all_reduce,
// reduce_scatter or collective_permute on the local value, plus a `slice`
// that drops the extra padding a gather of padded blocks leaves at the end
// of a dim. Every collective is recorded in the report.
#include "passes/partition/PartitionInternal.h"

#include "ir/Printer.h"

#include <fmt/format.h>

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

/// A request in words: what Body::plans and Body::reshards are keyed by.
std::string requestKey(const Body &body, const ReshardRequest &request) {
  std::string key = body.mesh.name + "|" + printType(request.type) + "|" +
                    printSharding(request.source) + "|" + request.partialKind;
  for (const AxisRef &axis : request.partialAxes)
    key += fmt::format(" {}:{}:{}", axis.name, axis.preSize, axis.size);
  key += "|" + printSharding(request.target);
  return key;
}

/// planReshard(request), searched once per distinct request of the function
/// (Body::plans); `key` is requestKey's.
ReshardPlan cachedPlan(Body &body, const ReshardRequest &request, std::string key, Loc cause) {
  auto search = [&] {
    try {
      return planReshard(request);
    } catch (const std::invalid_argument &e) {
      throw Unsupported(cause, e.what());
    }
  };
  if (!body.plans)
    return search();
  auto known = body.plans->find(key);
  if (known == body.plans->end())
    known = body.plans->emplace(std::move(key), search()).first;
  return known->second;
}

} // namespace

Local reshardLocal(Body &body, const Local &value, const TensorType &globalType,
                   const Sharding &target, Loc cause, const std::string &reason) {
  if (value.partial.empty() && sameLayout(value.sharding, target))
    return value;
  ReshardRequest request;
  request.type = globalType;
  request.sourceMesh = request.targetMesh = &body.mesh;
  request.source = value.sharding;
  request.partialAxes = value.partial;
  request.partialKind = value.partialKind;
  request.target = target;
  for (DimSharding &dim : request.target.dims)
    dim.open = false, dim.priority.reset();
  std::string key = requestKey(body, request);
  // The value is SSA and the plan a function of the request: the same
  // request for the same local value gives the same copy.
  std::string reuseKey;
  if (body.reuseReshards) {
    reuseKey = fmt::format("{}|{}", static_cast<const void *>(value.value), key);
    if (auto known = body.reshards.find(reuseKey); known != body.reshards.end())
      return known->second;
  }
  ReshardPlan plan = cachedPlan(body, request, std::move(key), cause);
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
  if (body.reuseReshards)
    body.reshards.emplace(std::move(reuseKey), out);
  return out;
}

} // namespace shardc::partition
