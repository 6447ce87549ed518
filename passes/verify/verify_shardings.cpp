// verify-shardings, part 2: every sharding of the program against its mesh and
// tensor type, in Shardy's order (the first error per sharding is reported):
//   1. the mesh exists; on a maximal mesh no axes and no dims at all (`[]`)
//   2. the rank matches the tensor's (when the type is known)
//   3. per dim: priority, then axes (known, used once, no mergeable neighbours)
//   4. replicated axes: known, in mesh order, used once, no mergeable neighbours
//   5. per mesh axis: sub-axis arithmetic (not with the full axis, pre-size,
//      size, fits the axis, not the whole axis, no overlap, able to coexist)
//   6. no axis made manual by an enclosing manual_computation
// Non-divisible dims are legal (padding). Also home of the pass entry point.
#include "ir/AxisAlgebra.h"
#include "passes/verify/Verify.h"
#include "passes/verify/VerifyInternal.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace shardc::verify {

std::string prefixed(const std::string &where, const std::string &message) {
  return where.empty() ? message : where + " - " + message;
}

std::string describeAxes(const Mesh &mesh) {
  if (mesh.axes.empty())
    return "no axes";
  std::string out;
  for (const MeshAxis &a : mesh.axes)
    out += fmt::format("{}\"{}\"", out.empty() ? "" : ", ", a.name);
  return out;
}

void reportUnknownAxis(const std::string &where, const AxisRef &axis, const Mesh &mesh,
                       DiagnosticEngine &diags) {
  auto d =
      diags.error(axis.loc, prefixed(where, fmt::format("unknown axis name: \"{}\"", axis.name)));
  std::string guess = closestMatch(axis.name, mesh.axisNames());
  if (!guess.empty())
    d.note(Loc{}, fmt::format("did you mean \"{}\"?", guess));
  d.note(mesh.loc, fmt::format("mesh @{} has {}", mesh.name,
                               mesh.axes.empty() ? "no axes" : "axes " + describeAxes(mesh)));
}

const Mesh *lookupMesh(const Sharding &sharding, const std::string &where, const Module &module,
                       DiagnosticEngine &diags) {
  if (const Mesh *mesh = module.findMesh(sharding.meshName)) {
    // A maximal mesh may name any device, but a value can only live on one
    // the program has.
    if (!mesh->isMaximal() || mesh->deviceIds.front() < module.deviceCount())
      return mesh;
    diags
        .error(
            sharding.meshLoc,
            prefixed(where, fmt::format("mesh @{} is device {}, outside the program's {} "
                                        "devices",
                                        mesh->name, mesh->deviceIds.front(), module.deviceCount())))
        .note(mesh->loc, fmt::format("mesh @{} declared here", mesh->name));
    return nullptr;
  }
  auto d = diags.error(sharding.meshLoc, prefixed(where, "unknown mesh: @" + sharding.meshName));
  std::string guess = closestMatch(sharding.meshName, module.meshNames());
  if (!guess.empty())
    d.note(Loc{}, fmt::format("did you mean @{}?", guess));
  return nullptr;
}

namespace {

/// Checks one sharding; see the file comment for the order.
class ShardingChecker {
public:
  ShardingChecker(const Sharding &sharding, const Mesh &mesh, std::string where,
                  DiagnosticEngine &diags)
      : sharding_(sharding), mesh_(mesh), where_(std::move(where)), diags_(diags) {}

  bool run(const TensorType *type, const ManualScope &scope) {
    if (mesh_.isMaximal())
      return checkMaximal(type);
    if (type && sharding_.dims.size() != type->rank()) {
      error(sharding_.loc, fmt::format("sharding doesn't match tensor rank: {} != {}",
                                       sharding_.dims.size(), type->rank()));
      return false;
    }
    for (size_t i = 0; i < sharding_.dims.size(); ++i)
      if (!checkDim(i, sharding_.dims[i]))
        return false;
    return checkReplicated() && checkSubAxes() && checkManualScope(scope);
  }

private:
  DiagnosticEngine::Builder error(Loc loc, const std::string &message) {
    return diags_.error(loc, prefixed(where_, message));
  }

