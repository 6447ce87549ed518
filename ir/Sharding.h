// Meshes and shardings: the representation of ../shared/seeds/sharding_representation.md
// (OpenXLA Shardy), plus the arithmetic on it that every pass needs.
#pragma once

#include "ir/Diagnostics.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardc {

/// How an axis is sharded (LANGUAGE.md section 10, JAX's AxisType): auto
/// axes are decided by propagation, explicit axes are part of the type and
/// computed by each op's rule (passes/explicit).
enum class AxisType { Auto, Explicit };

/// One named axis of a mesh.
struct MeshAxis {
  std::string name;
  int64_t size = 0;
  Loc loc;
  AxisType type = AxisType::Auto;
};

/// One word of a mesh's `axis_types=[...]`, as written (the verifier checks
/// the count and the words; the builder sets MeshAxis::type from them).
struct AxisTypeWord {
  std::string word;
  Loc loc;
};

/// A logical mesh: a row-major reshape of `deviceIds` into `axes`.
/// An empty mesh has no axes and no device ids; a maximal mesh has no axes
/// and exactly one device id.
struct Mesh {
  std::string name;
  std::vector<MeshAxis> axes;
  /// As written; empty when not written (then the order is 0..N-1).
  std::vector<int64_t> deviceIds;
  bool deviceIdsWritten = false;
  /// Written as `{<[...]>, device_ids=[...]}` (the seed's braced form).
  Loc loc;
  Loc deviceIdsLoc;
  /// `axis_types=[...]` as written; empty when not written (every axis auto,
  /// or explicit under --explicit).
  std::vector<AxisTypeWord> axisTypes;
  bool axisTypesWritten = false;
  Loc axisTypesLoc;

  /// Product of the axis sizes (1 for a mesh without axes).
  int64_t deviceCount() const;
  bool isEmpty() const { return axes.empty() && deviceIds.empty(); }
  bool isMaximal() const { return axes.empty() && deviceIds.size() == 1; }
  const MeshAxis *findAxis(const std::string &axisName) const;
  /// Index of the axis in the mesh, or -1.
  int axisIndex(const std::string &axisName) const;
  /// The device id at row-major position `linear` of the mesh.
  int64_t deviceAt(int64_t linear) const;
  std::vector<std::string> axisNames() const;
  /// Whether axis `axisName` is explicit (false for an unknown axis).
  bool isExplicit(const std::string &axisName) const;
  /// Whether some axis is explicit / some axis is auto.
  bool hasExplicitAxis() const;
  bool hasAutoAxis() const;
  /// `x: explicit, y: auto` (what hover and --explain show beside a type).
  std::string axisTypesText() const;
};

/// `auto` or `explicit`; nullopt for another word.
std::optional<AxisType> parseAxisType(const std::string &word);
const char *axisTypeName(AxisType type);

/// Whether two mesh axis names are equal. Axis names are a character or two
/// ("x", "dp"), where std::string's == calls memcmp; propagation and
/// partitioning compare them about 60 times per op (1.5% of the
/// instructions of a 10,000-op program to --emit=spmd, in line).
inline bool sameAxisName(const std::string &a, const std::string &b) {
  size_t n = a.size();
  if (n != b.size())
    return false;
  const char *p = a.data(), *q = b.data();
  for (size_t i = 0; i < n; ++i)
    if (p[i] != q[i])
      return false;
  return true;
}

/// A full axis (`"x"`, preSize == 0, size == 0: look its size up in the mesh)
/// or a sub-axis (`"x":(m)k`, preSize = m, size = k). `name` is the text
/// between the quotes, as written.
struct AxisRef {
  std::string name;
  int64_t preSize = 0;
  int64_t size = 0;
  Loc loc;

  bool isSubAxis() const { return preSize > 0; }
  /// For an axis of full size `axisSize`: the pre-size as a sub-axis would see
  /// it (1 for a full axis).
  int64_t effectivePreSize() const { return isSubAxis() ? preSize : 1; }
  /// The number of devices this axis (or sub-axis) splits into, given the full
  /// axis size.
  int64_t effectiveSize(int64_t axisSize) const { return isSubAxis() ? size : axisSize; }
  /// `"x"` or `"x":(2)4`.
  std::string str() const;

  bool sameAs(const AxisRef &o) const {
    return sameAxisName(name, o.name) && preSize == o.preSize && (!isSubAxis() || size == o.size);
  }
};

/// Sub-axis arithmetic (Shardy): a sub-axis (m)k of an axis of size n is the
/// middle dimension of reshaping n into [m, k, n/(m*k)]. A full axis is (1)n.
namespace subaxis {
/// Whether [preA, preA*sizeA) and [preB, preB*sizeB), as ranges of the
/// "pre-size product" coordinate, overlap (multiplicatively).
bool overlaps(int64_t preA, int64_t sizeA, int64_t preB, int64_t sizeB);
/// Whether A immediately precedes B so they merge into (preA)(sizeA*sizeB).
bool canMerge(int64_t preA, int64_t sizeA, int64_t preB);
} // namespace subaxis

/// The sharding of one tensor dimension: axes from major to minor, open or
/// closed, with an optional priority (`{"x"}p1`).
struct DimSharding {
  std::vector<AxisRef> axes;
  bool open = false;
  std::optional<int64_t> priority;
  Loc loc;
  Loc priorityLoc;

  bool isEmptyClosed() const { return axes.empty() && !open; }
};

/// `sharding<@mesh, [dims...], replicated={...}>`.
struct Sharding {
  std::string meshName;
  std::vector<DimSharding> dims;
  std::vector<AxisRef> replicated;
  Loc loc;
  Loc meshLoc;
  /// Written with the seed's stray `}` before `>`.
  bool strayBrace = false;

  /// Fully replicated closed sharding of the given rank on `mesh`.
  static Sharding replicatedOn(const std::string &mesh, size_t rank);
  /// Whether every dim is closed and no dim has a priority.
  bool isClosed() const;
  /// This sharding with every dim closed and no priorities (what export
  /// leaves and partitioning wants).
  Sharding closed() const;
  /// Canonical text, e.g. `sharding<@m, [{"x"}, {"y", ?}p1], replicated={"z"}>`.
  std::string str() const;
  /// JAX-style dims, e.g. `8@x, 16@{y,z}`, for `f32[8@x, 16@{y,z}]`.
  std::string jaxDims(const std::vector<int64_t> &shape) const;
};

/// Number of shards along one dimension: the product of its axes' sizes.
int64_t shardCount(const DimSharding &dim, const Mesh &mesh);

/// The per-device extent of a dimension of global size `dim` split `shards`
/// ways: ceil(dim / shards). Non-divisible dims are padded to this size.
int64_t localDimSize(int64_t dim, int64_t shards);

/// The per-device (padded) shape of a tensor with this sharding.
std::vector<int64_t> localShape(const std::vector<int64_t> &globalShape, const Sharding &sharding,
                                const Mesh &mesh);

/// Sorts replicated axes into canonical order: mesh axis order, and sub-axes
/// of one axis by increasing pre-size (the seed's rule).
void canonicalizeReplicated(std::vector<AxisRef> &axes, const Mesh &mesh);

} // namespace shardc
