// Axis algebra on one mesh (Shardy's AxisRefAttr arithmetic), shared by every
// stage: propagation, explicit shardings, export, partitioning, the reshard
// planner and the verifier.
//
// An axis or sub-axis is the range [pre, pre*size) of its mesh axis's
// "pre-size product" coordinate; a full axis "x"=4 is (1)4.
#pragma once

#include "ir/Sharding.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardc {

/// Size of the full mesh axis `name` (1 when the mesh lacks it).
int64_t fullAxisSize(const std::string &name, const Mesh &mesh);
/// The pre-size of `a`: 1 for a full axis.
int64_t preSizeOf(const AxisRef &a);
/// The number of devices `a` splits into.
int64_t sizeOf(const AxisRef &a, const Mesh &mesh);
/// Product of the sizes of `axes`.
int64_t productOf(const std::vector<AxisRef> &axes, const Mesh &mesh);
/// `"x":(pre)size`, or the full axis `"x"` when it covers the whole axis.
AxisRef makeAxis(const std::string &name, int64_t pre, int64_t size, const Mesh &mesh);
/// Same axis or sub-axis (a full axis equals its (1)n form).
bool sameAxis(const AxisRef &a, const AxisRef &b, const Mesh &mesh);
bool sameAxes(const std::vector<AxisRef> &a, const std::vector<AxisRef> &b, const Mesh &mesh);
/// The same axes and sub-axes in the same order, as written (without a mesh
/// a full axis and its (1)n form differ; locations ignored).
bool sameAxisList(const std::vector<AxisRef> &a, const std::vector<AxisRef> &b);
/// Whether two shardings lay a tensor out alike as written: the same mesh
/// and the same axes in every dim (open/closed, priorities, replicated lists
/// and locations ignored).
bool sameLayout(const Sharding &a, const Sharding &b);
/// `a` is a prefix of `b` (or equal): same name and pre-size, size(a) divides size(b).
bool isPrefixOf(const AxisRef &a, const AxisRef &b, const Mesh &mesh);
/// `b` lies inside `a`.
bool contains(const AxisRef &a, const AxisRef &b, const Mesh &mesh);
/// The ranges of `a` and `b` intersect: the same axis, and (for two
/// sub-axes) overlapping ranges. Needs no sizes, so no mesh.
bool overlaps(const AxisRef &a, const AxisRef &b);
bool overlaps(const AxisRef &a, const AxisRef &b, const Mesh &mesh);
/// Whether `a` and `b` can be in one sharding: other axes, a full axis, or
/// sub-axes of one decomposition of the axis ("a":(1)2 and "a":(3)2 of a=6
/// cannot: 6 is not 2 * k * 2; "a":(1)2 and "a":(2)3 can). Shardy's
/// AxisRefAttr::canCoexist.
bool canCoexist(const AxisRef &a, const AxisRef &b, const Mesh &mesh);
/// The largest prefix of `a` that does not overlap `b`; nullopt when none,
/// or when they cannot coexist.
std::optional<AxisRef> prefixWithoutOverlap(const AxisRef &a, const AxisRef &b, const Mesh &mesh);
/// Appends `a`, merging it into the last axis when they are consecutive
/// sub-axes ("x":(1)2 then "x":(2)2 gives "x" on a mesh with "x"=4).
void appendMerging(std::vector<AxisRef> &axes, const AxisRef &a, const Mesh &mesh);
/// `axes` with every run of consecutive sub-axes merged (appendMerging).
std::vector<AxisRef> mergedAxes(const std::vector<AxisRef> &axes, const Mesh &mesh);

/// How a list of axes relates to another (Shardy's isAxisListPrefixOf).
enum class PrefixStatus { Equal, StrictPrefix, NotAPrefix };
PrefixStatus axisListPrefix(const std::vector<AxisRef> &first, const std::vector<AxisRef> &second,
                            const Mesh &mesh);

// ---- device coordinates ---------------------------------------------------------

/// What of coordinate `coords[axis]` the axis (or sub-axis) refs in `refs`
/// naming mesh axis `axis` do not cover: the coordinate with their digits
/// set to 0. 0 when a full axis is among them; the coordinate itself when
/// none names the axis. E.g. axis size 4, refs {"x":(2)2}: 3 -> 2.
int64_t uncoveredCoordinate(const Mesh &mesh, int axis, const std::vector<AxisRef> &refs,
                            const std::vector<int64_t> &coords);

} // namespace shardc