  int64_t axisSize(const AxisRef &axis) const {
    const MeshAxis *a = mesh_.findAxis(axis.name);
    return a ? a->size : 0;
  }

  /// A maximal mesh has no axes: the whole tensor lives on its one device.
  /// Like Shardy, its sharding has no dims at all (`[]`, whatever the type's
  /// rank) and no replicated axes.
  bool checkMaximal(const TensorType *type) {
    auto reject = [&](const AxisRef &axis) {
      error(axis.loc,
            fmt::format("sharding on maximal mesh @{} can't use axes: {}", mesh_.name, axis.str()))
          .note(mesh_.loc, fmt::format("mesh @{} is the single device {}", mesh_.name,
                                       mesh_.deviceIds.front()));
      return false;
    };
    for (const DimSharding &dim : sharding_.dims)
      if (!dim.axes.empty())
        return reject(dim.axes.front());
    if (!sharding_.replicated.empty())
      return reject(sharding_.replicated.front());
    if (!sharding_.dims.empty()) {
      error(sharding_.loc, fmt::format("sharding on maximal mesh @{} can't have dim shardings: {}",
                                       mesh_.name, sharding_.dims.size()))
          .note(mesh_.loc, fmt::format("mesh @{} is the single device {}; write sharding<@{}, []>",
                                       mesh_.name, mesh_.deviceIds.front(), mesh_.name));
      return false;
    }
    return true;
  }

  bool checkDim(size_t index, const DimSharding &dim) {
    if (dim.priority) {
      std::string where = fmt::format("dim {} - ", index);
      if (*dim.priority < 0) {
        error(dim.priorityLoc,
              where + fmt::format("priority must be non-negative: p{}", *dim.priority));
        return false;
      }
      if (dim.isEmptyClosed()) {
        error(dim.priorityLoc,
              where + fmt::format("priority on an empty closed dimension: p{}", *dim.priority))
            .note(Loc{}, fmt::format("a closed {{}} can't gain axes, so its priority "
                                     "has no effect; drop it or write {{?}}p{}",
                                     *dim.priority));
        return false;
      }
    }
    return checkAxisList(dim.axes);
  }

  /// Names known, each axis used once in the whole sharding, and no two
  /// neighbouring sub-axes that make one bigger sub-axis.
  bool checkAxisList(const std::vector<AxisRef> &axes) {
    const AxisRef *previous = nullptr;
    for (const AxisRef &axis : axes) {
      if (!mesh_.findAxis(axis.name)) {
        reportUnknownAxis(where_, axis, mesh_, diags_);
        return false;
      }
      if (!checkUsedOnce(axis))
        return false;
      if (previous && previous->isSubAxis() && axis.isSubAxis() && previous->name == axis.name &&
          subaxis::canMerge(previous->preSize, previous->size, axis.preSize)) {
        AxisRef merged = *previous;
        merged.size = previous->size * axis.size;
        bool whole = merged.preSize == 1 && merged.size == axisSize(axis);
        error(axis.loc,
              fmt::format("adjacent sub-axes can be merged: {}, {}", previous->str(), axis.str()))
            .note(Loc{}, fmt::format("write {} instead",
                                     whole ? AxisRef{axis.name, 0, 0, {}}.str() : merged.str()));
        return false;
      }
      previous = &axis;
    }
    return true;
  }

  bool checkUsedOnce(const AxisRef &axis) {
    for (const AxisRef *seen : used_)
      if (seen->sameAs(axis)) {
        error(axis.loc, fmt::format("axis used more than once: {}", axis.str()))
            .note(seen->loc, "first used here");
        return false;
      }
    used_.push_back(&axis);
    return true;
  }

