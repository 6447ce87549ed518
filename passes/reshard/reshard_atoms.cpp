// Layouts in atoms for the reshard planner: every axis or sub-axis a request
// names is cut into pieces (atoms) that all of them share, so that one
// planner step moves one atom. E.g. on <["x"=4]>, source [{"x"}] and target
// [{"x":(1)2}, {"x":(2)2}] cut "x" at 2: atoms (1)2 and (2)2, and the source
// dim is the run [(1)2, (2)2].
#include "passes/reshard/ReshardPlannerInternal.h"

#include "ir/ShardingLayout.h"
#include "support/BlockLayout.h"

#include <algorithm>
#include <map>

namespace shardc::reshard {

std::string Layout::key() const {
  std::string k;
  for (const auto &dim : dims) {
    k += '[';
    for (const Atom &a : dim)
      k +=
          std::to_string(a.axis) + ':' + std::to_string(a.pre) + ':' + std::to_string(a.size) + ',';
    k += ']';
  }
  k += 'p';
  for (const Atom &a : partial)
    k += std::to_string(a.axis) + ':' + std::to_string(a.pre) + ':' + std::to_string(a.size) + ',';
  return k;
}

AtomTable::AtomTable(const Mesh &mesh) : mesh_(&mesh) {
  for (const MeshAxis &axis : mesh.axes)
    cuts_.push_back({1, std::max<int64_t>(axis.size, 1)});
}

bool AtomTable::addCuts(const AxisRef &ref) {
  int axis = mesh_->axisIndex(ref.name);
  if (axis < 0)
    return false;
  int64_t n = mesh_->axes[axis].size;
  int64_t pre = ref.effectivePreSize();
  int64_t end = pre * ref.effectiveSize(n);
  if (pre < 1 || end > n || end < pre)
    return false;
  auto &cuts = cuts_[axis];
  for (int64_t cut : {pre, end})
    if (std::find(cuts.begin(), cuts.end(), cut) == cuts.end())
      cuts.insert(std::upper_bound(cuts.begin(), cuts.end(), cut), cut);
  return true;
}

void AtomTable::addPrimeCuts(int axis) {
  int64_t n = mesh_->axes[axis].size;
  int64_t pre = 1;
  for (int64_t p = 2; pre < n;) {
    if ((n / pre) % p != 0) {
      ++p;
      continue;
    }
    pre *= p;
    addCuts(AxisRef{mesh_->axes[axis].name, pre == n ? 0 : 1, pre == n ? 0 : pre, {}});
  }
}

bool AtomTable::nests() const {
  for (const auto &cuts : cuts_)
    for (size_t i = 1; i < cuts.size(); ++i)
      if (cuts[i] % cuts[i - 1] != 0)
        return false;
  return true;
}

std::vector<Atom> AtomTable::expand(const AxisRef &ref) const {
  std::vector<Atom> atoms;
  int axis = mesh_->axisIndex(ref.name);
  if (axis < 0)
    return atoms;
  int64_t pre = ref.effectivePreSize();
  int64_t end = pre * ref.effectiveSize(mesh_->axes[axis].size);
  const auto &cuts = cuts_[axis];
  for (size_t i = 0; i + 1 < cuts.size(); ++i)
    if (cuts[i] >= pre && cuts[i + 1] <= end && cuts[i + 1] > cuts[i])
      atoms.push_back(Atom{axis, cuts[i], cuts[i + 1] / cuts[i]});
  return atoms;
}

std::vector<Atom> AtomTable::allAtoms() const {
  std::vector<Atom> atoms;
  for (size_t axis = 0; axis < cuts_.size(); ++axis)
    for (const Atom &a : expand(AxisRef{mesh_->axes[axis].name, 0, 0, {}}))
      atoms.push_back(a);
  return atoms;
}

std::optional<Layout> AtomTable::layoutOf(const Sharding &sharding,
                                          const std::vector<AxisRef> &partial) const {
  Layout layout;
  for (const DimSharding &dim : sharding.dims) {
    auto &atoms = layout.dims.emplace_back();
    for (const AxisRef &ref : dim.axes) {
      if (mesh_->axisIndex(ref.name) < 0)
        return std::nullopt;
      for (const Atom &a : expand(ref))
        atoms.push_back(a);
    }
  }
  for (const AxisRef &ref : partial) {
    if (mesh_->axisIndex(ref.name) < 0)
      return std::nullopt;
    for (const Atom &a : expand(ref))
      layout.partial.push_back(a);
  }
  return layout;
}

std::vector<AxisRef> AtomTable::toAxes(const std::vector<Atom> &atoms) const {
  std::vector<AxisRef> axes;
  for (size_t i = 0; i < atoms.size();) {
    Atom merged = atoms[i++];
    while (i < atoms.size() && atoms[i].axis == merged.axis &&
           atoms[i].pre == merged.pre * merged.size)
      merged.size *= atoms[i++].size;
    const MeshAxis &axis = mesh_->axes[merged.axis];
    if (merged.pre == 1 && merged.size == axis.size)
      axes.push_back(AxisRef{axis.name, 0, 0, {}});
    else
      axes.push_back(AxisRef{axis.name, merged.pre, merged.size, {}});
  }
  return axes;
}

Sharding AtomTable::toSharding(const Layout &layout) const {
  Sharding s = Sharding::replicatedOn(mesh_->name, layout.dims.size());
  for (size_t d = 0; d < layout.dims.size(); ++d)
    s.dims[d].axes = toAxes(layout.dims[d]);
  return s;
}

int64_t atomProduct(const std::vector<Atom> &atoms) {
  int64_t n = 1;
  for (const Atom &a : atoms)
    n *= a.size;
  return n;
}

std::vector<int64_t> localShapeOf(const Layout &layout, const std::vector<int64_t> &shape) {
  std::vector<int64_t> local = shape;
  for (size_t d = 0; d < local.size() && d < layout.dims.size(); ++d)
    local[d] = localDimSize(local[d], atomProduct(layout.dims[d]));
  return local;
}

int64_t localBytes(const Layout &layout, const TensorType &type) {
  int64_t n = dtypeBytes(type.dtype);
  for (int64_t extent : localShapeOf(layout, type.shape))
    n *= extent;
  return n;
}

std::optional<std::vector<std::pair<int64_t, int64_t>>>
permutePairs(const Mesh &mesh, const Sharding &from, const Sharding &to, size_t rank) {
  // A block is the vector of its per-dim shard indices, written as one
  // number: per dim a radix that holds both shardings' indices.
  auto shardsOf = [&](const Sharding &s, size_t d) {
    int64_t n = 1;
    if (d < s.dims.size())
      for (const AxisRef &axis : s.dims[d].axes) {
        const MeshAxis *full = mesh.findAxis(axis.name);
        n *= std::max<int64_t>(axis.effectiveSize(full ? full->size : 1), 1);
      }
    return n;
  };
  std::vector<int64_t> radix(rank);
  for (size_t d = 0; d < rank; ++d)
    radix[d] = std::max(shardsOf(from, d), shardsOf(to, d));
  const int64_t devices = mesh.deviceCount();
  std::vector<int64_t> sizes, coords(mesh.axes.size(), 0);
  for (const MeshAxis &axis : mesh.axes)
    sizes.push_back(axis.size);
  auto blockOf = [&](const Sharding &s) {
    int64_t id = 0;
    for (size_t d = 0; d < rank; ++d)
      id = id * radix[d] + (d < s.dims.size() ? shardIndex(mesh, s.dims[d], coords) : 0);
    return id;
  };
  // Each position's block before and after; the holders of each block
  // (sorted by block, then position).
  std::vector<int64_t> source(static_cast<size_t>(devices)), target(static_cast<size_t>(devices));
  std::vector<std::pair<int64_t, int64_t>> holders(static_cast<size_t>(devices));
  for (int64_t p = 0; p < devices; ++p) {
    support::rowMajorDigits(sizes.data(), sizes.size(), p, coords.data());
    source[static_cast<size_t>(p)] = blockOf(from);
    target[static_cast<size_t>(p)] = blockOf(to);
    holders[static_cast<size_t>(p)] = {source[static_cast<size_t>(p)], p};
  }
  std::sort(holders.begin(), holders.end());
  // Keep a device's own block where it can (a pair [p, p] moves nothing);
  // every other device takes the lowest source of its block left.
  std::vector<bool> taken(static_cast<size_t>(devices), false);
  std::vector<std::pair<int64_t, int64_t>> pairs;
  std::vector<int64_t> unmatched;
  for (int64_t p = 0; p < devices; ++p) {
    if (source[static_cast<size_t>(p)] == target[static_cast<size_t>(p)]) {
      taken[static_cast<size_t>(p)] = true;
      pairs.push_back({p, p});
    } else {
      unmatched.push_back(p);
    }
  }
  std::map<int64_t, size_t> next; // per block, where its untaken holders start
  for (int64_t p : unmatched) {
    int64_t block = target[static_cast<size_t>(p)];
    auto [it, added] = next.try_emplace(block, 0);
    if (added)
      it->second = static_cast<size_t>(
          std::lower_bound(holders.begin(), holders.end(), std::make_pair(block, int64_t{0})) -
          holders.begin());
    size_t &i = it->second;
    while (i < holders.size() && holders[i].first == block &&
           taken[static_cast<size_t>(holders[i].second)])
      ++i;
    if (i == holders.size() || holders[i].first != block)
      return std::nullopt;
    taken[static_cast<size_t>(holders[i].second)] = true;
    pairs.push_back({holders[i].second, p});
  }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

} // namespace shardc::reshard
