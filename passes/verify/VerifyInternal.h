// Internals of the verify-shardings pass (declared in Passes.h), split by topic:
//   verify_meshes.cpp              meshes and the program's device count
//   verify_shardings.cpp           one sharding against its mesh and type, and
//                                  the walk that finds every sharding
//   verify_manual_computation.cpp  manual_computation and collective ops
// Every check reports the first error it finds and returns false.
#pragma once

#include "ir/AxisTypes.h"
#include "ir/Diagnostics.h"
#include "ir/IR.h"

#include <string>
#include <vector>

namespace shardc::verify {

/// One axis made manual by an enclosing manual_computation.
struct ManualAxis {
  std::string name;
  const Op *owner = nullptr;
};

/// What an op sees from the manual_computation ops around it.
struct ManualScope {
  std::vector<ManualAxis> axes;
  /// The mesh of the innermost enclosing manual_computation, if known.
  const Mesh *mesh = nullptr;

  const ManualAxis *find(const std::string &name) const {
    for (const ManualAxis &a : axes)
      if (a.name == name)
        return &a;
    return nullptr;
  }
};

/// `where - message`, or just `message` when `where` is empty.
std::string prefixed(const std::string &where, const std::string &message);

/// `"x", "y"` (or `no axes`) for notes that list what a mesh offers.
std::string describeAxes(const Mesh &mesh);

/// Reports an unknown axis with a "did you mean" note and where the mesh is.
void reportUnknownAxis(const std::string &where, const AxisRef &axis, const Mesh &mesh,
                       DiagnosticEngine &diags);

/// Mesh checks: axis sizes and names, device ids, duplicate mesh names, and
/// one device count for the whole program.
bool verifyMeshes(const Module &module, DiagnosticEngine &diags);

/// The mesh a sharding names; reports `unknown mesh` when there is none, and
/// a one-device mesh whose device the program does not have.
const Mesh *lookupMesh(const Sharding &sharding, const std::string &where, const Module &module,
                       DiagnosticEngine &diags);

/// Checks one sharding on its (known) mesh, in Shardy's order. `type` is null
/// when the tensor type is unknown (then the rank is not checked). Axes made
/// manual by enclosing manual_computation ops may not appear.
bool verifyShardingOnMesh(const Sharding &sharding, const Mesh &mesh, const TensorType *type,
                          const std::string &where, const ManualScope &scope,
                          DiagnosticEngine &diags);

/// lookupMesh + verifyShardingOnMesh.
bool verifySharding(const Sharding &sharding, const TensorType *type, const std::string &where,
                    const Module &module, const ManualScope &scope, DiagnosticEngine &diags);

/// A manual_computation op: its in/out shardings (as shardings) and its
/// manual axes. Returns the scope its body sees in `bodyScope`.
bool verifyManualComputation(const Op &op, const Module &module, const ManualScope &scope,
                             ManualScope &bodyScope, DiagnosticEngine &diags);

/// An auto_axes or explicit_axes op (verify_axes_regions.cpp): the sharding
/// list each needs, its axes of the types the region changes (`types`, the
/// axis types around it), out_shardings within the region's axes.
bool verifyAxesRegion(const Op &op, const Module &module, const AxisTypeScope &types,
                      DiagnosticEngine &diags);

/// A collective op's `axes`, `axis` and `pairs` attributes.
bool verifyCollective(const Op &op, const Module &module, const ManualScope &scope,
                      DiagnosticEngine &diags);

} // namespace shardc::verify
