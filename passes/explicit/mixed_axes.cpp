// Mixed meshes (LANGUAGE.md section 10): explicit axes are typed by each op's
// rule (explicit_shardings.cpp), auto axes are decided by propagation, in one
// compilation:
//   1. `reshard` may not name an auto axis (it is a constraint: the error
//      points at sharding_constraint);
//   2. every sharding is restricted to its mesh's explicit axes (closed, no
//      priorities) and the explicit pass computes each value's explicit part:
//      sharding_constraint asserts on those axes, reshard moves them; one
//      that names auto axes only is JAX's with_sharding_constraint on a
//      mixed mesh: it takes the value's explicit axes (its type) and, in
//      step 3, adds its auto axes after them in each dim;
//   3. the written shardings come back (their auto axes are constraints);
//      a value without one takes its explicit part with every dim open; each
//      sharding lists the explicit axes it does not use as explicitly
//      replicated, so propagation can add auto axes only;
//   4. auto_axes / explicit_axes regions are lowered away: the body inlined,
//      a reshard where the region moves a value (auto_axes results to their
//      out_shardings, explicit_axes operands to their in_shardings) and an
//      identity where only the type changes;
//   5. propagation completes the auto axes (with --auto-shard, the solver
//      decides them first, told which layouts keep each value's explicit
//      type); the replicated lists added in 3 are dropped, and each value's
//      explicit part must be what step 2 gave;
//   6. the regions are raised back, their values' shardings complete, so the
//      printed program (--emit=sharded, --explain) keeps them and compiles
//      again; partitioning lowers them once more (lowerAxesRegions).
// "Explicit" is where a sharding is written: inside an auto_axes body its
// axes are auto, inside an explicit_axes body its axes are explicit
// (ir/AxisTypes.h).
// Example: @m = <["x"=2, "y"=4], axis_types=[explicit, auto]>, %a [{"x"}, {}]
// and %b [{}, {"y"}]: %s = add %a, %b is typed [{"x"}, {}] on "x" and
// propagation gives it [{"x"}, {"y"}].
#include "ir/AxisAlgebra.h"
#include "ir/AxisTypes.h"
#include "ir/Printer.h"
#include "passes/explicit/AxesRegions.h"
#include "passes/explicit/ExplicitShardings.h"
#include "passes/explicit/ExplicitShardingsInternal.h"
#include "passes/propagate/Propagate.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace shardc {
namespace {

using namespace explicit_shardings;

bool named(const Sharding &s, const std::string &axis) {
  auto hit = [&](const AxisRef &a) { return a.name == axis; };
  for (const DimSharding &d : s.dims)
    if (std::any_of(d.axes.begin(), d.axes.end(), hit))
      return true;
  return std::any_of(s.replicated.begin(), s.replicated.end(), hit);
}

class MixedAxes {
public:
  MixedAxes(Module &module, DiagnosticEngine &diags) : module_(module), diags_(diags) {}