  /// Mesh order, and sub-axes of one axis by increasing pre-size (the seed).
  bool inMeshOrder(const AxisRef &a, const AxisRef &b) const {
    int ia = mesh_.axisIndex(a.name), ib = mesh_.axisIndex(b.name);
    if (ia != ib)
      return ia < ib;
    if (a.effectivePreSize() != b.effectivePreSize())
      return a.effectivePreSize() < b.effectivePreSize();
    return a.effectiveSize(axisSize(a)) <= b.effectiveSize(axisSize(b));
  }

  bool checkReplicated() {
    const std::vector<AxisRef> &axes = sharding_.replicated;
    for (const AxisRef &axis : axes)
      if (!mesh_.findAxis(axis.name)) {
        reportUnknownAxis(where_, axis, mesh_, diags_);
        return false;
      }
    for (size_t i = 1; i < axes.size(); ++i)
      if (!inMeshOrder(axes[i - 1], axes[i])) {
        std::vector<AxisRef> sorted = axes;
        canonicalizeReplicated(sorted, mesh_);
        std::string list;
        for (const AxisRef &a : sorted)
          list += (list.empty() ? "" : ", ") + a.str();
        error(axes[i].loc, fmt::format("replicated axes are not in mesh order: {} "
                                       "after {}",
                                       axes[i].str(), axes[i - 1].str()))
            .note(Loc{}, fmt::format("write replicated={{{}}}", list));
        return false;
      }
    return checkAxisList(axes);
  }

  /// A full axis is (0)0 in the IR; `"x":(0)2` or `"x":(-1)2` is a sub-axis
  /// with a bad pre-size, not a full axis.
  static bool writtenAsSubAxis(const AxisRef &a) { return a.preSize != 0 || a.size != 0; }

  /// Sub-axis arithmetic, one mesh axis at a time (in mesh order), its
  /// sub-axes sorted by pre-size.
  bool checkSubAxes() {
    for (const MeshAxis &meshAxis : mesh_.axes) {
      const AxisRef *full = nullptr;
      std::vector<const AxisRef *> subs;
      for (const AxisRef *a : used_) {
        if (a->name != meshAxis.name)
          continue;
        if (writtenAsSubAxis(*a))
          subs.push_back(a);
        else
          full = full ? full : a;
      }
      if (subs.empty())
        continue;
      if (full) {
        error(subs.front()->loc,
              fmt::format("axis used both whole and as a sub-axis: \"{}\"", meshAxis.name))
            .note(full->loc, "whole axis used here");
        return false;
      }
      std::stable_sort(subs.begin(), subs.end(), [](const AxisRef *a, const AxisRef *b) {
        return a->preSize != b->preSize ? a->preSize < b->preSize : a->size < b->size;
      });
      const AxisRef *previous = nullptr;
      for (const AxisRef *sub : subs) {
        if (!checkSubAxis(*sub, meshAxis))
          return false;
        if (previous &&
            subaxis::overlaps(previous->preSize, previous->size, sub->preSize, sub->size)) {
          // Point at whichever of the two was written second.
          bool subLater = std::find(used_.begin(), used_.end(), sub) >
                          std::find(used_.begin(), used_.end(), previous);
          const AxisRef *later = subLater ? sub : previous;
          const AxisRef *earlier = subLater ? previous : sub;
          error(later->loc, fmt::format("sub-axes overlap: {}, {}", previous->str(), sub->str()))
              .note(earlier->loc, fmt::format("{} used here", earlier->str()));
          return false;
        }
        previous = sub;
      }
      // Sub-axes of different decompositions of the axis ("a":(1)2 and
      // "a":(3)2 of a=6): no device order has both (Shardy's canCoexist).
      for (size_t i = 0; i < subs.size(); ++i)
        for (size_t j = i + 1; j < subs.size(); ++j)
          if (!canCoexist(*subs[i], *subs[j], mesh_)) {
            bool jLater = std::find(used_.begin(), used_.end(), subs[j]) >
                          std::find(used_.begin(), used_.end(), subs[i]);
            const AxisRef *later = jLater ? subs[j] : subs[i];
            const AxisRef *earlier = jLater ? subs[i] : subs[j];
            error(later->loc,
                  fmt::format("sub-axes cannot coexist: {}, {}", subs[i]->str(), subs[j]->str()))
                .note(earlier->loc, fmt::format("{} used here", earlier->str()));
            return false;
          }
    }
    return true;
  }

