// A user manual_computation inside the per-device body (which is manual
// over every axis). Its body is already per-device along its manual axes M
// and global along the others, so it is inlined as written:
//
// 1. each operand is resharded to its in_sharding restricted to M (the
//    other axes gathered: the user's body sees those dims whole);
// 2. the body's ops are copied, collective_permute pairs translated from
//    instances over M to mesh positions (one pair per coordinate of the
//    other axes); a nested manual_computation over axes M2 is inlined the
//    same way inside it (its operands sliced along M2, its body copied with
//    M and M2 manual, its results gathered along M2);
// 3. each returned value, laid out as its out_sharding restricted to M, is
//    resharded to the result's declared sharding.
#include "passes/partition/PartitionInternal.h"

#include "ir/ShardingLayout.h"

#include <fmt/format.h>

#include <map>
#include <set>

namespace shardc::partition {
namespace {

Sharding restrictTo(const Sharding &s, const std::set<std::string> &manual) {
  Sharding out = Sharding::replicatedOn(s.meshName, s.dims.size());
  for (size_t d = 0; d < s.dims.size(); ++d)
    for (const AxisRef &axis : s.dims[d].axes)
      if (manual.count(axis.name))
        out.dims[d].axes.push_back(axis);
  return out;
}

/// Mesh positions of every (instance over M, other coordinates) pair.
std::vector<std::pair<int64_t, int64_t>> translatePairs(const Attribute &pairs, const Mesh &mesh,
                                                        const std::set<std::string> &manual,
                                                        Loc loc) {
  std::map<std::pair<int64_t, std::vector<int64_t>>, int64_t> position;
  std::vector<std::pair<int64_t, std::vector<int64_t>>> keys;
  for (int64_t p = 0; p < mesh.deviceCount(); ++p) {
    std::vector<int64_t> coords = meshCoordinates(mesh, p), others;
    int64_t instance = 0;
    for (size_t a = 0; a < mesh.axes.size(); ++a) {
      if (manual.count(mesh.axes[a].name))
        instance = instance * mesh.axes[a].size + coords[a];
      else
        others.push_back(coords[a]);
    }
    position[{instance, others}] = p;
    keys.push_back({instance, others});
  }
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const Attribute &pair : pairs.list) {
    std::optional<std::vector<int64_t>> ids = pair.intList();
    if (!ids || ids->size() != 2)
      throw Unsupported(loc, "collective_permute - cannot partition: malformed pairs");
    for (const auto &[instance, others] : keys) {
      if (instance != (*ids)[0])
        continue;
      auto target = position.find({(*ids)[1], others});
      if (target == position.end())
        throw Unsupported(loc, "collective_permute - cannot partition: pair out of range");
      out.push_back({position[{instance, others}], target->second});
    }
  }
  return out;
}

using ValueMap = std::map<const Value *, Value *>;

void inlineBlock(Body &body, const Block &block, ValueMap &inner,
                 const std::set<std::string> &manual);

/// A `for`, `while` or `if` of a manual body: copied with its attributes,
/// each region inlined like the body (its arguments fresh values of the same
/// types, its ops through inlineBlock), its results fresh values.
void inlineControlFlow(Body &body, const Op &userOp, ValueMap &inner,
                       const std::set<std::string> &manual) {
  auto op = std::make_unique<Op>();
  op->kind = userOp.kind;
  op->loc = userOp.loc;
  op->attrs = userOp.attrs;
  for (const Value *operand : userOp.operands) {
    auto it = inner.find(operand);
    if (it == inner.end())
      throw Unsupported(userOp.loc, fmt::format("{} - cannot partition: operand defined "
                                                "outside the manual_computation",
                                                userOp.name()));
    op->operands.push_back(it->second);
  }
  op->operandLocs.assign(op->operands.size(), userOp.loc);
  auto fresh = [&](const Value &from, Op *definingOp) {
    auto v = std::make_unique<Value>();
    v->name = body.names.fresh(from.name);
    v->type = from.type;
    v->writtenType = from.type;
    v->loc = from.loc;
    v->definingOp = definingOp;
    inner[&from] = v.get();
    return v;
  };
  auto copyRegion = [&](const Block *from) -> std::unique_ptr<Block> {
    if (!from)
      return nullptr;
    auto to = std::make_unique<Block>();
    to->loc = from->loc;
    to->endLoc = from->endLoc;
    for (const auto &arg : from->args)
      to->args.push_back(fresh(*arg, nullptr));
    Body region{body.module, body.mesh,   *to,          body.names, body.report,
                {},          body.caches, body.options, {}};
    inlineBlock(region, *from, inner, manual);
    for (const Value *returned : from->returned) {
      auto it = inner.find(returned);
      if (it == inner.end())
        throw Unsupported(userOp.loc,
                          fmt::format("{} - cannot partition: missing return", userOp.name()));
      to->returned.push_back(it->second);
    }
    to->returnedLocs.assign(to->returned.size(), from->returnLoc);
    to->returnTypes = from->returnTypes;
    to->hasReturn = from->hasReturn;
    to->returnLoc = from->returnLoc;
    return to;
  };
  op->cond = copyRegion(userOp.cond.get());
  op->body = copyRegion(userOp.body.get());
  op->elseBody = copyRegion(userOp.elseBody.get());
  for (const auto &result : userOp.results)
    op->results.push_back(fresh(*result, op.get()));
  body.block.ops.push_back(std::move(op));
}

/// A manual_computation nested in one being inlined: its operands are
/// values of the enclosing body (local along the enclosing manual axes,
/// whole along the others), so each is sliced to its in_sharding along the
/// new manual axes (all_slice: no communication), its body inlined with the
/// union of the manual axes (collective_permute pairs number instances over
/// that union, as the interpreter does), and each result gathered back to
/// whole along the new axes.
void inlineNested(Body &body, const Op &op, ValueMap &inner,
                  const std::set<std::string> &enclosing) {
  ManualComputationParts parts = manualComputationParts(op);
  if (!op.body || parts.inShardings.size() != op.operands.size() ||
      parts.outShardings.size() != op.results.size())
    throw Unsupported(op.loc, "manual_computation - cannot partition: malformed op");
  std::set<std::string> added, all = enclosing;
  for (const AxisRef &axis : parts.manualAxes) {
    added.insert(axis.name);
    all.insert(axis.name);
  }
  for (size_t i = 0; i < op.operands.size(); ++i) {
    auto it = inner.find(op.operands[i]);
    if (it == inner.end())
      throw Unsupported(op.loc, "manual_computation - cannot partition: operand defined "
                                "outside the enclosing manual_computation");
    const TensorType &type = op.operands[i]->type;
    Local whole{it->second, Sharding::replicatedOn(body.mesh.name, type.rank()), {}, "sum"};
    inner[op.body->args[i].get()] =
        reshardLocal(body, whole, type, restrictTo(parts.inShardings[i], added), op.loc,
                     fmt::format("operand {} of a nested manual_computation", i))
            .value;
  }
  inlineBlock(body, *op.body, inner, all);
  for (size_t i = 0; i < op.results.size(); ++i) {
    const Value *returned = i < op.body->returned.size() ? op.body->returned[i] : nullptr;
    auto it = inner.find(returned);
    if (it == inner.end())
      throw Unsupported(op.loc, "manual_computation - cannot partition: missing return");
    const TensorType &type = op.results[i]->type;
    Local local{it->second, restrictTo(parts.outShardings[i], added), {}, "sum"};
    inner[op.results[i].get()] =
        reshardLocal(body, local, type, Sharding::replicatedOn(body.mesh.name, type.rank()), op.loc,
                     fmt::format("result {} of a nested manual_computation", i))
            .value;
  }
}

/// Copies the ops of a manual body into `body`, each operand through
/// `inner`, `manual` the axes manual there.
void inlineBlock(Body &body, const Block &block, ValueMap &inner,
                 const std::set<std::string> &manual) {
  for (const auto &userOp : block.ops) {
    if (userOp->kind == OpKind::ManualComputation) {
      inlineNested(body, *userOp, inner, manual);
      continue;
    }
    if (userOp->kind == OpKind::For || userOp->kind == OpKind::While ||
        userOp->kind == OpKind::If) {
      inlineControlFlow(body, *userOp, inner, manual);
      continue;
    }
    std::vector<Value *> operands;
    for (const Value *operand : userOp->operands) {
      auto it = inner.find(operand);
      if (it == inner.end())
        throw Unsupported(userOp->loc, fmt::format("{} - cannot partition: operand defined "
                                                   "outside the manual_computation",
                                                   userOp->name()));
      operands.push_back(it->second);
    }
    std::vector<NamedAttribute> attrs = userOp->attrs;
    if (userOp->kind == OpKind::CollectivePermute)
      for (NamedAttribute &a : attrs)
        if (a.name == attrs::pairs.name) {
          Attribute list;
          list.kind = Attribute::Kind::List;
          for (auto [s, t] : translatePairs(a.value, body.mesh, manual, userOp->loc))
            list.list.push_back(intListAttr("", {s, t}).value);
          a.value = list;
        }
    const Value &result = *userOp->result();
    inner[&result] =
        body.emit(userOp->kind, operands, attrs, result.type, userOp->loc, result.name);
  }
}

} // namespace

