// verify-shardings, part 3: manual_computation and collective ops.
//
// manual_computation, in this order (first error per op, then per sharding):
//   1. each in/out sharding is a valid sharding of the global operand/result
//   2. its manual axes: not already manual in an enclosing manual_computation,
//      listed once, whole axes, a mesh to take them from, one mesh for all
//      in/out shardings, known in that mesh (in any order: the import stage
//      sorts them, as Shardy's sdy-manual-axes-cleanup does)
//   3. per in/out sharding: in each dim the manual axes come first, and none
//      is a sub-axis
// infer-types checks the shapes: counts of in/out shardings, that the manual
// axes divide each operand dim (the body sees no padding), the local types.
#include "passes/verify/VerifyInternal.h"

#include <fmt/format.h>

#include <set>

namespace shardc::verify {
namespace {

const std::vector<Sharding> kNoShardings;

const std::vector<Sharding> &shardingList(const Op &op, AttrKey<std::vector<Sharding>> key) {
  const Attribute *attr = op.attr(key);
  return attr ? attr->shardings : kNoShardings;
}

/// `operand` when there is one value, `operand 1` when there are several.
std::string valueWhere(const char *kind, size_t index, size_t count) {
  return count == 1 ? kind : fmt::format("{} {}", kind, index);
}

bool isManual(const AxisRef &axis, const std::vector<AxisRef> &manual) {
  for (const AxisRef &m : manual)
    if (m.name == axis.name)
      return true;
  return false;
}

/// One in/out sharding that passed the general checks, against the manual axes.
class ManualShardingChecker {
public:
  ManualShardingChecker(const Sharding &sharding, const std::vector<AxisRef> &manual,
                        std::string where, DiagnosticEngine &diags)
      : sharding_(sharding), manual_(manual), where_(std::move(where)), diags_(diags) {}

  /// `allManual`: every axis of the mesh is manual (the partitioner's
  /// per-device form). Then no axis stays global, and a sub-axis only says
  /// which block each instance holds, as in any sharding: allowed.
  bool run(bool allManual) {
    for (size_t d = 0; d < sharding_.dims.size(); ++d)
      if (!checkManualFirst(d))
        return false;
    return allManual || checkNoManualSubAxis();
  }

private:
  DiagnosticEngine::Builder error(Loc loc, const std::string &message) {
    return diags_.error(loc, prefixed(where_, message));
  }

  bool checkManualFirst(size_t d) {
    const AxisRef *free = nullptr;
    for (const AxisRef &axis : sharding_.dims[d].axes) {
      if (!isManual(axis, manual_)) {
        free = free ? free : &axis;
        continue;
      }
      if (free) {
        error(axis.loc, fmt::format("dim {} - manual axis after a free axis: {}", d, axis.str()))
            .note(free->loc, fmt::format("free axis {} here; in each dimension the "
                                         "manual axes come first",
                                         free->str()));
        return false;
      }
    }
    return true;
  }

  bool checkNoManualSubAxis() {
    auto check = [&](const AxisRef &axis) {
      if (!axis.isSubAxis() || !isManual(axis, manual_))
        return true;
      error(axis.loc, fmt::format("manual axis used as a sub-axis: {}", axis.str()))
          .note(Loc{},
                fmt::format("a manual axis can't be split; use the whole axis \"{}\"", axis.name));
      return false;
    };
    for (const DimSharding &dim : sharding_.dims)
      for (const AxisRef &axis : dim.axes)
        if (!check(axis))
          return false;
    for (const AxisRef &axis : sharding_.replicated)
      if (!check(axis))
        return false;
    return true;
  }

