// The per-device form of one op (not manual_computation, not a reshard
// across meshes), from its factor rule:
//
// 1. Assign mesh axes to the op's factors (export_assignment.cpp).
// 2. Reshard every operand to the layout those axes give it.
// 3. Mask the padding of every sharded reduction factor that its axes do not
//    divide (with 0, or the max/min identity).
// 4. Emit the op on local shapes; a sharded reduction factor leaves a
//    partial result over its axes.
// 5. Reshard the result (partial included) to its declared sharding: the
//    planner turns a partial sum into all_reduce, or reduce_scatter when
//    the result is wanted sharded.
// Creation ops are built whole and sliced (free), except splat constants,
// which are built at their local shape.
#include "passes/partition/PartitionInternal.h"

#include <fmt/format.h>

namespace shardc::partition {
namespace {

std::string reductionKind(OpKind kind) {
  if (kind == OpKind::ReduceMax)
    return "max";
  if (kind == OpKind::ReduceMin)
    return "min";
  return "sum";
}

Sharding declared(const Value &value, const Mesh &mesh) {
  if (value.sharding)
    return *value.sharding;
  return Sharding::replicatedOn(mesh.name, value.type.rank());
}

/// `reason()` words why a reshard is needed; asked only when one is (most
/// results are in their declared layout already).
template <class Reason>
void bindResult(Body &body, const Value *global, Local local, Loc loc, const Reason &reason) {
  Sharding target = declared(*global, body.mesh);
  if (local.partial.empty() && sameLayout(local.sharding, target))
    body.locals[global] = std::move(local);
  else
    body.locals[global] = reshardLocal(body, local, global->type, target, loc, reason());
}

void partitionCreation(Body &body, const Op &op) {
  const Value &result = *op.result();
  const Attribute *value = op.attr(attrs::dense);
  if (op.kind == OpKind::Constant && value && value->kind == Attribute::Kind::Dense &&
      value->dense.splat) {
    Sharding target = declared(result, body.mesh);
    TensorType local{localShape(result.type.shape, target, body.mesh), result.type.dtype};
    Value *v = body.emit(op.kind, {}, op.attrs, local, op.loc, result.name);
    body.locals[&result] = Local{v, target, {}, "sum"};
    return;
  }
  // Built whole on every device (random values depend only on the global
  // index), then each device keeps its block.
  Value *v = body.emit(op.kind, {}, op.attrs, result.type, op.loc, result.name);
  bindResult(body, &result,
             Local{v, Sharding::replicatedOn(body.mesh.name, result.type.rank()), {}}, op.loc,
             [&] { return fmt::format("{} built whole, then sliced", op.name()); });
}

/// The attributes of the local op: a slice's limits on pass-through dims
/// become the local sizes.
std::vector<NamedAttribute> localAttrs(const Op &op, const std::vector<int64_t> &operandLocal) {
  std::vector<NamedAttribute> attrs = op.attrs;
  if (op.kind != OpKind::Slice)
    return attrs;
  const Value &input = *op.operands[0];
  for (NamedAttribute &a : attrs) {
    if (a.name != attrs::limit.name)
      continue;
    std::optional<std::vector<int64_t>> limits = a.value.intList();
    if (!limits)
      continue;
    for (size_t d = 0; d < limits->size() && d < operandLocal.size(); ++d)
      if ((*limits)[d] == input.type.shape[d] && operandLocal[d] != input.type.shape[d])
        (*limits)[d] = operandLocal[d];
    a = intListAttr("limit", *limits);
  }
  return attrs;
}

/// Why an operand is resharded: named for the dims the op cannot keep sharded.
std::string operandReason(const Op &op, size_t i, const ShardingRule &rule,
                          const Sharding &current) {
  for (size_t d = 0; d < rule.operands[i].size() && d < current.dims.size(); ++d) {
    if (current.dims[d].axes.empty())
      continue;
    for (int f : rule.operands[i][d])
      if (rule.factorKinds[f] == FactorKind::Permutation)
        return fmt::format("operand {} of {}: dim {} moves elements between shards (gathered)", i,
                           op.name(), d);
    if (op.kind == OpKind::Reshape && rule.operands[i][d].size() != 1)
      return fmt::format("operand {} of reshape: dim {} is split or merged across its shards "
                         "(gathered)",
                         i, d);
  }
  return fmt::format("operand {} of {}", i, op.name());
}

Assignment layoutsOf(std::vector<std::vector<AxisRef>> factorAxes, const Op &op,
                     const ShardingRule &rule, const Mesh &mesh) {
  Assignment a;
  for (const TensorFactors &operand : rule.operands)
    a.operands.push_back(shardingFromFactors(mesh.name, operand, factorAxes, mesh));
  a.result.sharding = shardingFromFactors(mesh.name, rule.results[0], factorAxes, mesh);
  a.result.partialKind = reductionKind(op.kind);
  for (size_t f = 0; f < rule.numFactors(); ++f)
    if (rule.factorKinds[f] == FactorKind::Reduction)
      a.result.partial.insert(a.result.partial.end(), factorAxes[f].begin(), factorAxes[f].end());
  a.factorAxes = std::move(factorAxes);
  return a;
}

/// cachedAssignment's key: the op's rule (ops of one kind and shapes share
/// one) and kind, the mesh, `first` (word kFirstWord, set per lookup), and
/// the shardings of the operands and results (with their axes' source
/// locations, which the layouts copy). Built once per op.
constexpr size_t kFirstWord = 3;
KeyWords assignmentKey(const Body &body, const Op &op, const ShardingRule &rule,
                       const std::vector<const Sharding *> &operands,
                       const std::vector<const Sharding *> &results) {
  KeyWords key{reinterpret_cast<uintptr_t>(&rule),
               static_cast<uint64_t>(op.kind),
               reinterpret_cast<uintptr_t>(&body.mesh),
               0,
               operands.size(),
               results.size()};
  key.reserve(128); // (about 20 words per sharding with its axes' locations)
  for (const auto *tensors : {&operands, &results})
    for (const Sharding *sharding : *tensors) {
      key.push_back(sharding != nullptr);
      if (sharding)
        appendKey(key, *sharding, true);
    }
  return key;
}

/// assignFactors and the layouts it gives, computed once per function for
/// each assignmentKey (`key`, whose `first` word this sets).
const Assignment &cachedAssignment(Body &body, const Op &op, const ShardingRule &rule,
                                   const std::vector<const Sharding *> &operands,
                                   const std::vector<const Sharding *> &results, int first,
                                   KeyWords &key) {
  key[kFirstWord] = static_cast<uint64_t>(first);
  auto &cache = body.caches->assignments;
  if (auto known = cache.find(key); known != cache.end())
    return known->second;
  return cache
      .emplace(key, layoutsOf(assignFactors(op, rule, operands, results, body.mesh, first), op,
                              rule, body.mesh))
      .first->second;
}

/// The way `op` is computed. assignFactors lets the operands choose first,
/// in order, then the results: their data is in place. When that needs
/// collectives, each other tensor choosing first is tried too, and the one
/// that sends the fewest bytes (operands to the op's layout, the result to
/// its declared one, partial sums reduced; in a loop, times the
/// iterations, except a reshard hoisted in front of it) wins, unless it
/// computes more per device; ties keep the default. GSPMD weighs a dot's
/// ways the same way: y = x W with x split by rows and W and y by columns
/// gathers x (x's rows), not W (all of W, then y moved from rows to
/// columns). The way is one of PartitionCaches::assignments (node-based:
/// it stays where it is while more are added).
const Assignment &chooseAssignment(Body &body, const Op &op, const ShardingRule &rule,
                                   const std::vector<const Local *> &inputs,
                                   const std::vector<const Sharding *> &operands,
                                   const std::vector<const Sharding *> &results) {
  const Mesh &mesh = body.mesh;
  // In a loop, a reshard of a value from before it is hoisted in front of it.
  auto runsOf = [&](const Value *operand) {
    return body.beforeLoop && body.beforeLoop->count(operand) ? body.hoistedRuns : body.runs;
  };
  auto bytesOf = [&](const Assignment &a) {
    double bytes = 0;
    for (size_t i = 0; i < inputs.size(); ++i)
      bytes += runsOf(op.operands[i]) *
               static_cast<double>(
                   reshardBytes(body, *inputs[i], op.operands[i]->type, a.operands[i], op.loc));
    return bytes + body.runs * static_cast<double>(reshardBytes(body, a.result, op.result()->type,
                                                                *results[0], op.loc));
  };
  // Elements each device computes on: the product of its factors' shares.
  auto work = [&](const std::vector<std::vector<AxisRef>> &factorAxes) {
    double n = 1;
    for (size_t f = 0; f < rule.numFactors(); ++f)
      n *= static_cast<double>(localDimSize(rule.factorSizes[f], productOf(factorAxes[f], mesh)));
    return n;
  };
  KeyWords key = assignmentKey(body, op, rule, operands, results);
  const Assignment *best = &cachedAssignment(body, op, rule, operands, results, -1, key);
  if (!body.options.cheapestAssignment)
    return *best;
  double bestBytes = bytesOf(*best);
  if (bestBytes == 0)
    return *best;
  const double bestWork = work(best->factorAxes);
  auto same = [](const std::vector<AxisRef> &a, const std::vector<AxisRef> &b) {
    return sameAxisList(a, b);
  };
  const int tensors = static_cast<int>(rule.operands.size() + rule.results.size());
  for (int first = 1; first < tensors; ++first) {
    const Assignment &candidate = cachedAssignment(body, op, rule, operands, results, first, key);
    const std::vector<std::vector<AxisRef>> &other = candidate.factorAxes;
    if (std::equal(other.begin(), other.end(), best->factorAxes.begin(), best->factorAxes.end(),
                   same) ||
        work(other) > bestWork)
      continue;
    double bytes;
    try {
      bytes = bytesOf(candidate);
    } catch (const Unsupported &) {
      continue; // a layout the planner cannot reach: not a way to take
    }
    if (bytes < bestBytes) {
      best = &candidate;
      bestBytes = bytes;
    }
  }
  return *best;
}

void partitionGeneric(Body &body, const Op &op) {
  const ShardingRule *rule = body.caches->rules.get(op);
  if (!rule)
    throw Unsupported(op.loc, fmt::format("{} - cannot partition: no sharding rule", op.name()));
  const Mesh &mesh = body.mesh;
  // The operands' locals stay in body.locals (a std::map: adding the
  // results below moves none of them).
  std::vector<const Local *> inputs;
  std::vector<const Sharding *> operandShardings, resultShardings;
  for (const Value *operand : op.operands)
    inputs.push_back(&body.local(operand, op.loc));
  for (const Local *input : inputs)
    operandShardings.push_back(&input->sharding);
  std::vector<Sharding> results;
  for (const auto &r : op.results)
    results.push_back(declared(*r, mesh));
  for (const Sharding &s : results)
    resultShardings.push_back(&s);
  const Assignment &chosen =
      chooseAssignment(body, op, *rule, inputs, operandShardings, resultShardings);
  const std::vector<std::vector<AxisRef>> &factorAxes = chosen.factorAxes;

  // 2-3. Operands in the op's layout, padding masked where it is reduced.
  const std::string kind = chosen.result.partialKind;
  std::vector<Value *> operands;
  std::vector<int64_t> firstLocal;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Sharding &required = chosen.operands[i];
    // Most operands are in the layout the op needs already: no reshard, and
    // no reason to word.
    const Local &input = *inputs[i];
    Value *v = input.partial.empty() && sameLayout(input.sharding, required)
                   ? input.value
                   : reshardLocal(body, input, op.operands[i]->type, required, op.loc,
                                  operandReason(op, i, *rule, input.sharding))
                         .value;
    for (size_t d = 0; d < rule->operands[i].size(); ++d)
      for (int f : rule->operands[i][d])
        if (rule->factorKinds[f] == FactorKind::Reduction && !factorAxes[f].empty())
          v = maskPadding(body, v, required, d, op.operands[i]->type.shape[d],
                          reductionIdentity(kind, v->type.dtype), op.loc);
    if (i == 0)
      firstLocal = v->type.shape;
    operands.push_back(v);
  }

