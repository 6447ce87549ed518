// Mesh and sharding helpers: device order, sub-axis arithmetic, local shapes.
#include "ir/Sharding.h"
#include "ir/Printer.h"
#include "support/BlockLayout.h"

#include <algorithm>
#include <fmt/format.h>
#include <limits>

namespace shardc {

int64_t Mesh::deviceCount() const {
  // Saturates instead of overflowing: the verifier rejects such meshes, but
  // everything that runs before it must not hit undefined behaviour.
  int64_t n = 1;
  for (const MeshAxis &a : axes) {
    if (a.size <= 0)
      return 0;
    if (n > std::numeric_limits<int64_t>::max() / a.size)
      return std::numeric_limits<int64_t>::max();
    n *= a.size;
  }
  return n;
}

const MeshAxis *Mesh::findAxis(const std::string &axisName) const {
  for (const MeshAxis &a : axes)
    if (sameAxisName(a.name, axisName))
      return &a;
  return nullptr;
}

int Mesh::axisIndex(const std::string &axisName) const {
  for (size_t i = 0; i < axes.size(); ++i)
    if (sameAxisName(axes[i].name, axisName))
      return static_cast<int>(i);
  return -1;
}

int64_t Mesh::deviceAt(int64_t linear) const {
  if (linear >= 0 && static_cast<size_t>(linear) < deviceIds.size())
    return deviceIds[linear];
  return linear;
}

std::vector<std::string> Mesh::axisNames() const {
  std::vector<std::string> names;
  for (const MeshAxis &a : axes)
    names.push_back(a.name);
  return names;
}

bool Mesh::isExplicit(const std::string &axisName) const {
  const MeshAxis *axis = findAxis(axisName);
  return axis && axis->type == AxisType::Explicit;
}

bool Mesh::hasExplicitAxis() const {
  return std::any_of(axes.begin(), axes.end(),
                     [](const MeshAxis &a) { return a.type == AxisType::Explicit; });
}

bool Mesh::hasAutoAxis() const {
  return std::any_of(axes.begin(), axes.end(),
                     [](const MeshAxis &a) { return a.type == AxisType::Auto; });
}

std::string Mesh::axisTypesText() const {
  std::string out;
  for (const MeshAxis &a : axes)
    out += fmt::format("{}{}: {}", out.empty() ? "" : ", ", a.name, axisTypeName(a.type));
  return out;
}

std::optional<AxisType> parseAxisType(const std::string &word) {
  if (word == "auto")
    return AxisType::Auto;
  if (word == "explicit")
    return AxisType::Explicit;
  return std::nullopt;
}

const char *axisTypeName(AxisType type) { return type == AxisType::Explicit ? "explicit" : "auto"; }

std::string AxisRef::str() const {
  if (!isSubAxis())
    return fmt::format("\"{}\"", name);
  return fmt::format("\"{}\":({}){}", name, preSize, size);
}

namespace subaxis {
// A sub-axis (m)k occupies the half-open range [m, m*k) of the axis's
// "pre-size product" coordinate: reshaping n into [m, k, n/(m*k)] puts it
// after everything of product m. Two such ranges overlap when each starts
// before the other ends.
bool overlaps(int64_t preA, int64_t sizeA, int64_t preB, int64_t sizeB) {
  return preA < preB * sizeB && preB < preA * sizeA;
}

bool canMerge(int64_t preA, int64_t sizeA, int64_t preB) { return preA * sizeA == preB; }
} // namespace subaxis

Sharding Sharding::closed() const {
  Sharding s = *this;
  for (DimSharding &d : s.dims) {
    d.open = false;
    d.priority.reset();
  }
  return s;
}

Sharding Sharding::replicatedOn(const std::string &mesh, size_t rank) {
  Sharding s;
  s.meshName = mesh;
  s.dims.resize(rank);
  return s;
}

bool Sharding::isClosed() const {
  for (const DimSharding &d : dims)
    if (d.open || d.priority)
      return false;
  return true;
}

std::string Sharding::str() const { return printSharding(*this); }

std::string Sharding::jaxDims(const std::vector<int64_t> &shape) const {
  std::string out;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ", ";
    out += std::to_string(shape[i]);
    if (i >= dims.size() || dims[i].axes.empty())
      continue;
    auto jaxAxis = [](const AxisRef &a) {
      return a.isSubAxis() ? fmt::format("{}:({}){}", a.name, a.preSize, a.size) : a.name;
    };
    const auto &axes = dims[i].axes;
    if (axes.size() == 1) {
      out += "@" + jaxAxis(axes[0]);
      continue;
    }
    out += "@{";
    for (size_t j = 0; j < axes.size(); ++j)
      out += (j ? "," : "") + jaxAxis(axes[j]);
    out += "}";
  }
  return out;
}

int64_t shardCount(const DimSharding &dim, const Mesh &mesh) {
  int64_t n = 1;
  for (const AxisRef &a : dim.axes) {
    const MeshAxis *axis = mesh.findAxis(a.name);
    int64_t size = a.isSubAxis() ? a.size : (axis ? axis->size : 1);
    n *= std::max<int64_t>(size, 1);
  }
  return n;
}

int64_t localDimSize(int64_t dim, int64_t shards) { return support::blockSize(dim, shards); }

std::vector<int64_t> localShape(const std::vector<int64_t> &globalShape, const Sharding &sharding,
                                const Mesh &mesh) {
  std::vector<int64_t> local = globalShape;
  for (size_t i = 0; i < local.size() && i < sharding.dims.size(); ++i)
    local[i] = localDimSize(local[i], shardCount(sharding.dims[i], mesh));
  return local;
}

void canonicalizeReplicated(std::vector<AxisRef> &axes, const Mesh &mesh) {
  std::stable_sort(axes.begin(), axes.end(), [&](const AxisRef &a, const AxisRef &b) {
    int ia = mesh.axisIndex(a.name), ib = mesh.axisIndex(b.name);
    if (ia != ib)
      return ia < ib;
    return a.effectivePreSize() < b.effectivePreSize();
  });
}

} // namespace shardc
