// propagate-shardings, part 3: the propagation edges of each function, in
// program order. An edge is an op with a factor rule (ShardingRules.h) or an
// identity between two places whose shardings must agree:
//   - sharding_constraint / reshard: operand <-> result, whose sharding is
//     the constraint's (closed dims stay, open dims may grow). In default
//     mode reshard is treated as a constraint.
//   - a returned value <-> the function's declared result (ResultSpec).
//   - for / while / if: Shardy's data-flow edges (controlFlow below).
//   - manual_computation (propagate_manual.cpp): each operand <-> its
//     in_sharding <-> its body argument, each returned body value <-> its
//     out_sharding <-> its result. Free axes flow both ways; the in/out
//     shardings never gain a manual axis, and inside the body no tensor
//     may take one.
// Ops without a rule (collectives, ops whose types are unknown) are no edges:
// nothing propagates through them. The per-edge choices of the driver
// (op-priority directions, the mesh) are in propagate_priorities.cpp.
#include "passes/propagate/PropagateInternal.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace shardc::propagation {

namespace {

/// Whether `rule` maps exactly the tensors `types`: one mapping per tensor,
/// one entry per dim, factor products equal to dim sizes (but for a lone
/// permutation factor), each factor once per tensor (ShardingRules.h's
/// checkShardingRule, the parts propagation relies on). A factor of size 0 (a
/// dim of size 0) is fine, as in Shardy: the other dims still propagate. A
/// rule that does not fit is not used.
bool ruleFits(const ShardingRule &rule, const std::vector<TensorFactors> &mappings,
              const std::vector<const TensorType *> &types) {
  if (mappings.size() != types.size())
    return false;
  for (size_t t = 0; t < types.size(); ++t) {
    const TensorFactors &dims = mappings[t];
    if (dims.size() != types[t]->rank())
      return false;
    std::set<int> seen;
    for (size_t d = 0; d < dims.size(); ++d) {
      int64_t product = 1;
      for (int f : dims[d]) {
        if (f < 0 || static_cast<size_t>(f) >= rule.numFactors() || !seen.insert(f).second ||
            rule.factorSizes[f] < 0)
          return false;
        product *= rule.factorSizes[f];
      }
      // A lone permutation (concat, slice, pad) or need-replication (concat)
      // factor may differ from its dim.
      bool permutation =
          dims[d].size() == 1 && (rule.factorKinds[dims[d][0]] == FactorKind::Permutation ||
                                  rule.factorKinds[dims[d][0]] == FactorKind::NeedReplication);
      int64_t size = types[t]->shape[d];
      if (product != size && !permutation && !(dims[d].empty() && size <= 1))
        return false;
    }
  }
  return true;
}

class GraphBuilder {
public:
  GraphBuilder(Graph &graph, const Module &module) : graph_(graph), module_(module) {}

  void function(Function &f) {
    graph_.functions.emplace_back();
    edges_ = &graph_.functions.back();
    // About one edge per op: growing the list would copy every edge again.
    edges_->reserve(f.body.ops.size() + f.results.size());
    countUses(f.body);
    block(f.body, {});
    for (size_t i = 0; i < f.body.returned.size() && i < f.results.size(); ++i) {
      Value *v = f.body.returned[i];
      ResultSpec &spec = f.results[i];
      if (!usable(v) || spec.typeInvalid || spec.type != v->type)
        continue;
      Edge edge = identity(v->type, spec.loc, nullptr, {});
      edge.operands.push_back(valueSlot(v));
      edge.results.push_back(slotOf(&spec.sharding, spec.type.numElements()));
      edges_->push_back(std::move(edge));
    }
  }

private:
  static bool usable(const Value *v) { return v && v->typeKnown; }

  Slot valueSlot(Value *v) const {
    Slot slot = slotOf(&v->sharding, v->type.numElements());
    if (auto it = blockedValues_.find(v); it != blockedValues_.end())
      slot.blocked = it->second;
    return slot;
  }

