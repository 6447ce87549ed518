// Internals of the reshard planner shared by its two files: layouts over
// "atoms" (the pieces every axis is cut into) and the same-mesh search.
#pragma once

#include "passes/reshard/ReshardPlanner.h"

#include <optional>
#include <string>
#include <vector>

namespace shardc::reshard {

/// One piece of a mesh axis: the sub-axis (pre)size of axis `axis`, cut so
/// that every axis or sub-axis the request mentions is a run of atoms.
struct Atom {
  int axis = 0;
  int64_t pre = 1;
  int64_t size = 1;
  bool operator==(const Atom &o) const { return axis == o.axis && pre == o.pre && size == o.size; }
  bool operator!=(const Atom &o) const { return !(*this == o); }
};

/// A layout in atoms: each dim's atoms major to minor, and the atoms the
/// value is still a partial result over.
struct Layout {
  std::vector<std::vector<Atom>> dims;
  std::vector<Atom> partial;
  bool operator==(const Layout &o) const { return dims == o.dims && partial == o.partial; }
  std::string key() const;
};

/// The cuts of every axis of a mesh: atoms are the pieces between
/// consecutive cuts.
class AtomTable {
public:
  explicit AtomTable(const Mesh &mesh);
  /// Adds the cuts of `axis`; false when it names no axis of the mesh.
  bool addCuts(const AxisRef &axis);
  /// Cuts an axis into prime-sized pieces (for cross-mesh candidates).
  void addPrimeCuts(int axis);
  /// False when the cuts of some axis do not nest (e.g. (2)3 and (3)2 of
  /// 12): no common set of atoms.
  bool nests() const;
  /// The atoms of `axis`, major first; size-1 pieces are left out.
  std::vector<Atom> expand(const AxisRef &axis) const;
  /// Every atom of every axis, in mesh order.
  std::vector<Atom> allAtoms() const;
  std::optional<Layout> layoutOf(const Sharding &sharding,
                                 const std::vector<AxisRef> &partial) const;
  /// Merges runs of atoms back into axes and sub-axes.
  std::vector<AxisRef> toAxes(const std::vector<Atom> &atoms) const;
  Sharding toSharding(const Layout &layout) const;
  const Mesh &mesh() const { return *mesh_; }

private:
  const Mesh *mesh_;
  std::vector<std::vector<int64_t>> cuts_; // per axis, sorted, 1 and n included
};

int64_t atomProduct(const std::vector<Atom> &atoms);
std::vector<int64_t> localShapeOf(const Layout &layout, const std::vector<int64_t> &shape);
/// Local (padded) bytes of a value of `type` laid out as `layout`.
int64_t localBytes(const Layout &layout, const TensorType &type);

/// The cheapest same-mesh plan from `from` to `to` (no partial atoms in
/// `to`); nullopt when the search gives up.
std::optional<ReshardPlan> searchPlan(const AtomTable &atoms, const TensorType &type,
                                      const Layout &from, const Layout &to,
                                      const std::string &partialKind);

/// The plan that always works: reduce every partial atom, gather every
/// sharded dim whole, then slice every target dim (marked `fallback`).
ReshardPlan gatherAllPlan(const AtomTable &atoms, const TensorType &type, const Layout &from,
                          const Layout &to, const std::string &partialKind);

/// [source, target] mesh position pairs moving `from`'s blocks to where
/// `to` wants them (same tiling); nullopt when some block has no holder.
std::optional<std::vector<std::pair<int64_t, int64_t>>>
permutePairs(const Mesh &mesh, const Sharding &from, const Sharding &to, size_t rank);

/// Across meshes (ReshardPlanner.cpp dispatches here).
ReshardPlan planAcrossMeshes(const ReshardRequest &request);

} // namespace shardc::reshard