  bool run(ShardingOrigins *origins, bool lowerAndPropagate,
           const AutoAxesSolver &decideAutoAxes = nullptr) {
    collect();
    checkReshards();
    if (diags_.hasErrors())
      return false;
    // 2. The explicit parts.
    for (Slot &slot : values_)
      if (*slot.where)
        restrict(**slot.where, slot.scope);
    for (AttrSlot &slot : attributes_)
      restrict(*slot.where, slot.scope);
    for (ShardedTypeDecl &decl : module_.typeDecls)
      restrict(decl.sharding, {});
    bool ok = inferExplicitShardings(module_, diags_, typedConstraints_);
    for (Slot &slot : values_)
      slot.explicitPart = *slot.where;
    // 3. The written shardings back, blocking the unused explicit axes.
    for (AttrSlot &slot : attributes_) {
      *slot.where = slot.written;
      if (typedConstraints_.count(slot.op))
        withTypeAxes(*slot.where, slot.op->result()->sharding);
      if (slot.reshardTarget)
        for (DimSharding &d : slot.where->dims)
          d.open = true; // the auto axes of a reshard's result are free
      block(*slot.where, slot.scope);
    }
    for (ShardedTypeDecl &decl : module_.typeDecls)
      decl.sharding = writtenDecls_[&decl - module_.typeDecls.data()];
    for (Slot &slot : values_) {
      std::optional<Sharding> merged = slot.written;
      if (!merged && slot.constraint)
        merged = *slot.constraint; // the attribute as merged above
      if (!merged && slot.explicitPart) {
        merged = *slot.explicitPart;
        for (DimSharding &d : merged->dims)
          d.open = true;
      }
      if (merged)
        block(*merged, slot.scope);
      *slot.where = std::move(merged);
    }
    if (!ok || !lowerAndPropagate)
      return ok;
    // 4. The regions lowered away; 5. propagation decides the auto axes.
    regions_.lower(module_);
    // The solver decides the auto axes; the sharding_constraint ops it adds
    // go back into the regions with their readers (step 6).
    if (decideAutoAxes) {
      for (size_t i = 0; i < values_.size(); ++i)
        slotOf_[values_[i].where] = i;
      decideAutoAxes(
          module_, [this](const Value &v, const Sharding &s) { return allows(v, s); },
          [this](const Op &op) { return regions_.describeEdge(op); });
    }
    propagateShardings(module_, diags_, origins);
    for (Slot &slot : values_)
      if (*slot.where)
        unblock(**slot.where, slot.scope);
    // A reshard's attribute keeps the explicit axes it moves (explicit
    // where it is written: step 6 puts the regions back), so that the
    // printed program checks again.
    for (AttrSlot &slot : attributes_)
      if (slot.reshardTarget)
        restrict(*slot.where, slot.scope);
      else
        unblock(*slot.where, slot.scope);
    for (Sharding *target : regions_.reshardTargets())
      restrict(*target, {});
    for (ShardedTypeDecl &decl : module_.typeDecls)
      unblock(decl.sharding, {});
    checkExplicitParts();
    regions_.raise();
    return !diags_.hasErrors();
  }

  /// Whether value `v` may take layout `s`: its explicit axes are those step
  /// 2 gave `v` (none, when it gave none).
  bool allows(const Value &v, const Sharding &s) const {
    auto it = slotOf_.find(&v.sharding);
    const Slot *slot = it == slotOf_.end() ? nullptr : &values_[it->second];
    Sharding mine = s;
    restrict(mine, slot ? slot->scope : AxisTypeScope{});
    if (slot && slot->explicitPart)
      return sameLayout(mine, *slot->explicitPart);
    return std::all_of(mine.dims.begin(), mine.dims.end(),
                       [](const DimSharding &d) { return d.axes.empty(); });
  }

  /// Lowers the regions of a program whose values all have their shardings
  /// (before partitioning): each reshard the boundary implies keeps the
  /// explicit axes it moves, as after step 5.
  void lowerOnly() {
    regions_.lower(module_);
    for (Sharding *target : regions_.reshardTargets())
      restrict(*target, {});
  }

private:
  /// A value's sharding or a function result's, with what was written and
  /// the explicit part step 2 computed.
  struct Slot {
    std::optional<Sharding> *where;
    std::optional<Sharding> written;
    std::optional<Sharding> explicitPart;
    /// The result of a sharding_constraint or reshard: its attribute.
    const Sharding *constraint = nullptr;
    Loc loc;
    AxisTypeScope scope;
  };
  /// A sharding written in an op attribute.
  struct AttrSlot {
    Sharding *where;
    Sharding written;
    bool reshardTarget = false;
    AxisTypeScope scope;
    const Op *op = nullptr;
  };

  /// Whether constraint `s`, written where `scope` holds, names auto axes
  /// of a mesh that has explicit ones, and no explicit axis.
  bool namesAutoAxesOnly(const Sharding &s, const AxisTypeScope &scope) const {
    const Mesh *mesh = meshOf(s);
    if (!mesh)
      return false;
    bool anyExplicit = false, anyAuto = false;
    for (const MeshAxis &axis : mesh->axes)
      (scope.isExplicit(*mesh, axis.name) ? anyExplicit : anyAuto) = true;
    if (!anyExplicit || !anyAuto)
      return false;
    for (const MeshAxis &axis : mesh->axes)
      if (scope.isExplicit(*mesh, axis.name) && named(s, axis.name))
        return false;
    return true;
  }