  static Slot slotOf(std::optional<Sharding> *sharding, int64_t elements) {
    Slot slot;
    slot.sharding = sharding;
    slot.elements = elements;
    return slot;
  }

  /// A slot for a manual_computation in/out sharding `written` of a tensor
  /// of `type`: a working copy (priorities kept, for the driver to defer),
  /// written back when propagation ends.
  Slot attributeSlot(Sharding &written, const TensorType &type, std::vector<AxisRef> blocked,
                     const std::vector<AxisRef> &manualAxes) {
    std::optional<Sharding> &storage = graph_.attributeStorage.emplace_back(written);
    graph_.attributeShardings.push_back(AttributeSharding{&written, &storage});
    graph_.manualAxesOf[&storage] = manualAxes;
    Slot slot = slotOf(&storage, type.numElements());
    slot.blocked = std::move(blocked);
    return slot;
  }

  /// The rule keyed by `key` (appendShardingRuleKey's, or an identity
  /// edge's, which starts with kIdentityKind), made by `make` the first
  /// time; null when `make` gives none.
  template <typename MakeRule>
  const ShardingRule *sharedRule(const KeyWords &key, const MakeRule &make) {
    if (auto known = rules_.find(key); known != rules_.end())
      return known->second;
    const ShardingRule *made = nullptr;
    if (std::optional<ShardingRule> rule = make())
      made = &graph_.rules.emplace_back(std::move(*rule));
    rules_.emplace(key, made);
    return made;
  }

  /// (No OpKind has this value.)
  static constexpr uint64_t kIdentityKind = ~uint64_t{0};

  /// An identity edge's key: kIdentityKind, the shape, the sources and
  /// targets.
  static KeyWords identityKey(const TensorType &type, size_t numOperands, size_t numResults) {
    KeyWords key{kIdentityKind, type.shape.size()};
    key.insert(key.end(), type.shape.begin(), type.shape.end());
    key.push_back(numOperands);
    key.push_back(numResults);
    return key;
  }

  /// The rule of an identity edge between two tensors of `type`.
  const ShardingRule *identityRuleOf(const TensorType &type) {
    return sharedRule(identityKey(type, 1, 1), [&] {
      ShardingRule rule = identityRule(type, 1, 1);
      // identityRule gives a dim of size 0 no factor; Shardy passes its axes
      // on like any other dim's.
      for (size_t d = 0; d < type.shape.size(); ++d)
        if (type.shape[d] == 0) {
          int factor = rule.addFactor(0, FactorKind::PassThrough);
          rule.operands[0][d].push_back(factor);
          rule.results[0][d].push_back(factor);
        }
      return std::optional<ShardingRule>(std::move(rule));
    });
  }

  /// identity()'s rule for `numOperands` sources and `numResults` targets.
  const ShardingRule *identityEdgeRule(const TensorType &type, size_t numOperands,
                                       size_t numResults) {
    if (numOperands == 1 && numResults == 1)
      return identityRuleOf(type);
    return sharedRule(identityKey(type, numOperands, numResults), [&] {
      ShardingRule rule = *identityRuleOf(type);
      rule.operands.assign(numOperands, rule.operands[0]);
      rule.results.assign(numResults, rule.results[0]);
      return std::optional<ShardingRule>(std::move(rule));
    });
  }

  Edge identity(const TensorType &type, Loc loc, const Op *op,
                const std::vector<AxisRef> &forbidden) {
    Edge edge;
    edge.op = op;
    edge.rule = identityRuleOf(type);
    edge.forbidden = forbidden;
    edge.passThroughOp = true;
    edge.loc = loc;
    return edge;
  }

  /// How often each value of `body` is used (operands and returns, nested
  /// bodies included), for Shardy's single-use op priority.
  void countUses(const Block &body) {
    uses_.clear();
    // Sized up front: growing rehashes every entry, far apart in memory on
    // a long function.
    uses_.reserve(body.ops.size() + body.args.size());
    for (const Value *v : body.returned)
      ++uses_[v];
    walkOps(body, [&](Op &op) {
      for (const Value *v : op.operands)
        ++uses_[v];
      if (op.body)
        for (const Value *v : op.body->returned)
          ++uses_[v];
    });
  }