  const Sharding &sharding_;
  const std::vector<AxisRef> &manual_;
  std::string where_;
  DiagnosticEngine &diags_;
};

/// One in or out sharding of the op, once looked up and checked.
struct Side {
  const Sharding *sharding;
  const Mesh *mesh; // null when unknown (already reported)
  std::string where;
  bool ok;
};

/// Step 2 of the file comment; returns the mesh of the manual axes in `mesh`.
bool verifyManualAxes(const Op &op, const std::vector<AxisRef> &manual,
                      const std::vector<Side> &sides, const ManualScope &scope, const Mesh *&mesh,
                      DiagnosticEngine &diags) {
  const Attribute *attr = op.attr(attrs::manualAxes);
  for (size_t i = 0; i < manual.size(); ++i) {
    const AxisRef &axis = manual[i];
    if (const ManualAxis *outer = scope.find(axis.name)) {
      diags
          .error(axis.loc, fmt::format("manual_axes - axis is already manual in an "
                                       "enclosing manual_computation: \"{}\"",
                                       axis.name))
          .note(outer->owner->loc,
                fmt::format("manual_computation making \"{}\" manual", axis.name));
      return false;
    }
    for (size_t j = 0; j < i; ++j)
      if (manual[j].name == axis.name) {
        diags.error(axis.loc, fmt::format("manual_axes - axis listed twice: \"{}\"", axis.name))
            .note(manual[j].loc, "first listed here");
        return false;
      }
    if (axis.isSubAxis()) {
      diags.error(axis.loc, fmt::format("manual_axes - must be whole axes: {}", axis.str()));
      return false;
    }
  }
  if (manual.empty())
    return true;
  if (sides.empty()) {
    diags.error(attr ? attr->loc : op.loc,
                "manual_axes - no in/out sharding names the mesh of the manual axes");
    return false;
  }
  const Side *first = nullptr;
  for (const Side &side : sides) {
    if (!side.mesh)
      continue;
    if (!first) {
      first = &side;
      continue;
    }
    if (side.mesh != first->mesh) {
      diags
          .error(side.sharding->meshLoc,
                 fmt::format("{} - in/out shardings must all use one mesh: @{} != @{}", side.where,
                             side.mesh->name, first->mesh->name))
          .note(first->sharding->meshLoc,
                fmt::format("{} uses @{}", first->where, first->mesh->name));
      return false;
    }
  }
  if (!first)
    return false; // every mesh was unknown, and reported
  mesh = first->mesh;
  for (const AxisRef &axis : manual)
    if (!mesh->findAxis(axis.name)) {
      reportUnknownAxis("manual_axes", axis, *mesh, diags);
      return false;
    }
  // Any order, as Shardy's verifier allows: the import stage sorts them.
  return true;
}

} // namespace

bool verifyManualComputation(const Op &op, const Module &module, const ManualScope &scope,
                             ManualScope &bodyScope, DiagnosticEngine &diags) {
  const std::vector<Sharding> &ins = shardingList(op, attrs::inShardings);
  const std::vector<Sharding> &outs = shardingList(op, attrs::outShardings);
  const Attribute *manualAttr = op.attr(attrs::manualAxes);
  static const std::vector<AxisRef> kNoAxes;
  const std::vector<AxisRef> &manual = manualAttr ? manualAttr->axes : kNoAxes;
  // A count mismatch is infer-types' error; then no sharding has a type.
  bool countsMatch = ins.size() == op.operands.size() && outs.size() == op.results.size();

  // 1. Every in/out sharding on its own, against the global type.
  bool ok = true;
  std::vector<Side> sides;
  auto addSide = [&](const Sharding &s, const Value *value, std::string where) {
    const TensorType *type = countsMatch && value && value->typeKnown ? &value->type : nullptr;
    const Mesh *mesh = lookupMesh(s, where, module, diags);
    bool valid = mesh && verifyShardingOnMesh(s, *mesh, type, where, scope, diags);
    ok = ok && valid;
    sides.push_back(Side{&s, mesh, std::move(where), valid});
  };
  for (size_t i = 0; i < ins.size(); ++i)
    addSide(ins[i], i < op.operands.size() ? op.operands[i] : nullptr,
            valueWhere("operand", i, ins.size()));
  // infer-types leaves a result untyped when its out_sharding doesn't fit the
  // returned value; the returned (local) value has the global rank.
  for (size_t i = 0; i < outs.size(); ++i) {
    const Value *result = i < op.results.size() ? op.results[i].get() : nullptr;
    if (result && !result->typeKnown && op.body && i < op.body->returned.size())
      result = op.body->returned[i];
    addSide(outs[i], result, valueWhere("result", i, outs.size()));
  }

  // 2. The manual axes.
  const Mesh *mesh = nullptr;
  if (!verifyManualAxes(op, manual, sides, scope, mesh, diags))
    return false;
  for (const AxisRef &axis : manual)
    bodyScope.axes.push_back(ManualAxis{axis.name, &op});
  if (!mesh) {
    for (const Side &side : sides)
      mesh = mesh ? mesh : side.mesh;
  }
  if (mesh)
    bodyScope.mesh = mesh;
  if (manual.empty() || !countsMatch)
    return ok;

  // 3. Each valid in/out sharding against the manual axes.
  const bool allManual = mesh && manual.size() == mesh->axes.size();
  for (const Side &side : sides)
    if (side.ok && !ManualShardingChecker(*side.sharding, manual, side.where, diags).run(allManual))
      ok = false;
  return ok;
}

namespace {

bool verifyPairs(const Attribute &pairs, int64_t devices, DiagnosticEngine &diags) {
  std::set<int64_t> sources, targets;
  for (const Attribute &pair : pairs.list) {
    std::optional<std::vector<int64_t>> ends = pair.intList();
    if (!ends || ends->size() != 2)
      continue; // infer-types reports a malformed pair
    for (size_t k = 0; k < 2; ++k) {
      int64_t device = (*ends)[k];
      Loc loc = pair.list[k].loc.known() ? pair.list[k].loc : pair.loc;
      if (device < 0 || device >= devices) {
        diags.error(loc, fmt::format("pairs - device out of range [0, {}): {}", devices, device));
        return false;
      }
      std::set<int64_t> &seen = k == 0 ? sources : targets;
      if (!seen.insert(device).second) {
        diags.error(loc, fmt::format("pairs - device {} more than once: {}",
                                     k == 0 ? "sends" : "receives", device));
        return false;
      }
    }
  }
  return true;
}

} // namespace

bool verifyCollective(const Op &op, const Module &module, const ManualScope &scope,
                      DiagnosticEngine &diags) {
  const Mesh *mesh = collectiveMesh(op, module, scope.mesh);
  if (const Attribute *axes = op.attr(attrs::axes);
      axes && axes->kind == Attribute::Kind::AxisSet && mesh) {
    for (size_t i = 0; i < axes->axes.size(); ++i) {
      const AxisRef &axis = axes->axes[i];
      if (!mesh->findAxis(axis.name)) {
        reportUnknownAxis("axes", axis, *mesh, diags);
        return false;
      }
      for (size_t j = 0; j < i; ++j)
        if (axes->axes[j].name == axis.name && axes->axes[j].sameAs(axis)) {
          diags.error(axis.loc, fmt::format("axes - axis used more than once: {}", axis.str()))
              .note(axes->axes[j].loc, "first used here");
          return false;
        }
    }
  }
  if (const Attribute *axis = op.attr(attrs::axis);
      axis && axis->kind == Attribute::Kind::String && mesh && !mesh->findAxis(axis->s)) {
    reportUnknownAxis("axis", AxisRef{axis->s, 0, 0, axis->loc}, *mesh, diags);
    return false;
  }
  if (const Attribute *pairs = op.attr(attrs::pairs); pairs && pairs->kind == Attribute::Kind::List)
    return verifyPairs(*pairs, mesh ? mesh->deviceCount() : module.deviceCount(), diags);
  return true;
}

} // namespace shardc::verify