  /// `s` with the axes of `type` (a value's explicit part) first in each
  /// dim, as JAX lowers a with_sharding_constraint on a mixed mesh.
  static void withTypeAxes(Sharding &s, const std::optional<Sharding> &type) {
    if (!type)
      return;
    for (size_t d = 0; d < s.dims.size() && d < type->dims.size(); ++d) {
      const std::vector<AxisRef> &typed = type->dims[d].axes;
      s.dims[d].axes.insert(s.dims[d].axes.begin(), typed.begin(), typed.end());
    }
  }

  void collect() {
    // Attribute slots first: the constraint pointers below refer to them.
    size_t attrCount = 0;
    walkBlocks(module_, [&](Block &b) {
      for (auto &op : b.ops)
        for (NamedAttribute &a : op->attrs)
          attrCount += a.value.shardings.size();
    });
    attributes_.reserve(attrCount);
    collectBlock(module_.snippet.body, {});
    for (auto &f : module_.functions)
      collectBlock(f->body, {});
    auto results = [&](Function &f) {
      for (ResultSpec &spec : f.results)
        values_.push_back({&spec.sharding, spec.sharding, {}, nullptr, spec.loc, {}});
    };
    results(module_.snippet);
    for (auto &f : module_.functions)
      results(*f);
    for (const ShardedTypeDecl &decl : module_.typeDecls)
      writtenDecls_.push_back(decl.sharding);
  }

  void collectBlock(Block &b, const AxisTypeScope &scope) {
    auto value = [&](Value &v, const AxisTypeScope &where) {
      values_.push_back({&v.sharding, v.sharding, {}, nullptr, v.loc, where});
    };
    for (auto &arg : b.args)
      value(*arg, scope);
    for (auto &op : b.ops) {
      AxisTypeScope inner = isAxesRegion(*op) ? bodyScope(*op, module_, scope) : scope;
      // An explicit_axes in_sharding is written for inside the region.
      const AxisTypeScope &attrScope = op->kind == OpKind::ExplicitAxes ? inner : scope;
      const Sharding *constraint = nullptr;
      for (NamedAttribute &a : op->attrs)
        for (Sharding &s : a.value.shardings) {
          bool target = a.name == attrs::sharding.name &&
                        (op->kind == OpKind::ShardingConstraint || op->kind == OpKind::Reshard);
          attributes_.push_back(
              {&s, s, target && op->kind == OpKind::Reshard, attrScope, op.get()});
          if (target)
            constraint = attributes_.back().where;
          if (target && op->kind == OpKind::ShardingConstraint && namesAutoAxesOnly(s, attrScope))
            typedConstraints_.insert(op.get());
        }
      for (auto &r : op->results) {
        value(*r, scope);
        if (constraint && op->results.size() == 1)
          values_.back().constraint = constraint;
      }
      for (Block *region : op->regions())
        collectBlock(*region, inner);
    }
  }

  const Mesh *meshOf(const Sharding &s) const { return module_.findMesh(s.meshName); }

  /// 1. A reshard moves explicit axes only.
  void checkReshards() {
    for (const AttrSlot &slot : attributes_) {
      if (!slot.reshardTarget)
        continue;
      const Sharding &target = slot.written;
      const Mesh *mesh = meshOf(target);
      if (!mesh || !slot.scope.anyExplicit(*mesh))
        continue; // a reshard among auto axes only is a constraint, as in default mode
      for (const DimSharding &d : target.dims)
        for (const AxisRef &a : d.axes) {
          if (slot.scope.isExplicit(*mesh, a.name))
            continue;
          const Op &op = *slot.op;
          Loc loc = a.loc.known() ? a.loc : op.loc;
          diags_
              .error(loc, fmt::format("reshard - axis {} of @{} is auto: reshard moves explicit "
                                      "axes only",
                                      a.str(), mesh->name))
              .note(Loc{},
                    fmt::format("an auto axis is a constraint for propagation: write "
                                "sharding_constraint instead, e.g. %c = "
                                "sharding_constraint {} {}",
                                op.operands.empty() || !op.operands[0] ? std::string("%v")
                                                                       : valueName(*op.operands[0]),
                                printSharding(target)));
          goto next;
        }
    next:;
    }
  }