  /// Whether an operand of `op` other than a scalar has another use.
  bool multiUseOperand(const Op &op) const {
    for (const Value *v : op.operands) {
      auto it = uses_.find(v);
      if (v && v->typeKnown && v->type.rank() > 0 && it != uses_.end() && it->second > 1)
        return true;
    }
    return false;
  }

  void block(Block &b, const std::vector<AxisRef> &forbidden) {
    for (const auto &op : b.ops)
      this->op(*op, forbidden);
  }

  void op(Op &op, const std::vector<AxisRef> &forbidden) {
    for (const Value *v : op.operands)
      if (!usable(v))
        return;
    for (const auto &r : op.results)
      if (!usable(r.get()))
        return;

    switch (op.kind) {
    case OpKind::ShardingConstraint:
    case OpKind::Reshard:
      constraint(op, forbidden);
      return;
    case OpKind::ManualComputation:
      manual(op, forbidden);
      return;
    case OpKind::For:
    case OpKind::While:
    case OpKind::If:
      controlFlow(op, forbidden);
      return;
    default:
      break;
    }

    auto make = [&]() -> std::optional<ShardingRule> {
      std::optional<ShardingRule> rule = getShardingRule(op);
      if (!rule)
        return std::nullopt;
      std::vector<const TensorType *> operandTypes, resultTypes;
      for (const Value *v : op.operands)
        operandTypes.push_back(&v->type);
      for (const auto &r : op.results)
        resultTypes.push_back(&r->type);
      if (rule->factorKinds.size() != rule->factorSizes.size() ||
          !ruleFits(*rule, rule->operands, operandTypes) ||
          !ruleFits(*rule, rule->results, resultTypes))
        return std::nullopt;
      return rule;
    };
    const ShardingRule *rule = nullptr;
    ruleKey_.clear();
    if (appendShardingRuleKey(ruleKey_, op)) {
      rule = sharedRule(ruleKey_, make);
    } else if (std::optional<ShardingRule> own = make()) {
      rule = &graph_.rules.emplace_back(std::move(*own));
    }
    if (!rule)
      return;

    Edge edge;
    edge.op = &op;
    edge.rule = rule;
    edge.forbidden = forbidden;
    edge.elementwise = isElementwise(op.kind);
    edge.passThroughOp =
        edge.elementwise || op.kind == OpKind::Reshape || op.kind == OpKind::Transpose;
    edge.broadcast = op.kind == OpKind::Broadcast;
    edge.multiUseOperand = multiUseOperand(op);
    edge.loc = op.loc;
    for (Value *v : op.operands)
      edge.operands.push_back(valueSlot(v));
    for (const auto &r : op.results)
      edge.results.push_back(valueSlot(r.get()));
    edges_->push_back(std::move(edge));
  }

  void constraint(Op &op, const std::vector<AxisRef> &forbidden) {
    if (op.operands.size() != 1 || op.results.size() != 1)
      return;
    Value *in = op.operands[0];
    Value *out = op.results[0].get();
    const Attribute *attr = op.attr(attrs::sharding);
    if (!out->sharding && attr && !attr->shardings.empty())
      out->sharding = attr->shardings.front();
    if (in->type != out->type)
      return;
    Edge edge = identity(out->type, op.loc, &op, forbidden);
    edge.multiUseOperand = multiUseOperand(op);
    edge.operands.push_back(valueSlot(in));
    edge.results.push_back(valueSlot(out));
    edges_->push_back(std::move(edge));
  }

