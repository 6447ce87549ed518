// infer-types rules for manual_computation (Shardy's manual_computation, JAX's
// shard_map), the sharding ops and the collectives.
//
// manual_computation: the body sees each operand's local type, the global
// type divided along the manual axes of its in_sharding (a dim they don't
// divide is padded, ceil(D / n), unlike Shardy, which rejects it);
// each result's global type is the returned local type multiplied back along
// the manual axes of its out_sharding. For in_sharding [{"x"}, {"y"}] on
// <["x"=2, "y"=4]> with manual_axes={"x"}, tensor<8x16xf32> is tensor<4x16xf32>
// in the body: "y" is not manual, so dim 1 stays global.
//
// Unknown meshes and axes in shardings and rank mismatches are the verifier's
// to report; here they only stop inference, silently.
#include "ir/Printer.h"
#include "passes/infer_types/InferTypesInternal.h"

#include <fmt/format.h>

#include <set>

namespace shardc::infer_types {
namespace {

std::optional<int64_t> axisSize(const AxisRef &axis, const Mesh &mesh) {
  const MeshAxis *full = mesh.findAxis(axis.name);
  if (!full)
    return std::nullopt;
  int64_t size = axis.effectiveSize(full->size);
  return size > 0 ? std::optional<int64_t>(size) : std::nullopt;
}

/// Per dim, the number of shards along the manual axes; nullopt when the
/// sharding does not fit the type or names an unknown mesh or axis.
std::optional<std::vector<int64_t>> manualShardCounts(const Sharding &sharding, size_t rank,
                                                      const Module &module,
                                                      const std::set<std::string> &manualAxes) {
  const Mesh *mesh = module.findMesh(sharding.meshName);
  if (!mesh || sharding.dims.size() != rank)
    return std::nullopt;
  std::vector<int64_t> counts;
  for (const DimSharding &dim : sharding.dims) {
    int64_t count = 1;
    for (const AxisRef &axis : dim.axes) {
      if (!manualAxes.count(axis.name))
        continue;
      std::optional<int64_t> size = axisSize(axis, *mesh);
      if (!size)
        return std::nullopt;
      count = saturatingMul(count, *size);
    }
    counts.push_back(count);
  }
  return counts;
}

/// Checks body parameter `i` against operand `i` divided along manual axes.
void checkBodyArgument(Op &op, InferContext &ctx, size_t i, const Sharding &sharding,
                       const std::set<std::string> &manualAxes) {
  const Value *operand = op.operands[i];
  const Value &arg = *op.body->args[i];
  if (!operand || !operand->typeKnown || !arg.typeKnown)
    return;
  std::optional<std::vector<int64_t>> counts =
      manualShardCounts(sharding, operand->type.rank(), ctx.module, manualAxes);
  if (!counts)
    return;
  // A dim the manual shards don't divide is padded: ceil(D / n) per
  // instance, zeros past D (the partitioner's per-device form relies on it).
  TensorType local = operand->type;
  for (size_t d = 0; d < local.rank(); ++d)
    local.shape[d] = localDimSize(local.shape[d], (*counts)[d]);
  if (arg.type == local)
    return;
  Loc loc = arg.writtenTypeLoc.known() ? arg.writtenTypeLoc : arg.loc;
  // Shardy rejects a manual dim that doesn't divide; shardc pads it (the
  // partitioner's output relies on that), so only a body that expects
  // something else is an error, and the error says which dim doesn't divide.
  for (size_t d = 0; d < local.rank(); ++d)
    if (operand->type.shape[d] % (*counts)[d] != 0) {
      ctx.error(loc, fmt::format("manual_computation - operand {} dim {} isn't divisible by the "
                                 "manual axes' size: {} % {} != 0",
                                 i, d, operand->type.shape[d], (*counts)[d]))
          .note(Loc{},
                fmt::format("the body then sees the padded local type {} (ceil({} / {}) "
                            "per instance), not {}",
                            local.str(), operand->type.shape[d], (*counts)[d], arg.type.str()));
      return;
    }
  ctx.error(loc, fmt::format("manual_computation - body argument {} type doesn't "
                             "match local type of operand: {} != {}",
                             i, arg.type.str(), local.str()));
}

void reportCount(InferContext &ctx, Loc loc, const char *what, size_t got, size_t expected) {
  ctx.error(loc, fmt::format("manual_computation - {} count doesn't match: {} != {}", what, got,
                             expected));
}

} // namespace

void inferManualComputation(Op &op, InferContext &ctx) {
  using Kind = Attribute::Kind;
  const Attribute *ins = requireAttr(op, ctx, attrs::inShardings, Kind::ShardingList);
  const Attribute *outs = requireAttr(op, ctx, attrs::outShardings, Kind::ShardingList);
  const Attribute *axes = requireAttr(op, ctx, attrs::manualAxes, Kind::AxisSet);
  Block *body = op.body.get();
  if (!body)
    return; // the builder reported the missing body
  std::set<std::string> manualAxes;
  if (axes)
    for (const AxisRef &axis : axes->axes)
      manualAxes.insert(axis.name);

  // 1. Operands against in_shardings and the body's local parameters.
  size_t operands = op.operands.size();
  if (ins && ins->shardings.size() != operands)
    reportCount(ctx, attrLoc(op, attrs::inShardings), "in_shardings and operands",
                ins->shardings.size(), operands);
  else if (body->args.size() != operands)
    reportCount(ctx, body->args.size() > operands ? body->args[operands]->loc : op.loc,
                "body arguments and operands", body->args.size(), operands);
  else if (ins && axes)
    for (size_t i = 0; i < operands; ++i)
      checkBodyArgument(op, ctx, i, ins->shardings[i], manualAxes);

  // 2. The body, with collectives naming axes of this op's mesh.
  bool savedInside = ctx.insideManual;
  const Mesh *savedMesh = ctx.manualMesh;
  const Attribute *meshSource = ins && !ins->shardings.empty() ? ins : outs;
  ctx.insideManual = true;
  ctx.manualMesh = meshSource && !meshSource->shardings.empty()
                       ? ctx.module.findMesh(meshSource->shardings[0].meshName)
                       : nullptr;
  inferBlock(*body, ctx);
  ctx.insideManual = savedInside;
  ctx.manualMesh = savedMesh;

  // 3. Results: returned local types multiplied along the manual axes.
  if (!outs)
    return;
  size_t expected = outs->shardings.size();
  if (body->returned.size() != expected) {
    Loc loc = body->hasReturn ? body->returnLoc : body->endLoc;
    reportCount(ctx, loc.known() ? loc : op.loc, "returned values and out_shardings",
                body->returned.size(), expected);
    return;
  }
  if (op.results.size() != expected) {
    reportCount(ctx,
                !op.results.empty() && op.results[0]->loc.known() ? op.results[0]->loc : op.loc,
                "results and out_shardings", op.results.size(), expected);
    return;
  }
  if (!axes)
    return;
  for (size_t i = 0; i < expected; ++i) {
    const Value *local = body->returned[i];
    if (!local || !local->typeKnown)
      continue;
    std::optional<std::vector<int64_t>> counts =
        manualShardCounts(outs->shardings[i], local->type.rank(), ctx.module, manualAxes);
    if (!counts)
      continue;
    TensorType global = local->type;
    for (size_t d = 0; d < global.rank(); ++d)
      global.shape[d] = saturatingMul(global.shape[d], (*counts)[d]);
    // A written global type whose dims the shards split into the returned
    // (padded) local dims is the type: the padding is dropped.
    if (const auto &written = op.results[i]->writtenType;
        written && written->dtype == global.dtype && written->rank() == global.rank()) {
      bool padded = true;
      for (size_t d = 0; d < global.rank(); ++d)
        padded &= written->shape[d] >= 0 &&
                  localDimSize(written->shape[d], (*counts)[d]) == local->type.shape[d];
      if (padded)
        global = *written;
    }
    setResultType(*op.results[i], global, ctx);
  }
}

// ---- sharding ops and collectives ---------------------------------------------------

namespace {

/// The product of the sizes of the collective's `axes` in its mesh.
std::optional<int64_t> collectiveShards(const Op &op, InferContext &ctx) {
  const Attribute *axes = requireAttr(op, ctx, attrs::axes, Attribute::Kind::AxisSet);
  if (!axes)
    return std::nullopt;
  const Mesh *mesh = collectiveMesh(op, ctx.module, ctx.manualMesh);
  if (!mesh && ctx.insideManual)
    return std::nullopt; // an unknown mesh: the verifier reports it
  if (!mesh) {
    ctx.error(op.loc, fmt::format("{} - no mesh for axes: use it inside a "
                                  "manual_computation, or declare a single mesh",
                                  op.name()));
    return std::nullopt;
  }
  int64_t shards = 1;
  for (const AxisRef &axis : axes->axes) {
    std::optional<int64_t> size = axisSize(axis, *mesh);
    if (!size)
      return std::nullopt; // unknown axis: the verifier reports it
    shards = saturatingMul(shards, *size);
  }
  return shards;
}

/// A dim attribute in 0..rank-1.
std::optional<int64_t> readDim(const Op &op, InferContext &ctx, AttrKey<int64_t> key, size_t rank) {
  const std::string_view name = key.name;
  std::optional<int64_t> dim = requireInt(op, ctx, key);
  if (dim && (*dim < 0 || *dim >= static_cast<int64_t>(rank))) {
    ctx.error(attrLoc(op, name),
              fmt::format("{} - {} out of range: {} for rank {}", op.name(), name, *dim, rank));
    return std::nullopt;
  }
  return dim;
}

bool divide(const Op &op, InferContext &ctx, TensorType &type, int64_t dim, int64_t shards) {
  if (type.shape[dim] % shards != 0) {
    ctx.error(op.loc, fmt::format("{} - dim {} isn't divisible by the shard count: "
                                  "{} vs {}",
                                  op.name(), dim, type.shape[dim], shards));
    return false;
  }
  type.shape[dim] /= shards;
  return true;
}

/// `pairs = [[0, 1], [1, 0]]`: the shape only; device ranges and repeats are
/// the verifier's.
bool checkPairs(const Op &op, InferContext &ctx) {
  const Attribute *pairs = requireAttr(op, ctx, attrs::pairs, Attribute::Kind::List);
  if (!pairs)
    return false;
  for (const Attribute &pair : pairs->list) {
    std::optional<std::vector<int64_t>> ids = pair.intList();
    if (ids && ids->size() == 2)
      continue;
    ctx.error(pair.loc.known() ? pair.loc : attrLoc(op, attrs::pairs),
              fmt::format("collective_permute - each pair must be [source, target]: {}",
                          printAttribute(pair)));
    return false;
  }
  return true;
}

std::optional<TensorType> inferAxisIndex(const Op &op, InferContext &ctx) {
  const TensorType *written = requireWrittenType(op, ctx);
  const Attribute *axis = requireAttr(op, ctx, attrs::axis, Attribute::Kind::String);
  if (!written || !axis)
    return std::nullopt;
  if (*written != TensorType{{}, DType::I32}) {
    ctx.error(writtenTypeLoc(op),
              fmt::format("axis_index - result type must be tensor<i32>: {}", written->str()));
    return std::nullopt;
  }
  return *written; // an unknown axis is the verifier's to report
}

std::optional<TensorType> inferAllReduce(const Op &op, InferContext &ctx, const TensorType &input) {
  // kind defaults to "sum"; a bare word (kind = max) reads as the string.
  if (const Attribute *kind = op.attr(attrs::kind)) {
    if (kind->kind != Attribute::Kind::String && kind->kind != Attribute::Kind::Ident) {
      requireAttr(op, ctx, attrs::kind, Attribute::Kind::String); // reports the kind
      return std::nullopt;
    }
    if (kind->s != "sum" && kind->s != "max" && kind->s != "min") {
      ctx.error(attrLoc(op, attrs::kind),
                fmt::format("all_reduce - unknown reduction kind: \"{}\"", kind->s))
          .note(Loc{}, "kinds are \"sum\", \"max\" and \"min\"");
      return std::nullopt;
    }
  }
  if (!collectiveShards(op, ctx))
    return std::nullopt;
  return input;
}

} // namespace

std::optional<TensorType> inferShardingOrCollective(Op &op, InferContext &ctx) {
  if (op.kind == OpKind::AxisIndex)
    return inferAxisIndex(op, ctx);
  TensorType type = op.operands[0]->type;
  switch (op.kind) {
  case OpKind::ShardingConstraint:
  case OpKind::Reshard:
    if (!requireAttr(op, ctx, attrs::sharding, Attribute::Kind::Sharding))
      return std::nullopt;
    return type;
  case OpKind::AllReduce:
    return inferAllReduce(op, ctx, type);
  case OpKind::CollectivePermute:
    return checkPairs(op, ctx) ? std::optional<TensorType>(type) : std::nullopt;
  case OpKind::AllGather:
  case OpKind::ReduceScatter: {
    std::optional<int64_t> dim = readDim(op, ctx, attrs::dim, type.rank());
    std::optional<int64_t> shards = collectiveShards(op, ctx);
    if (!dim || !shards)
      return std::nullopt;
    if (op.kind == OpKind::AllGather) {
      type.shape[*dim] = saturatingMul(type.shape[*dim], *shards);
      return type;
    }
    return divide(op, ctx, type, *dim, *shards) ? std::optional<TensorType>(type) : std::nullopt;
  }
  case OpKind::AllSlice: {
    // The inverse of all_gather (MLIR's mesh.all_slice): each device keeps
    // block i of `dim`, i its index over `axes`. A dim the shards don't
    // divide is padded: ceil(dim / shards) each, the tail filled with zeros.
    std::optional<int64_t> dim = readDim(op, ctx, attrs::dim, type.rank());
    std::optional<int64_t> shards = collectiveShards(op, ctx);
    if (!dim || !shards)
      return std::nullopt;
    type.shape[*dim] = localDimSize(type.shape[*dim], *shards);
    return type;
  }
  case OpKind::AllToAll: {
    std::optional<int64_t> split = readDim(op, ctx, attrs::splitDim, type.rank());
    std::optional<int64_t> concat = readDim(op, ctx, attrs::concatDim, type.rank());
    std::optional<int64_t> shards = collectiveShards(op, ctx);
    if (!split || !concat || !shards || !divide(op, ctx, type, *split, *shards))
      return std::nullopt;
    type.shape[*concat] = saturatingMul(type.shape[*concat], *shards);
    return type;
  }
  default:
    return std::nullopt;
  }
}

} // namespace shardc::infer_types
