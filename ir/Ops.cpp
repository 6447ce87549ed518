// The op table: spelling, group, operand count and a one-line summary.
#include "ir/Ops.h"

#include <string>
#include <unordered_map>

namespace shardc {

const std::vector<OpInfo> &allOps() {
  static const std::vector<OpInfo> ops = [] {
    std::vector<OpInfo> v;
#define X(kind, name) v.push_back({OpKind::kind, name, OpGroup::Unary, 1, 1, "unary elementwise"});
    SHARDC_UNARY_OPS(X)
#undef X
#define X(kind, name)                                                                              \
  v.push_back(                                                                                     \
      {OpKind::kind, name, OpGroup::Binary, 2, 2, "binary elementwise with numpy broadcasting"});
    SHARDC_BINARY_OPS(X)
#undef X
    v.push_back({OpKind::Convert, "convert", OpGroup::Convert, 1, 1, "element type conversion"});
    v.push_back({OpKind::Select, "select", OpGroup::Binary, 3, 3,
                 "elementwise pred ? a : b with broadcasting"});
    v.push_back({OpKind::Matmul, "matmul", OpGroup::Contraction, 2, 2,
                 "matrix product (batched, numpy semantics)"});
    v.push_back({OpKind::Einsum, "einsum", OpGroup::Contraction, 1, -1, "Einstein summation"});
    v.push_back({OpKind::ReduceSum, "reduce_sum", OpGroup::Reduction, 1, 1, "sum over dims"});
    v.push_back({OpKind::ReduceMax, "reduce_max", OpGroup::Reduction, 1, 1, "max over dims"});
    v.push_back({OpKind::ReduceMin, "reduce_min", OpGroup::Reduction, 1, 1, "min over dims"});
    v.push_back({OpKind::ReduceMean, "reduce_mean", OpGroup::Reduction, 1, 1, "mean over dims"});
    v.push_back({OpKind::Reshape, "reshape", OpGroup::Shape, 1, 1, "same elements, new shape"});
    v.push_back({OpKind::Transpose, "transpose", OpGroup::Shape, 1, 1, "permute dims"});
    v.push_back({OpKind::Broadcast, "broadcast", OpGroup::Shape, 1, 1,
                 "operand dim i -> result dim dims[i]"});
    v.push_back({OpKind::Concat, "concat", OpGroup::Shape, 1, -1, "join along a dim"});
    v.push_back({OpKind::Slice, "slice", OpGroup::Shape, 1, 1, "strided window"});
    v.push_back({OpKind::Pad, "pad", OpGroup::Shape, 1, 1, "pad low and high"});
    v.push_back({OpKind::Constant, "constant", OpGroup::Creation, 0, 0, "dense literal"});
    v.push_back({OpKind::Iota, "iota", OpGroup::Creation, 0, 0, "0, 1, 2, ... along a dim"});
    v.push_back({OpKind::RandomUniform, "random_uniform", OpGroup::Creation, 0, 0,
                 "uniform random values, the same whatever the sharding"});
    v.push_back({OpKind::RandomNormal, "random_normal", OpGroup::Creation, 0, 0,
                 "normal random values, the same whatever the sharding"});
    v.push_back({OpKind::ShardingConstraint, "sharding_constraint", OpGroup::ShardingOp, 1, 1,
                 "pins a sharding at this point (Shardy)"});
    v.push_back(
        {OpKind::Reshard, "reshard", OpGroup::ShardingOp, 1, 1, "explicit resharding point (JAX)"});
    v.push_back({OpKind::ManualComputation, "manual_computation", OpGroup::Manual, 0, -1,
                 "body on local shapes along the manual axes"});
    v.push_back({OpKind::AutoAxes, "auto_axes", OpGroup::Manual, 0, -1,
                 "body with the named explicit axes auto; results resharded to out_shardings"});
    v.push_back({OpKind::ExplicitAxes, "explicit_axes", OpGroup::Manual, 0, -1,
                 "body with the named auto axes explicit; operands resharded to in_shardings"});
    v.push_back(
        {OpKind::AllGather, "all_gather", OpGroup::Collective, 1, 1, "gather a dim over axes"});
    v.push_back({OpKind::AllReduce, "all_reduce", OpGroup::Collective, 1, 1, "reduce over axes"});
    v.push_back({OpKind::ReduceScatter, "reduce_scatter", OpGroup::Collective, 1, 1,
                 "reduce over axes, scatter a dim"});
    v.push_back({OpKind::AllToAll, "all_to_all", OpGroup::Collective, 1, 1,
                 "split one dim, concat another, over axes"});
    v.push_back({OpKind::AllSlice, "all_slice", OpGroup::Collective, 1, 1,
                 "keep this device's block of a dim over axes (no communication)"});
    v.push_back({OpKind::CollectivePermute, "collective_permute", OpGroup::Collective, 1, 1,
                 "send to device pairs"});
    v.push_back({OpKind::AxisIndex, "axis_index", OpGroup::Collective, 0, 0,
                 "this device's index along an axis"});
    v.push_back({OpKind::For, "for", OpGroup::ControlFlow, 0, -1,
                 "counted loop over static bounds with carried values"});
    v.push_back({OpKind::While, "while", OpGroup::ControlFlow, 0, -1,
                 "loop while a cond region returns true, with carried values"});
    v.push_back({OpKind::If, "if", OpGroup::ControlFlow, 1, 1,
                 "one of two regions, chosen by a tensor<i1> predicate"});
    v.push_back({OpKind::Call, "call", OpGroup::ControlFlow, 0, -1,
                 "calls a function (means inlining it)"});
    return v;
  }();
  return ops;
}

const OpInfo &opInfo(OpKind kind) {
  // Indexed by kind: every pass asks each op for its group or name, and
  // searching the table took up to 60 comparisons per question (3.5% of a
  // whole compile's instructions at 10,000 ops).
  static const std::vector<const OpInfo *> byKind = [] {
    std::vector<const OpInfo *> v;
    for (const OpInfo &info : allOps()) {
      size_t k = static_cast<size_t>(info.kind);
      if (v.size() <= k)
        v.resize(k + 1, nullptr);
      v[k] = &info;
    }
    return v;
  }();
  size_t k = static_cast<size_t>(kind);
  return k < byKind.size() && byKind[k] ? *byKind[k] : allOps().front();
}

const char *opName(OpKind kind) { return opInfo(kind).name; }

std::optional<OpKind> lookupOp(std::string_view name) {
  // Hashed: the IR builder looks up every statement's op name.
  static const std::unordered_map<std::string_view, OpKind> byName = [] {
    std::unordered_map<std::string_view, OpKind> m;
    for (const OpInfo &info : allOps())
      m.emplace(info.name, info.kind);
    return m;
  }();
  auto it = byName.find(name);
  if (it == byName.end())
    return std::nullopt;
  return it->second;
}

std::vector<std::string_view> allOpNames() {
  std::vector<std::string_view> names;
  for (const OpInfo &info : allOps())
    names.push_back(info.name);
  return names;
}

} // namespace shardc
