// verify-shardings, part 1: meshes. Each mesh on its own (axis sizes, axis
// names, device ids), then across meshes (names, one device count).
#include "passes/verify/VerifyInternal.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

namespace shardc::verify {
namespace {

/// Checks `device_ids` against the axes: non-negative, one id per device, and
/// (unless the mesh is maximal) a permutation of 0..N-1. Ids equal to 0..N-1
/// are accepted: the seed itself writes them out.
bool verifyDeviceIds(const Mesh &mesh, DiagnosticEngine &diags) {
  if (mesh.deviceIds.empty())
    return true; // the default order, 0..N-1 (or an empty mesh)
  for (int64_t id : mesh.deviceIds)
    if (id < 0) {
      diags.error(mesh.deviceIdsLoc, fmt::format("device id must be non-negative: {}", id));
      return false;
    }
  int64_t count = mesh.deviceCount();
  int64_t given = static_cast<int64_t>(mesh.deviceIds.size());
  if (given != count) {
    diags
        .error(mesh.deviceIdsLoc, fmt::format("number of device ids doesn't match the product of "
                                              "axis sizes: {} != {}",
                                              given, count))
        .note(mesh.loc, mesh.axes.empty()
                            ? "a mesh without axes takes exactly one device id"
                            : fmt::format("mesh @{} has {} devices", mesh.name, count));
    return false;
  }
  if (mesh.axes.empty())
    return true; // maximal mesh: any one device
  std::set<int64_t> seen;
  for (int64_t id : mesh.deviceIds) {
    if (id >= count) {
      diags.error(mesh.deviceIdsLoc, fmt::format("device id out of range [0, {}): {}", count, id));
      return false;
    }
    if (!seen.insert(id).second) {
      diags.error(mesh.deviceIdsLoc, fmt::format("duplicate device id: {}", id));
      return false;
    }
  }
  return true;
}

/// `axis_types=[...]`: one known word per axis.
bool verifyAxisTypes(const Mesh &mesh, DiagnosticEngine &diags) {
  if (!mesh.axisTypesWritten)
    return true;
  for (const AxisTypeWord &w : mesh.axisTypes)
    if (!parseAxisType(w.word)) {
      diags.error(w.loc, fmt::format("mesh @{} - unknown axis type: {}", mesh.name, w.word))
          .note(Loc{}, "an axis type is `auto` or `explicit`");
      return false;
    }
  if (mesh.axisTypes.size() != mesh.axes.size()) {
    diags
        .error(mesh.axisTypesLoc,
               fmt::format("mesh @{} - axis_types needs one entry per axis: {} given, {} axes",
                           mesh.name, mesh.axisTypes.size(), mesh.axes.size()))
        .note(mesh.loc,
              fmt::format("mesh @{} has axes {}", mesh.name, fmt::join(mesh.axisNames(), ", ")));
    return false;
  }
  return true;
}

bool verifyMesh(const Mesh &mesh, DiagnosticEngine &diags) {
  if (!verifyAxisTypes(mesh, diags))
    return false;
  for (const MeshAxis &axis : mesh.axes)
    if (axis.size < 1) {
      diags.error(axis.loc,
                  fmt::format("axis \"{}\" - size must be at least 1: {}", axis.name, axis.size));
      return false;
    }
  // One MPI rank per device: more than 2^31 devices cannot run (and larger
  // products would overflow the arithmetic of every later stage).
  const int64_t kMaxDevices = int64_t(1) << 31;
  if (mesh.deviceCount() > kMaxDevices) {
    diags.error(mesh.loc, fmt::format("mesh @{} - too many devices: more than 2^31", mesh.name));
    return false;
  }
  for (size_t i = 0; i < mesh.axes.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (mesh.axes[i].name == mesh.axes[j].name) {
        diags
            .error(mesh.axes[i].loc,
                   fmt::format("duplicate mesh axis name: \"{}\"", mesh.axes[i].name))
            .note(mesh.axes[j].loc, "first declared here");
        return false;
      }
  return verifyDeviceIds(mesh, diags);
}

} // namespace

bool verifyMeshes(const Module &module, DiagnosticEngine &diags) {
  bool ok = true;
  // The first valid mesh with devices to spread over sets the device count.
  const Mesh *first = nullptr;
  for (size_t i = 0; i < module.meshes.size(); ++i) {
    const Mesh &mesh = *module.meshes[i];
    const Mesh *previous = nullptr;
    for (size_t j = 0; j < i && !previous; ++j)
      if (module.meshes[j]->name == mesh.name)
        previous = module.meshes[j].get();
    if (previous) {
      diags.error(mesh.loc, fmt::format("duplicate mesh name: @{}", mesh.name))
          .note(previous->loc, "previous definition here");
      ok = false;
      continue;
    }
    if (!verifyMesh(mesh, diags)) {
      ok = false;
      continue;
    }
    if (mesh.isEmpty() || mesh.isMaximal())
      continue;
    if (!first) {
      first = &mesh;
      continue;
    }
    if (mesh.deviceCount() != first->deviceCount()) {
      diags
          .error(mesh.loc, fmt::format("mesh device count differs from the program's: "
                                       "{} != {}",
                                       mesh.deviceCount(), first->deviceCount()))
          .note(first->loc, fmt::format("mesh @{} sets the program's device count to {}",
                                        first->name, first->deviceCount()));
      ok = false;
    }
  }
  return ok;
}

} // namespace shardc::verify