  bool checkSubAxis(const AxisRef &sub, const MeshAxis &meshAxis) {
    if (sub.preSize < 1) {
      // AxisRef::str() would print a pre-size below 1 as a full axis.
      error(sub.loc, fmt::format("sub-axis pre-size must be at least 1: \"{}\":({}){}", sub.name,
                                 sub.preSize, sub.size));
      return false;
    }
    if (sub.size <= 1) {
      error(sub.loc, fmt::format("sub-axis size must be greater than 1: {}", sub.str()));
      return false;
    }
    if (meshAxis.size < 1)
      return true; // the mesh reported its bad size already
    int64_t end = sub.preSize * sub.size;
    if (meshAxis.size % end != 0) {
      error(sub.loc, fmt::format("sub-axis doesn't fit in axis \"{}\" of size {}: {}",
                                 meshAxis.name, meshAxis.size, sub.str()))
          .note(Loc{}, fmt::format("pre-size * size = {} must divide {}", end, meshAxis.size));
      return false;
    }
    if (sub.size == meshAxis.size) {
      error(sub.loc, fmt::format("sub-axis is the whole axis: {}", sub.str()))
          .note(Loc{}, fmt::format("write \"{}\" instead", meshAxis.name));
      return false;
    }
    return true;
  }

  /// Inside a manual_computation, the axes it made manual are gone from the
  /// tensors its body sees.
  bool checkManualScope(const ManualScope &scope) {
    for (const AxisRef *axis : used_)
      if (const ManualAxis *manual = scope.find(axis->name)) {
        error(axis->loc, fmt::format("axis is already manual in an enclosing manual_computation: "
                                     "\"{}\"",
                                     axis->name))
            .note(manual->owner->loc,
                  fmt::format("manual_computation making \"{}\" manual", axis->name));
        return false;
      }
    return true;
  }

  const Sharding &sharding_;
  const Mesh &mesh_;
  std::string where_;
  DiagnosticEngine &diags_;
  /// Every axis of the sharding seen so far, dims then replicated.
  std::vector<const AxisRef *> used_;
};

} // namespace

bool verifyShardingOnMesh(const Sharding &sharding, const Mesh &mesh, const TensorType *type,
                          const std::string &where, const ManualScope &scope,
                          DiagnosticEngine &diags) {
  return ShardingChecker(sharding, mesh, where, diags).run(type, scope);
}

bool verifySharding(const Sharding &sharding, const TensorType *type, const std::string &where,
                    const Module &module, const ManualScope &scope, DiagnosticEngine &diags) {
  const Mesh *mesh = lookupMesh(sharding, where, module, diags);
  return mesh && verifyShardingOnMesh(sharding, *mesh, type, where, scope, diags);
}

namespace {

/// The walk over every place a sharding can be written.
class ModuleVerifier {
public:
  ModuleVerifier(const Module &module, DiagnosticEngine &diags) : module_(module), diags_(diags) {}

  bool run() {
    ok_ = verifyMeshes(module_, diags_);
    verifyBlock(module_.snippet.body, /*params=*/"%", ManualScope{});
    for (const ShardedTypeDecl &decl : module_.typeDecls)
      check(decl.sharding, &decl.type, "", ManualScope{});
    for (const auto &fn : module_.functions) {
      for (size_t i = 0; i < fn->results.size(); ++i)
        if (fn->results[i].sharding)
          check(*fn->results[i].sharding, &fn->results[i].type, fmt::format("result {}", i),
                ManualScope{});
      verifyBlock(fn->body, "arg", ManualScope{});
    }
    return ok_;
  }

private:
  void check(const Sharding &sharding, const TensorType *type, const std::string &where,
             const ManualScope &scope) {
    if (!verifySharding(sharding, type, where, module_, scope, diags_))
      ok_ = false;
  }