  void manual(Op &op, const std::vector<AxisRef> &forbidden) {
    std::vector<AxisRef> manualAxes;
    if (const Attribute *axes = op.attr(attrs::manualAxes))
      for (const AxisRef &a : axes->axes)
        manualAxes.push_back(AxisRef{a.name, 0, 0, {}});
    std::vector<AxisRef> inner = forbidden;
    inner.insert(inner.end(), manualAxes.begin(), manualAxes.end());
    std::vector<Sharding> *ins = shardingList(op, attrs::inShardings);
    std::vector<Sharding> *outs = shardingList(op, attrs::outShardings);

    for (size_t i = 0; ins && i < ins->size() && i < op.operands.size(); ++i) {
      Value *operand = op.operands[i];
      Value *arg = op.body && i < op.body->args.size() ? op.body->args[i].get() : nullptr;
      if (!usable(operand))
        continue;
      Sharding &written = (*ins)[i];
      Slot global = attributeSlot(written, operand->type, blocked(written, manualAxes, forbidden),
                                  manualAxes);
      if (usable(arg) && !arg->sharding) {
        arg->sharding = bodyView(written, manualAxes);
        graph_.copiedFromInSharding.push_back(&arg->sharding);
      }
      link(op, operand->type, valueSlot(operand), global, forbidden);
      if (usable(arg))
        cross(op, global, operand->type, arg, written, manualAxes, inner, true);
    }
    if (op.body)
      block(*op.body, inner);
    for (size_t i = 0; outs && i < outs->size() && i < op.results.size(); ++i) {
      Value *result = op.results[i].get();
      if (!usable(result))
        continue;
      Value *returned = op.body && i < op.body->returned.size() ? op.body->returned[i] : nullptr;
      Sharding &written = (*outs)[i];
      if (result->sharding) {
        // A sharding written on the result: a reshard may follow the op.
        Slot global = attributeSlot(written, result->type, blocked(written, manualAxes, forbidden),
                                    manualAxes);
        if (usable(returned))
          cross(op, global, result->type, returned, written, manualAxes, inner, false);
        link(op, result->type, global, valueSlot(result), forbidden);
        continue;
      }
      // Shardy: the result's sharding is the out_sharding itself, so the
      // result gains no axis (a manual one, or on a closed dim) that the
      // out_sharding cannot; the out_sharding is written back from it.
      result->sharding = written; // priorities kept, for the driver to defer
      graph_.manualAxesOf[&result->sharding] = manualAxes;
      graph_.attributeShardings.push_back(AttributeSharding{&written, &result->sharding});
      graph_.copiedFromInSharding.push_back(&result->sharding); // --explain names the attribute
      // Every use of the result sees the same limits (SSA: the uses come
      // later in program order, after this entry).
      blockedValues_[result] = blocked(written, manualAxes, forbidden);
      Slot global = valueSlot(result);
      if (usable(returned))
        cross(op, global, result->type, returned, written, manualAxes, inner, false);
    }
  }

  /// Shardy's data-flow edges: a carried value's init, its argument in
  /// each region, the value the body returns for it and the loop result
  /// share one sharding; an `if` result with what each branch returns. As in
  /// Shardy, one edge joins every source (init, returned values) to every
  /// target (result, region arguments), so sources that disagree give the
  /// targets only their common prefix instead of the first one's axes. The
  /// body's return being a source of its own argument makes the fixed point
  /// run around the loop.
  void controlFlow(Op &op, const std::vector<AxisRef> &forbidden) {
    auto returned = [](const Block &region, size_t i) {
      return i < region.returned.size() ? region.returned[i] : nullptr;
    };
    auto edge = [&](Value *target, const std::vector<Value *> &sources,
                    const std::vector<Value *> &otherTargets) {
      if (!usable(target))
        return;
      Edge e = identity(target->type, op.loc, &op, forbidden);
      for (Value *v : sources)
        if (usable(v) && v->type == target->type)
          e.operands.push_back(valueSlot(v));
      e.results.push_back(valueSlot(target));
      for (Value *v : otherTargets)
        if (usable(v) && v->type == target->type)
          e.results.push_back(valueSlot(v));
      if (e.operands.empty() && e.results.size() < 2)
        return;
      e.rule = identityEdgeRule(target->type, e.operands.size(), e.results.size());
      edges_->push_back(std::move(e));
    };
    if (op.kind == OpKind::If) {
      for (size_t i = 0; i < op.results.size(); ++i)
        edge(op.results[i].get(), {returned(*op.body, i), returned(*op.elseBody, i)}, {});
    } else {
      std::vector<Value *> bodyArgs = Op::carriedArgs(op, *op.body);
      std::vector<Value *> condArgs;
      if (op.cond)
        condArgs = Op::carriedArgs(op, *op.cond);
      for (size_t i = 0; i < op.operands.size(); ++i) {
        Value *result = i < op.results.size() ? op.results[i].get() : nullptr;
        Value *bodyArg = i < bodyArgs.size() ? bodyArgs[i] : nullptr;
        Value *condArg = i < condArgs.size() ? condArgs[i] : nullptr;
        std::vector<Value *> sources = {op.operands[i], returned(*op.body, i)};
        if (usable(result))
          edge(result, sources, {bodyArg, condArg});
        else
          edge(bodyArg, sources, {condArg});
      }
    }
    for (Block *region : op.regions())
      block(*region, forbidden);
  }

