// Axis algebra on one mesh: sizes of axes and sub-axes, equality, prefixes,
// containment and overlap, merging neighbouring sub-axes. Every stage that
// reasons about which devices an axis list covers uses these.
#include "ir/AxisAlgebra.h"

#include "ir/ShardingLayout.h"

#include <algorithm>

namespace shardc {

int64_t fullAxisSize(const std::string &name, const Mesh &mesh) {
  const MeshAxis *axis = mesh.findAxis(name);
  return axis && axis->size > 0 ? axis->size : 1;
}

int64_t preSizeOf(const AxisRef &a) { return a.isSubAxis() ? a.preSize : 1; }

int64_t sizeOf(const AxisRef &a, const Mesh &mesh) {
  return a.isSubAxis() ? a.size : fullAxisSize(a.name, mesh);
}

int64_t productOf(const std::vector<AxisRef> &axes, const Mesh &mesh) {
  int64_t n = 1;
  for (const AxisRef &a : axes)
    n *= sizeOf(a, mesh);
  return n;
}

AxisRef makeAxis(const std::string &name, int64_t pre, int64_t size, const Mesh &mesh) {
  if (pre == 1 && size == fullAxisSize(name, mesh))
    return AxisRef{name, 0, 0, {}};
  return AxisRef{name, pre, size, {}};
}

bool sameAxis(const AxisRef &a, const AxisRef &b, const Mesh &mesh) {
  if (!sameAxisName(a.name, b.name))
    return false;
  // Two full axes are equal without looking the size up (the common case).
  if (!a.isSubAxis() && !b.isSubAxis())
    return true;
  return preSizeOf(a) == preSizeOf(b) && sizeOf(a, mesh) == sizeOf(b, mesh);
}

bool sameAxes(const std::vector<AxisRef> &a, const std::vector<AxisRef> &b, const Mesh &mesh) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!sameAxis(a[i], b[i], mesh))
      return false;
  return true;
}

bool sameAxisList(const std::vector<AxisRef> &a, const std::vector<AxisRef> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].sameAs(b[i]))
      return false;
  return true;
}

bool sameLayout(const Sharding &a, const Sharding &b) {
  if (a.meshName != b.meshName || a.dims.size() != b.dims.size())
    return false;
  for (size_t d = 0; d < a.dims.size(); ++d)
    if (!sameAxisList(a.dims[d].axes, b.dims[d].axes))
      return false;
  return true;
}

bool isPrefixOf(const AxisRef &a, const AxisRef &b, const Mesh &mesh) {
  if (!sameAxisName(a.name, b.name))
    return false;
  if (!a.isSubAxis() && !b.isSubAxis())
    return true;
  return preSizeOf(a) == preSizeOf(b) && sizeOf(b, mesh) % sizeOf(a, mesh) == 0;
}

bool contains(const AxisRef &a, const AxisRef &b, const Mesh &mesh) {
  if (!sameAxisName(a.name, b.name))
    return false;
  if (!a.isSubAxis())
    return true; // a full axis contains each of its sub-axes
  int64_t aBegin = preSizeOf(a), aEnd = aBegin * sizeOf(a, mesh);
  int64_t bBegin = preSizeOf(b), bEnd = bBegin * sizeOf(b, mesh);
  return bBegin % aBegin == 0 && aEnd % bEnd == 0;
}

bool overlaps(const AxisRef &a, const AxisRef &b) {
  if (!sameAxisName(a.name, b.name))
    return false;
  if (!a.isSubAxis() || !b.isSubAxis())
    return true; // a full axis overlaps each of its sub-axes
  return subaxis::overlaps(a.preSize, a.size, b.preSize, b.size);
}

bool overlaps(const AxisRef &a, const AxisRef &b, const Mesh &) { return overlaps(a, b); }

bool canCoexist(const AxisRef &a, const AxisRef &b, const Mesh &mesh) {
  if (!sameAxisName(a.name, b.name) || !a.isSubAxis() || !b.isSubAxis())
    return true;
  int64_t aEnd = a.preSize * sizeOf(a, mesh), bEnd = b.preSize * sizeOf(b, mesh);
  auto [minPre, maxPre] = std::minmax(a.preSize, b.preSize);
  auto [minEnd, maxEnd] = std::minmax(aEnd, bEnd);
  if (minEnd > maxPre) // they overlap: every boundary must divide the next
    return minEnd % maxPre == 0 && maxPre % minPre == 0 && maxEnd % minEnd == 0;
  return maxPre % minEnd == 0; // the gap between them is a sub-axis too
}

std::optional<AxisRef> prefixWithoutOverlap(const AxisRef &a, const AxisRef &b, const Mesh &mesh) {
  if (!canCoexist(a, b, mesh))
    return std::nullopt;
  if (!overlaps(a, b, mesh))
    return a;
  // `b` starts inside `a`: the part of `a` before it is a prefix of `a`.
  int64_t aPre = preSizeOf(a), bPre = preSizeOf(b);
  if (bPre > aPre && bPre % aPre == 0)
    return makeAxis(a.name, aPre, bPre / aPre, mesh);
  return std::nullopt;
}

void appendMerging(std::vector<AxisRef> &axes, const AxisRef &a, const Mesh &mesh) {
  if (!axes.empty()) {
    const AxisRef &last = axes.back();
    if (sameAxisName(last.name, a.name) &&
        subaxis::canMerge(preSizeOf(last), sizeOf(last, mesh), preSizeOf(a))) {
      axes.back() = makeAxis(a.name, preSizeOf(last), sizeOf(last, mesh) * sizeOf(a, mesh), mesh);
      return;
    }
  }
  axes.push_back(a.isSubAxis() ? makeAxis(a.name, a.preSize, a.size, mesh) : a);
}

std::vector<AxisRef> mergedAxes(const std::vector<AxisRef> &axes, const Mesh &mesh) {
  std::vector<AxisRef> out;
  for (const AxisRef &a : axes)
    appendMerging(out, a, mesh);
  return out;
}

PrefixStatus axisListPrefix(const std::vector<AxisRef> &first, const std::vector<AxisRef> &second,
                            const Mesh &mesh) {
  if (first.empty())
    return second.empty() ? PrefixStatus::Equal : PrefixStatus::StrictPrefix;
  if (first.size() > second.size())
    return PrefixStatus::NotAPrefix;
  size_t last = first.size() - 1;
  for (size_t i = 0; i < last; ++i)
    if (!sameAxis(first[i], second[i], mesh))
      return PrefixStatus::NotAPrefix;
  if (first.size() == second.size() && sameAxis(first[last], second[last], mesh))
    return PrefixStatus::Equal;
  return isPrefixOf(first[last], second[last], mesh) ? PrefixStatus::StrictPrefix
                                                     : PrefixStatus::NotAPrefix;
}

int64_t uncoveredCoordinate(const Mesh &mesh, int axis, const std::vector<AxisRef> &refs,
                            const std::vector<int64_t> &coords) {
  const MeshAxis &full = mesh.axes[axis];
  int64_t coord = coords[axis];
  for (const AxisRef &ref : refs) {
    if (!sameAxisName(ref.name, full.name))
      continue;
    int64_t k = ref.effectiveSize(full.size);
    int64_t post = full.size / (ref.effectivePreSize() * k);
    coord -= axisCoordinate(mesh, ref, coords) * post;
  }
  return coord;
}

} // namespace shardc
