// The collectives, carried out in memory over a manual_computation body's
// instances (SPMD_CONTRACT.md section 2). A collective over `axes = {a1, a2}`
// works within groups: the instances that agree on every coordinate those
// axes do not cover. Within a group an instance's index is the mixed-radix
// number of its coordinates along a1, a2 (a1 major); a sub-axis "x":(m)k of
// an axis of size n covers the digit (c / (n/(m*k))) % k of coordinate c.
// Example: mesh <["x"=2, "y"=2]>, axes = {"y"}: groups {(0,0), (0,1)} and
// {(1,0), (1,1)}; (1,1) has index 1 in the second.
#include "backend/interpreter/InterpreterInternal.h"
#include "ir/ShardingLayout.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

namespace shardc::interp::detail {
namespace {

/// The groups of a collective: members[g][k] is the instance with index k
/// in group g; groupOf/indexOf invert that.
struct Groups {
  int64_t size = 1;
  std::vector<std::vector<size_t>> members;
  std::vector<size_t> groupOf, indexOf;
};

Groups formGroups(const Op &op, const Instances &instances) {
  const Attribute *attr = op.attr(attrs::axes);
  if (!attr || attr->kind != Attribute::Kind::AxisSet)
    fail(op, "missing attribute: axes");
  const std::vector<AxisRef> &axes = attr->axes;
  Groups groups;
  for (const AxisRef &axis : axes) {
    if (!instances.isManual(axis.name))
      fail(op, fmt::format("axis \"{}\" is not manual here: collectives run inside a "
                           "manual_computation that makes their axes manual",
                           axis.name));
    groups.size *= axis.effectiveSize(instances.mesh->findAxis(axis.name)->size);
  }
  std::map<std::vector<int64_t>, size_t> groupIds;
  groups.groupOf.resize(instances.count());
  groups.indexOf.resize(instances.count());
  for (size_t i = 0; i < instances.count(); ++i) {
    int64_t index = 0;
    for (const AxisRef &axis : axes) {
      int64_t k = axis.effectiveSize(instances.mesh->findAxis(axis.name)->size);
      index = index * k + axisCoordinate(*instances.mesh, axis, instances.coords[i]);
    }
    // What the axes cover is not part of the key.
    std::vector<int64_t> key;
    for (int a : instances.manualAxes)
      key.push_back(uncoveredCoordinate(*instances.mesh, a, axes, instances.coords[i]));
    auto [it, inserted] = groupIds.emplace(key, groups.members.size());
    if (inserted)
      groups.members.emplace_back(static_cast<size_t>(groups.size), SIZE_MAX);
    size_t &slot = groups.members[it->second][static_cast<size_t>(index)];
    if (slot != SIZE_MAX)
      fail(op, "axes overlap: two instances have the same index in their group");
    slot = i;
    groups.groupOf[i] = it->second;
    groups.indexOf[i] = static_cast<size_t>(index);
  }
  return groups;
}

int64_t intAttr(const Op &op, AttrKey<int64_t> key, size_t rank) {
  std::optional<int64_t> value = op.get(key);
  if (!value || *value < 0 || *value >= static_cast<int64_t>(rank))
    fail(op, fmt::format("{} out of range", key.name));
  return *value;
}

/// Elementwise sum / max / min of `parts`, in order.
Tensor reduceParts(const Op &op, const std::vector<const Tensor *> &parts,
                   const std::string &kind) {
  Tensor out(parts[0]->type());
  for (int64_t e = 0; e < out.size(); ++e) {
    if (out.holdsFloats()) {
      double acc = parts[0]->floatAt(e);
      for (size_t k = 1; k < parts.size(); ++k) {
        double x = parts[k]->floatAt(e);
        if (kind == "sum")
          acc += x;
        else if (std::isnan(acc) || std::isnan(x))
          acc = NAN;
        else
          acc = kind == "max" ? std::max(acc, x) : std::min(acc, x);
      }
      out.setFloat(e, acc);
    } else {
      uint64_t acc = static_cast<uint64_t>(parts[0]->intAt(e));
      for (size_t k = 1; k < parts.size(); ++k) {
        int64_t x = parts[k]->intAt(e);
        if (kind == "sum")
          acc += static_cast<uint64_t>(x);
        else
          acc = static_cast<uint64_t>(kind == "max" ? std::max(static_cast<int64_t>(acc), x)
                                                    : std::min(static_cast<int64_t>(acc), x));
      }
      out.setInt(e, acc);
    }
  }
  return out;
}

std::string reductionKind(const Op &op) {
  const Attribute *attr = op.attr(attrs::kind);
  std::string kind = attr ? attr->s : "sum";
  if (kind != "sum" && kind != "max" && kind != "min")
    fail(op, fmt::format("unknown reduction kind: \"{}\"", kind));
  return kind;
}

std::vector<Tensor> collectivePermute(const Op &op, const std::vector<const Tensor *> &operands) {
  std::vector<Tensor> out;
  for (const Tensor *t : operands)
    out.emplace_back(t->type()); // an instance that is no target gets zeros
  const Attribute *pairs = op.attr(attrs::pairs);
  if (!pairs || pairs->kind != Attribute::Kind::List)
    fail(op, "missing attribute: pairs");
  for (const Attribute &pair : pairs->list) {
    std::optional<std::vector<int64_t>> ends = pair.intList();
    if (!ends || ends->size() != 2)
      fail(op, "each pair must be [source, target]");
    int64_t source = (*ends)[0], target = (*ends)[1], count = operands.size();
    if (source < 0 || source >= count || target < 0 || target >= count)
      fail(op, fmt::format("pair [{}, {}] out of range: {} instances", source, target, count));
    out[target] = *operands[source];
  }
  return out;
}

} // namespace

std::vector<Tensor> evalCollective(const Op &op, const Instances &instances,
                                   const std::vector<const Tensor *> &operands) {
  if (op.kind == OpKind::AxisIndex) {
    const Attribute *axis = op.attr(attrs::axis);
    if (!axis || axis->kind != Attribute::Kind::String)
      fail(op, "missing attribute: axis");
    if (!instances.isManual(axis->s))
      fail(op, fmt::format("axis \"{}\" is not manual here", axis->s));
    std::vector<Tensor> out;
    int a = instances.mesh->axisIndex(axis->s);
    for (const std::vector<int64_t> &coords : instances.coords)
      out.push_back(makeIntTensor(TensorType{{}, DType::I32}, {coords[a]}));
    return out;
  }
  if (op.kind == OpKind::CollectivePermute)
    return collectivePermute(op, operands);

  Groups groups = formGroups(op, instances);
  std::vector<Tensor> out;
  for (size_t i = 0; i < instances.count(); ++i) {
    const Tensor &mine = *operands[i];
    std::vector<const Tensor *> group;
    for (size_t member : groups.members[groups.groupOf[i]])
      group.push_back(operands[member]);
    int64_t index = static_cast<int64_t>(groups.indexOf[i]);
    switch (op.kind) {
    case OpKind::AllGather:
      out.push_back(concatDim(group, static_cast<size_t>(intAttr(op, attrs::dim, mine.rank()))));
      break;
    case OpKind::AllReduce:
      out.push_back(reduceParts(op, group, reductionKind(op)));
      break;
    case OpKind::ReduceScatter: {
      size_t dim = static_cast<size_t>(intAttr(op, attrs::dim, mine.rank()));
      if (mine.shape()[dim] % groups.size != 0)
        fail(op, "dim isn't divisible by the shard count");
      int64_t block = mine.shape()[dim] / groups.size;
      out.push_back(sliceDim(reduceParts(op, group, "sum"), dim, index * block, block));
      break;
    }
    case OpKind::AllSlice: {
      size_t dim = static_cast<size_t>(intAttr(op, attrs::dim, mine.rank()));
      int64_t block = localDimSize(mine.shape()[dim], groups.size);
      out.push_back(sliceDim(mine, dim, index * block, block));
      break;
    }
    case OpKind::AllToAll: {
      size_t split = static_cast<size_t>(intAttr(op, attrs::splitDim, mine.rank()));
      size_t concat = static_cast<size_t>(intAttr(op, attrs::concatDim, mine.rank()));
      if (mine.shape()[split] % groups.size != 0)
        fail(op, "split_dim isn't divisible by the shard count");
      int64_t block = mine.shape()[split] / groups.size;
      // From each sender (in group order), the block meant for me.
      std::vector<Tensor> received;
      for (const Tensor *sender : group)
        received.push_back(sliceDim(*sender, split, index * block, block));
      std::vector<const Tensor *> parts;
      for (const Tensor &t : received)
        parts.push_back(&t);
      out.push_back(concatDim(parts, concat));
      break;
    }
    default:
      fail(op, "not a collective");
    }
  }
  return out;
}

} // namespace shardc::interp::detail