  /// `s` on its mesh's explicit axes only: closed, without priorities.
  void restrict(Sharding &s, const AxisTypeScope &scope) const {
    const Mesh *mesh = meshOf(s);
    if (!mesh)
      return;
    for (DimSharding &d : s.dims) {
      d.axes.erase(
          std::remove_if(d.axes.begin(), d.axes.end(),
                         [&](const AxisRef &a) { return !scope.isExplicit(*mesh, a.name); }),
          d.axes.end());
      d.open = false;
      d.priority.reset();
    }
    s.replicated.clear();
  }

  /// Lists every explicit axis `s` does not name as explicitly replicated;
  /// of one it names by sub-axes only, the parts between them, so that
  /// propagation cannot add the rest of the axis either.
  void block(Sharding &s, const AxisTypeScope &scope) const {
    const Mesh *mesh = meshOf(s);
    if (!mesh)
      return;
    for (const MeshAxis &axis : mesh->axes) {
      if (!scope.isExplicit(*mesh, axis.name))
        continue;
      if (!named(s, axis.name)) {
        s.replicated.push_back(AxisRef{axis.name, 0, 0, {}});
        continue;
      }
      // The pre-size ranges [pre, pre*size) the sub-axes cover, in order.
      std::vector<std::pair<int64_t, int64_t>> covered;
      for (const DimSharding &d : s.dims)
        for (const AxisRef &a : d.axes)
          if (a.name == axis.name)
            covered.emplace_back(a.effectivePreSize(),
                                 a.effectivePreSize() * a.effectiveSize(axis.size));
      std::sort(covered.begin(), covered.end());
      int64_t from = 1;
      covered.emplace_back(axis.size, axis.size);
      for (const auto &[lo, hi] : covered) {
        if (lo > from && lo % from == 0)
          s.replicated.push_back(AxisRef{axis.name, from, lo / from, {}});
        from = std::max(from, hi);
      }
    }
  }

  /// Drops the explicit axes from the replicated list (they mean nothing
  /// there: an explicit axis not named in a dim is replicated).
  void unblock(Sharding &s, const AxisTypeScope &scope) const {
    const Mesh *mesh = meshOf(s);
    if (!mesh)
      return;
    s.replicated.erase(
        std::remove_if(s.replicated.begin(), s.replicated.end(),
                       [&](const AxisRef &a) { return scope.isExplicit(*mesh, a.name); }),
        s.replicated.end());
  }

  /// Propagation only adds auto axes: each value's explicit part is step 2's.
  void checkExplicitParts() const {
    for (const Slot &slot : values_) {
      if (!slot.explicitPart || !*slot.where)
        continue;
      Sharding now = **slot.where;
      restrict(now, slot.scope);
      if (!sameLayout(now, *slot.explicitPart))
        throw InternalError(slot.loc,
                            fmt::format("mixed axes - propagation changed an explicit "
                                        "axis: {} vs {}",
                                        printSharding(now), printSharding(*slot.explicitPart)));
    }
  }

  Module &module_;
  DiagnosticEngine &diags_;
  std::vector<Slot> values_;
  /// Each value's slot (by its sharding's address), for allows().
  std::unordered_map<const std::optional<Sharding> *, size_t> slotOf_;
  std::vector<AttrSlot> attributes_;
  std::vector<Sharding> writtenDecls_;
  /// Step 4's lowering of the regions, undone in step 6.
  AxesRegionLowering regions_;

  /// The sharding_constraint ops that name auto axes only (JAX's).
  std::unordered_set<const Op *> typedConstraints_;
};

} // namespace

bool hasMixedAxes(Module &module) {
  if (hasAxesRegions(module))
    return true;
  bool explicitAxis = false, autoAxis = false;
  for (const auto &mesh : module.meshes) {
    explicitAxis = explicitAxis || mesh->hasExplicitAxis();
    autoAxis = autoAxis || mesh->hasAutoAxis();
  }
  return explicitAxis && autoAxis;
}

void lowerAxesRegions(Module &module) {
  DiagnosticEngine unused;
  MixedAxes(module, unused).lowerOnly();
}

bool inferMixedShardings(Module &module, DiagnosticEngine &diags, ShardingOrigins *origins,
                         bool checkOnly, const AutoAxesSolver &decideAutoAxes) {
  if (diags.hasErrors())
    return false;
  return MixedAxes(module, diags).run(origins, !checkOnly, decideAutoAxes);
}

} // namespace shardc
