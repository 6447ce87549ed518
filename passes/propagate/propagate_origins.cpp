// propagate-shardings, part 4: where each axis came from (ShardingOrigins.h),
// recorded only when a caller asks (`--explain`, `--debug-origins`).
//
// An axis written on a tensor has the Loc of the axis in its annotation and
// the priority of its dim. An axis that propagation adds to dim d of a tensor
// came through the factor of d that now holds it, from that factor's source
// tensor (the largest tensor that already had the factor's axes): it takes
// the Loc recorded there, and the round in which it arrived. Example: in
// `%h = matmul %x, %w` with %x [{"x"}, {}] written on line 2, %h's "x" comes
// through factor i from %x and points at line 2. Origins are kept per exact
// axis or sub-axis: after a reshape merges two dims, "x":(1)2 and "x":(4)2
// on one dim can point at two different annotations.
#include "passes/propagate/PropagateInternal.h"

namespace shardc::propagation {

void OriginRecorder::recordWritten(const Storage *sharding) {
  if (!*sharding)
    return;
  const Sharding &s = **sharding;
  std::vector<DimOrigins> &table = table_[sharding];
  table.resize(s.dims.size());
  for (size_t d = 0; d < s.dims.size(); ++d) {
    const DimSharding &dim = s.dims[d];
    for (const AxisRef &a : dim.axes) {
      Loc loc = a.loc.known() ? a.loc : dim.loc.known() ? dim.loc : s.loc;
      table[d][originKey(a)] = AxisOrigin{loc, dim.priority.value_or(0), false, false, a};
    }
  }
}

void OriginRecorder::markPropagated(const Storage *sharding) {
  auto it = table_.find(sharding);
  if (it == table_.end())
    return;
  for (DimOrigins &dim : it->second)
    for (auto &[axis, origin] : dim)
      origin.propagated = true;
}

void OriginRecorder::markCopiedFromConstraint(const Storage *sharding) {
  auto it = table_.find(sharding);
  if (it == table_.end())
    return;
  for (DimOrigins &dim : it->second)
    for (auto &[axis, origin] : dim) {
      origin.propagated = true;
      origin.copiedFromConstraint = true;
    }
}

void OriginRecorder::recordPropagated(const EdgeVisit &visit, size_t t,
                                      const std::vector<DimSharding> &dims, int64_t round,
                                      const Mesh &mesh) {
  std::vector<DimOrigins> &table = table_[visit.slots[t]->sharding];
  table.resize(dims.size());
  for (size_t d = 0; d < dims.size(); ++d)
    for (const AxisRef &a : dims[d].axes)
      if (!table[d].count(originKey(a)))
        table[d][originKey(a)] = originOf(visit, t, d, a, round, mesh);
}

namespace {

/// The origin a source dim records for `axis`: its own entry, else that of a
/// recorded axis that contains it (a sub-axis split off a written full axis),
/// else that of the first recorded piece of it (sub-axes merged into it).
const AxisOrigin *lookUp(const DimOrigins &dim, const AxisRef &axis, const Mesh &mesh) {
  if (auto it = dim.find(originKey(axis)); it != dim.end())
    return &it->second;
  const AxisOrigin *piece = nullptr;
  for (const auto &[key, origin] : dim) {
    if (contains(origin.axis, axis, mesh))
      return &origin;
    if (!piece && contains(axis, origin.axis, mesh))
      piece = &origin;
  }
  return piece;
}

} // namespace

AxisOrigin OriginRecorder::originOf(const EdgeVisit &visit, size_t t, size_t d, const AxisRef &axis,
                                    int64_t round, const Mesh &mesh) const {
  AxisOrigin origin{visit.loc, round, true, false, axis};
  for (int f : (*visit.mappings[t])[d]) {
    bool holds = false;
    for (const AxisRef &a : visit.projection.tensors[t].factors[f].axes)
      holds |= overlaps(a, axis, mesh);
    int source = visit.update.source[f];
    if (!holds || source < 0)
      continue;
    auto it = table_.find(visit.slots[source]->sharding);
    if (it == table_.end())
      break;
    // The source's dim that holds factor f.
    const TensorFactors &sourceDims = *visit.mappings[source];
    for (size_t sd = 0; sd < sourceDims.size() && sd < it->second.size(); ++sd)
      for (int g : sourceDims[sd])
        if (g == f)
          if (const AxisOrigin *found = lookUp(it->second[sd], axis, mesh))
            origin.loc = found->loc;
    break;
  }
  return origin;
}

void OriginRecorder::exportTo(ShardingOrigins &out,
                              const std::map<const Storage *, const Value *> &values,
                              const std::map<const Storage *, const ResultSpec *> &results) const {
  for (const auto &[storage, dims] : table_) {
    if (auto v = values.find(storage); v != values.end())
      out.values[v->second] = dims;
    else if (auto r = results.find(storage); r != results.end())
      out.results[r->second] = dims;
  }
}

} // namespace shardc::propagation
