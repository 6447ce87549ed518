// propagate-shardings, part 0: Shardy's import step for sharding
// constraints (sdy-apply-sharding-constraints), run before the graph is
// built. A closed dim of a constraint binds only the constraint's result;
// its operand could still grow there. When the constraint alone decides
// what its operand should be, its sharding is copied onto the operand, so
// the operand itself takes it, closed dims and all. A manual_computation's
// fully closed in_sharding is copied onto its operand the same way:
//
//   %b = exp %a                                       %b: [{}, {"y"}] closed
//   %c = sharding_constraint %b sharding<@m, [{}, {"y"}]>
//
// The conditions are Shardy's (apply_sharding_constraints.cc): every dim of
// the constraint is closed; the operand has no sharding yet; no other
// sharding_constraint or manual_computation uses it with a different
// sharding (other uses are fine); and it can hold a sharding of its own: a
// function parameter or the result of an op that is no region op and no
// sharding op. Values on Shardy's data-flow edges (loop and `if` results,
// region arguments) are left alone (Shardy rewrites their uses instead; see
// docs/propagation.md).
#include "ir/AxisAlgebra.h"
#include "passes/propagate/PropagateInternal.h"

#include <unordered_map>
#include <utility>

namespace shardc::propagation {

namespace {

/// Whether two written shardings say the same (locations aside): the same
/// layout, replicated axes, open dims and priorities.
bool sameSharding(const Sharding &a, const Sharding &b) {
  if (!sameLayout(a, b) || !sameAxisList(a.replicated, b.replicated))
    return false;
  for (size_t d = 0; d < a.dims.size(); ++d)
    if (a.dims[d].open != b.dims[d].open || a.dims[d].priority != b.dims[d].priority)
      return false;
  return true;
}

bool fullyClosed(const Sharding &sharding) {
  for (const DimSharding &dim : sharding.dims)
    if (dim.open)
      return false;
  return true;
}

/// An op result that may hold a sharding of its own before propagation: not
/// a region op's (data-flow edges, manual_computation out_shardings) and not
/// a sharding op's (its attribute is its sharding).
bool ownsResultSharding(OpKind kind) {
  switch (kind) {
  case OpKind::For:
  case OpKind::While:
  case OpKind::If:
  case OpKind::ManualComputation:
  case OpKind::AutoAxes:
  case OpKind::ExplicitAxes:
  case OpKind::ShardingConstraint:
  case OpKind::Reshard:
    return false;
  default:
    return true;
  }
}

/// One function at a time: the candidates, then the copies.
class ConstraintImporter {
public:
  explicit ConstraintImporter(std::vector<const std::optional<Sharding> *> &copied)
      : copied_(copied) {}

  void function(Function &f) {
    scopes_.clear();
    users_.clear();
    askers_.clear();
    findAskers(f.body, nullptr);
    // Only the values something asks a sharding of need their scope: most
    // functions have few such values, or none, and a table of every value
    // of a long function costs a cache miss per value.
    if (askers_.empty())
      return;
    scopes_.reserve(users_.size());
    for (auto &arg : f.body.args)
      if (users_.count(arg.get()))
        scopes_[arg.get()] = nullptr;
    recordScopes(f.body, nullptr);
    for (const Asker &a : askers_)
      apply(*a.op, a.operand, a.scope);
  }

private:
  /// Every sharding_constraint and manual_computation operand of `b` and its
  /// regions, in program order. `manual`: the innermost manual_computation
  /// around `b` (null outside one); a constraint inside a body sees local
  /// types, so it never applies to a value defined outside it.
  void findAskers(Block &b, const Op *manual) {
    for (auto &op : b.ops) {
      if (op->kind == OpKind::ShardingConstraint || op->kind == OpKind::ManualComputation)
        for (size_t i = 0; i < op->operands.size(); ++i) {
          users_[op->operands[i]].emplace_back(op.get(), i);
          askers_.push_back({op.get(), i, manual});
        }
      const Op *inner = op->kind == OpKind::ManualComputation ? op.get() : manual;
      for (Block *region : op->regions())
        findAskers(*region, inner);
    }
  }

  /// The scope (as findAskers) of each value defined in `b` that an asker
  /// uses, when the value may take a sharding.
  void recordScopes(Block &b, const Op *manual) {
    for (auto &op : b.ops) {
      if (ownsResultSharding(op->kind))
        for (auto &r : op->results)
          if (users_.count(r.get()))
            scopes_[r.get()] = manual;
      const Op *inner = op->kind == OpKind::ManualComputation ? op.get() : manual;
      for (Block *region : op->regions())
        recordScopes(*region, inner);
    }
  }

  /// The sharding `user` asks of its operand `i`; null when it states none.
  static const Sharding *askedOf(const Op &user, size_t i) {
    if (user.kind == OpKind::ShardingConstraint) {
      const Attribute *attr = user.attr(attrs::sharding);
      return attr && attr->shardings.size() == 1 ? &attr->shardings.front() : nullptr;
    }
    const std::vector<Sharding> &ins = manualComputationParts(user).inShardings;
    return i < ins.size() ? &ins[i] : nullptr;
  }

  /// Copies what `asker` (a sharding_constraint, or a manual_computation for
  /// its operand `operand`) asks of that operand onto it, when it may.
  void apply(const Op &asker, size_t operand, const Op *scope) {
    if (asker.kind == OpKind::ShardingConstraint && asker.operands.size() != 1)
      return;
    Value *in = asker.operands[operand];
    const Sharding *sharding = askedOf(asker, operand);
    if (!in || !in->typeKnown || in->sharding || !sharding || !fullyClosed(*sharding) ||
        sharding->dims.size() != in->type.rank())
      return;
    auto it = scopes_.find(in);
    if (it == scopes_.end() || it->second != scope)
      return;
    for (const auto &[user, i] : users_[in]) {
      const Sharding *asked = askedOf(*user, i);
      if ((user != &asker || i != operand) && asked && !sameSharding(*asked, *sharding))
        return;
    }
    in->sharding = *sharding;
    copied_.push_back(&in->sharding);
  }

  std::vector<const std::optional<Sharding> *> &copied_;
  /// The values that may take a sharding and that an asker uses, with the
  /// manual_computation around their definition.
  std::unordered_map<const Value *, const Op *> scopes_;
  /// Per value: its sharding_constraint and manual_computation users.
  std::unordered_map<const Value *, std::vector<std::pair<const Op *, size_t>>> users_;
  /// Every sharding_constraint and manual_computation operand, in program
  /// order, with the manual_computation around the op.
  struct Asker {
    const Op *op;
    size_t operand;
    const Op *scope;
  };
  std::vector<Asker> askers_;
};

} // namespace

std::vector<const std::optional<Sharding> *> applyShardingConstraints(Module &module) {
  std::vector<const std::optional<Sharding> *> copied;
  ConstraintImporter importer(copied);
  importer.function(module.snippet);
  for (auto &f : module.functions)
    importer.function(*f);
  return copied;
}

} // namespace shardc::propagation