  // 4. The local op; partial over the axes of its sharded reduction factors.
  const Value &result = *op.result();
  TensorType type{localShape(result.type.shape, chosen.result.sharding, mesh), result.type.dtype};
  OpKind localKind = op.kind;
  if (op.kind == OpKind::ReduceMean && !chosen.result.partial.empty())
    localKind = OpKind::ReduceSum; // the mean divides the whole sum, below
  Value *v = body.emit(localKind, operands, localAttrs(op, firstLocal), type, op.loc, result.name);
  Local out = chosen.result;
  out.value = v;
  if (localKind != op.kind) {
    out = reshardLocal(body, out, result.type, out.sharding, op.loc,
                       fmt::format("partial sum of {}", op.name()));
    int64_t count = 1;
    for (size_t d = 0; d < rule->operands[0].size(); ++d)
      for (int f : rule->operands[0][d])
        if (rule->factorKinds[f] == FactorKind::Reduction)
          count *= op.operands[0]->type.shape[d];
    Value *n = emitScalar(body, static_cast<double>(count), type.dtype, op.loc, "count");
    out.value = body.emit(OpKind::Div, {out.value, n}, {}, type, op.loc, result.name);
  }
  // 5. The declared layout.
  bool partialResult = !out.partial.empty();
  bindResult(body, &result, std::move(out), op.loc, [&] {
    return partialResult ? fmt::format("partial {} of {}", kind == "sum" ? "sum" : kind, op.name())
                         : fmt::format("result of {}", op.name());
  });
}

} // namespace

void partitionOp(Body &body, const Op &op) {
  // An identity moves no data: like a sharding op, its result is its
  // operand's local value (resharded when their layouts differ). The
  // auto_axes / explicit_axes edges lowerAxesRegions leaves are identities.
  if (op.kind == OpKind::Identity)
    return bindResult(body, op.result(), body.local(op.operands[0], op.loc), op.loc,
                      [&] { return std::string(op.name()); });
  switch (opInfo(op.kind).group) {
  case OpGroup::Creation:
    return partitionCreation(body, op);
  case OpGroup::ShardingOp:
    return bindResult(body, op.result(), body.local(op.operands[0], op.loc), op.loc,
                      [&] { return std::string(op.name()); });
  case OpGroup::Collective:
    throw Unsupported(op.loc, fmt::format("{} - cannot partition: a collective outside a "
                                          "manual_computation",
                                          op.name()));
  case OpGroup::ControlFlow:
    return partitionControlFlow(body, op);
  default:
    return partitionGeneric(body, op);
  }
}

} // namespace shardc::partition