  static std::vector<Sharding> *shardingList(Op &op, AttrKey<std::vector<Sharding>> key) {
    for (NamedAttribute &attr : op.attrs)
      if (attr.name == key.name)
        return &attr.value.shardings;
    return nullptr;
  }

  /// What an in/out sharding may not take: the manual axes it lacks, and
  /// those of enclosing manual_computations.
  static std::vector<AxisRef> blocked(const Sharding &written,
                                      const std::vector<AxisRef> &manualAxes,
                                      const std::vector<AxisRef> &forbidden) {
    std::vector<AxisRef> out = absentManualAxes(written, manualAxes);
    out.insert(out.end(), forbidden.begin(), forbidden.end());
    return out;
  }

  /// An identity edge between two tensors of `type`.
  void link(Op &op, const TensorType &type, Slot from, Slot to,
            const std::vector<AxisRef> &forbidden) {
    Edge edge = identity(type, op.loc, &op, forbidden);
    edge.operands.push_back(std::move(from));
    edge.results.push_back(std::move(to));
    edges_->push_back(std::move(edge));
  }

  /// The edge between an in/out sharding (`global`, of `globalType`,
  /// written as `written`) and the body's local tensor `local`: a body
  /// argument (`inward`) or a returned value.
  void cross(Op &op, Slot global, const TensorType &globalType, Value *local,
             const Sharding &written, const std::vector<AxisRef> &manualAxes,
             const std::vector<AxisRef> &inner, bool inward) {
    const Mesh *mesh = module_.findMesh(written.meshName);
    if (!mesh)
      return;
    std::optional<ShardingRule> rule =
        manualBoundaryRule(globalType, local->type, written, manualAxes, *mesh, inward);
    if (!rule)
      return;
    Edge edge;
    edge.op = &op;
    edge.rule = &graph_.rules.emplace_back(std::move(*rule));
    edge.passThroughOp = true;
    edge.loc = op.loc;
    Slot inside = valueSlot(local);
    inside.blocked = inner;
    edge.operands.push_back(inward ? std::move(global) : inside);
    edge.results.push_back(inward ? inside : std::move(global));
    edges_->push_back(std::move(edge));
  }

  Graph &graph_;
  const Module &module_;
  std::vector<Edge> *edges_ = nullptr;
  std::unordered_map<const Value *, int> uses_; // of the function being built
  /// Axes no slot of the value may take: a manual_computation result's
  /// sharding is its out_sharding.
  std::unordered_map<const Value *, std::vector<AxisRef>> blockedValues_;
  std::unordered_map<KeyWords, const ShardingRule *, KeyWordsHash> rules_;
  KeyWords ruleKey_; // of the op being added
};

} // namespace

Graph buildGraph(Module &module) {
  Graph graph;
  GraphBuilder builder(graph, module);
  builder.function(module.snippet);
  for (const auto &f : module.functions)
    builder.function(*f);
  return graph;
}

} // namespace shardc::propagation