void partitionManual(Body &body, const Op &op) {
  ManualComputationParts parts = manualComputationParts(op);
  std::set<std::string> manual;
  for (const AxisRef &axis : parts.manualAxes)
    manual.insert(axis.name);
  if (!op.body || parts.inShardings.size() != op.operands.size() ||
      parts.outShardings.size() != op.results.size())
    throw Unsupported(op.loc, "manual_computation - cannot partition: malformed op");

  ValueMap inner;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const TensorType &type = op.operands[i]->type;
    Sharding blocks = restrictTo(parts.inShardings[i], manual);
    Local local = reshardLocal(body, body.local(op.operands[i], op.loc), type, blocks, op.loc,
                               fmt::format("operand {} of manual_computation", i));
    // The body sees zeros in the padding of a dim its manual axes do not
    // divide (as all_slice leaves it and the interpreter defines it), not
    // whatever the ops before computed there.
    Value *value = local.value;
    for (size_t d = 0; d < type.rank(); ++d)
      value = maskPadding(body, value, blocks, d, type.shape[d],
                          reductionIdentity("sum", type.dtype), op.loc);
    inner[op.body->args[i].get()] = value;
  }
  inlineBlock(body, *op.body, inner, manual);
  for (size_t i = 0; i < op.results.size(); ++i) {
    const Value *returned = i < op.body->returned.size() ? op.body->returned[i] : nullptr;
    auto it = inner.find(returned);
    if (it == inner.end())
      throw Unsupported(op.loc, "manual_computation - cannot partition: missing return");
    Local local{it->second, restrictTo(parts.outShardings[i], manual), {}, "sum"};
    const Value &result = *op.results[i];
    Sharding target = result.sharding ? *result.sharding
                                      : Sharding::replicatedOn(body.mesh.name, result.type.rank());
    body.locals[&result] = reshardLocal(body, local, result.type, target, op.loc,
                                        fmt::format("result {} of manual_computation", i));
  }
}

} // namespace shardc::partition