  static const TensorType *typeOf(const Value &v) { return v.typeKnown ? &v.type : nullptr; }

  /// `params` names the block's arguments in messages: "arg" gives `arg 0`,
  /// "%" gives `%name` (loose snippet declarations); empty for manual bodies,
  /// whose arguments carry no sharding.
  void verifyBlock(const Block &block, const std::string &params, const ManualScope &scope) {
    for (size_t i = 0; i < block.args.size(); ++i) {
      const Value &arg = *block.args[i];
      if (!arg.sharding)
        continue;
      std::string where = params == "%"    ? "%" + arg.name
                          : params.empty() ? fmt::format("%{}", arg.name)
                                           : fmt::format("{} {}", params, i);
      check(*arg.sharding, typeOf(arg), where, scope);
    }
    for (const auto &op : block.ops)
      verifyOp(*op, scope);
  }

  void verifyOp(const Op &op, const ManualScope &scope) {
    ManualScope bodyScope = scope;
    bool manual = op.kind == OpKind::ManualComputation;
    if (manual && !verifyManualComputation(op, module_, scope, bodyScope, diags_))
      ok_ = false;
    if (opInfo(op.kind).group == OpGroup::Collective &&
        !verifyCollective(op, module_, scope, diags_))
      ok_ = false;
    if (isAxesRegion(op) && !verifyAxesRegion(op, module_, axisTypes_, diags_))
      ok_ = false;
    bool shardingOp = op.kind == OpKind::ShardingConstraint || op.kind == OpKind::Reshard;
    for (const NamedAttribute &attr : op.attrs) {
      if (manual && (attr.name == "in_shardings" || attr.name == "out_shardings"))
        continue; // verifyManualComputation checked them
      const auto &shardings = attr.value.shardings;
      if (attr.value.kind == Attribute::Kind::Sharding && !shardings.empty()) {
        bool typed = shardingOp && attr.name == "sharding" && op.results.size() == 1;
        check(shardings.front(), typed ? typeOf(*op.result(0)) : nullptr,
              typed ? "" : fmt::format("attribute \"{}\"", attr.name), scope);
      } else if (attr.value.kind == Attribute::Kind::ShardingList) {
        for (size_t i = 0; i < shardings.size(); ++i)
          check(shardings[i], nullptr, fmt::format("attribute \"{}\" {}", attr.name, i), scope);
      }
    }
    for (size_t i = 0; i < op.results.size(); ++i) {
      const Value &result = *op.results[i];
      if (!result.sharding)
        continue;
      std::string where = op.results.size() == 1 ? "result" : fmt::format("result {}", i);
      check(*result.sharding, typeOf(result), where, scope);
    }
    // An auto_axes / explicit_axes body sees its axes' types changed.
    AxisTypeScope outer = axisTypes_;
    axisTypes_ = shardc::bodyScope(op, module_, outer);
    if (op.kind == OpKind::ManualComputation && op.body)
      verifyBlock(*op.body, "", bodyScope);
    else
      for (Block *region : op.regions())
        verifyBlock(*region, "", scope);
    axisTypes_ = std::move(outer);
  }

  const Module &module_;
  DiagnosticEngine &diags_;
  bool ok_ = true;
  AxisTypeScope axisTypes_; // changed by auto_axes / explicit_axes bodies
};

} // namespace
} // namespace shardc::verify

namespace shardc {

bool verifyShardings(Module &module, DiagnosticEngine &diags) {
  return verify::ModuleVerifier(module, diags).run();
}

} // namespace shardc
