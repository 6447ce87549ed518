// The strategy graph of @main: a node per parameter and per op with a factor
// rule, its strategies priced, the user's shardings honoured; edges priced by
// the reshard planner; live ranges for the memory rows.
//
// 1. Parameters: a written closed sharding is the only strategy; otherwise
//    every layout (honouring the open dims of a written one).
// 2. Ops in program order. sharding_constraint/reshard: layouts honouring
//    its sharding. A unary or convert op on a node's value without a
//    written sharding follows that node (same strategy index, XLA's
//    followers). So do a reshape, transpose or broadcast, and an
//    elementwise binary op whose other operand is a constant: for each of
//    the leader's layouts, the op's strategy cheapest given that layout
//    (reshard into it plus compute). Any other op: opStrategies; a written result sharding
//    filters them (open dims) or fixes the result (closed: priced as the
//    reshard from the computed layout, as partition does); closed on the
//    result and every operand, the op computes on the operands as written.
// 3. Strategies with the same operand and result layouts: the cheapest.
// 4. Loops (for, while): each carried value's region arguments and loop
//    result follow its init's node (one layout around the loop, as the
//    partitioner keeps it); the regions' ops are nodes whose costs count
//    once per iteration (a for's trip count, a while's kWhileTrips), as do
//    edges between them and the back edge (the body's returned value to the
//    carried layout); an edge from outside the loop counts once (the
//    partitioner hoists that reshard). An `if` and its branches are left to
//    propagation.
// On a mesh mixing explicit and auto axes (AutoShardOptions::explicitTypes),
// only strategies that keep every value's explicit type are kept; an op
// none of whose strategies does, a follower one of whose leader's layouts
// does not, reshard/sharding_constraint there and loops go to propagation.
// 5. The solver's problem: graph_problem.cpp.
#include "passes/auto_shard/AutoShardInternal.h"

#include "ir/AxisAlgebra.h"

#include <algorithm>

namespace shardc::autoshard {
namespace {

const Mesh *defaultMesh(const Module &module) {
  for (const auto &m : module.meshes)
    if (!m->axes.empty())
      return m.get();
  return nullptr;
}

/// Step 3: one strategy per (operand layouts, result layout), the cheapest.
void dropDominated(std::vector<Strategy> &strategies) {
  std::map<std::string, size_t> best;
  std::vector<Strategy> kept;
  for (Strategy &s : strategies) {
    std::string key = s.result.str();
    for (const Sharding &o : s.operands)
      key += o.str();
    auto it = best.find(key);
    if (it == best.end()) {
      best.emplace(key, kept.size());
      kept.push_back(std::move(s));
    } else if (s.compute + s.communication <
               kept[it->second].compute + kept[it->second].communication) {
      kept[it->second] = std::move(s);
    }
  }
  strategies = std::move(kept);
}

class GraphBuilder {
public:
  GraphBuilder(Module &module, Function &main, Pricer &pricer, const Mesh &mesh)
      : module_(module), pricer_(pricer), mesh_(mesh) {
    graph_.main = &main;
  }

  StrategyGraph build(const AutoShardOptions &options) {
    explicitTypes_ = options.explicitTypes;
    Block &body = graph_.main->body;
    for (auto &arg : body.args)
      addParameter(*arg);
    for (size_t k = 0; k < body.ops.size(); ++k)
      visit(*body.ops[k], static_cast<int>(k) + 1, 1.0);
    priceWrittenResults();
    makeProblem(graph_, pricer_, options, writtenResultBytes(), opaqueAt_, backEdges_);
    return std::move(graph_);
  }

private:
  const Mesh &meshFor(const std::optional<Sharding> &written) const {
    if (written)
      if (const Mesh *m = module_.findMesh(written->meshName))
        return *m;
    return mesh_;
  }

  /// Whether `s` keeps the explicit types of `value` and of `op`'s operands
  /// (always, without explicit types: see AutoShardOptions::explicitTypes).
  bool keepsTypes(const Value &value, const Op *op, const Strategy &s) const {
    if (!explicitTypes_)
      return true;
    if (!explicitTypes_(value, s.result))
      return false;
    for (size_t i = 0; op && i < op->operands.size() && i < s.operands.size(); ++i)
      if (!explicitTypes_(*op->operands[i], s.operands[i]))
        return false;
    return true;
  }

  /// `strategies` without those that change an explicit type.
  std::vector<Strategy> typed(const Value &value, const Op *op, std::vector<Strategy> strategies) {
    strategies.erase(std::remove_if(strategies.begin(), strategies.end(),
                                    [&](const Strategy &s) { return !keepsTypes(value, op, s); }),
                     strategies.end());
    return strategies;
  }

  /// The node's index; -1 when no strategy keeps the explicit types (a
  /// follower: when one of the leader's does not), and then `op` is left to
  /// propagation.
  int addNode(Value &value, Op *op, std::vector<Strategy> strategies, int step, int follows) {
    if (explicitTypes_) {
      size_t all = strategies.size();
      strategies = typed(value, op, std::move(strategies));
      if (strategies.empty() || (follows >= 0 && strategies.size() != all)) {
        if (op)
          leaveToPropagation(*op, step,
                             strategies.empty() ? kNoTypedCandidate
                                                : "some layouts of its leader change explicit "
                                                  "types");
        return -1;
      }
    }
    for (Strategy &s : strategies)
      pricer_.price(op, value.type, s);
    if (follows < 0)
      dropDominated(strategies);
    int index = static_cast<int>(graph_.nodes.size());
    graph_.nodes.push_back(GraphNode{&value, op, std::move(strategies), follows, step});
    graph_.nodeOf[&value] = index;
    return index;
  }

  /// Whether the value of sharding `s` (none: on the main mesh) is left out
  /// of the solver: on a mesh without axes (a maximal mesh, one device, or
  /// the empty mesh) there is nothing to choose and the reshard planner
  /// prices only same-rank layouts; on a mesh with an explicit axis
  /// (LANGUAGE.md section 10) shardings are types, computed by the explicit
  /// rules, and a sharding_constraint there cannot move a value.
  bool outsideSolver(const std::optional<Sharding> &s) const {
    const Mesh &mesh = meshFor(s);
    if (s && mesh.axes.empty())
      return true;
    return typedMesh(mesh) && !(explicitTypes_ && mesh.hasAutoAxis());
  }

  /// Why the solver leaves a value of sharding `s` alone (outsideSolver).
  const char *outsideWhy(const std::optional<Sharding> &s) const {
    return meshFor(s).axes.empty() ? "a value on a one-device mesh"
                                   : "a value on a mesh with explicit axes";
  }

  /// Why the solver leaves one-result `op` alone for its values: its first
  /// operand, or its result, outside the solver (outsideSolver); null when
  /// none is.
  const char *outsideWhy(const Op &op) const {
    for (const Value *operand : op.operands)
      if (outsideSolver(operand->sharding))
        return outsideWhy(operand->sharding);
    if (outsideSolver(op.result()->sharding))
      return outsideWhy(op.result()->sharding);
    return nullptr;
  }

  /// Whether shardings on `mesh` are (partly) types: it has an explicit axis
  /// that splits.
  static bool typedMesh(const Mesh &mesh) {
    return std::any_of(mesh.axes.begin(), mesh.axes.end(), [](const MeshAxis &a) {
      return a.type == AxisType::Explicit && a.size > 1;
    });
  }

  void addParameter(Value &arg) {
    if (outsideSolver(arg.sharding))
      return; // not a node: edges from it are left unpriced
    const Mesh &mesh = meshFor(arg.sharding);
    std::vector<Strategy> all;
    if (arg.sharding && arg.sharding->isClosed()) {
      Strategy s;
      s.result = s.computed = arg.sharding->closed();
      all.push_back(s);
    } else {
      all = honouring(valueStrategies(arg.type, mesh), arg.sharding, mesh);
    }
    addNode(arg, nullptr, std::move(all), 0, -1);
  }

  /// Adds `op` (run `weight` times) at `step`.
  void visit(Op &op, int step, double weight) {
    if (op.kind == OpKind::For || op.kind == OpKind::While) {
      addLoop(op, step, weight);
      return;
    }
    size_t before = graph_.nodes.size();
    addOp(op, step);
    for (size_t n = before; n < graph_.nodes.size(); ++n)
      graph_.nodes[n].weight = weight;
  }

  static double tripCount(const Op &loop) {
    if (loop.kind == OpKind::While)
      return kWhileTrips;
    int64_t lower = loop.get(attrs::lower, 0), upper = loop.get(attrs::upper, 0);
    int64_t step = std::max<int64_t>(1, loop.get(attrs::loopStep, 1));
    return upper > lower ? static_cast<double>((upper - lower - 1) / step + 1) : 0.0;
  }

  /// A node for `value` that takes the layout of node `leader`.
  void addFollower(Value &value, int leader, int step, double weight) {
    std::vector<Strategy> all;
    for (const Strategy &l : graph_.nodes[leader].strategies) {
      Strategy s;
      s.result = s.computed = l.result;
      all.push_back(s);
    }
    int n = addNode(value, nullptr, std::move(all), step, leader);
    graph_.nodes[n].weight = weight;
  }

  void addLoop(Op &loop, int step, double weight) {
    for (const Value *init : loop.operands)
      if (!graph_.nodeOf.count(init) || explicitTypes_) { // regions and all
        leaveToPropagation(loop, step,
                           explicitTypes_ ? "a loop beside explicit axes"
                                          : "a carried value the solver does not decide");
        return;
      }
    double inner = weight * tripCount(loop);
    for (size_t i = 0; i < loop.operands.size(); ++i) {
      int leader = graph_.nodeOf.at(loop.operands[i]);
      for (Block *region : loop.regions()) {
        std::vector<Value *> args = Op::carriedArgs(loop, *region);
        if (i < args.size())
          addFollower(*args[i], leader, step, inner);
      }
      if (i < loop.results.size())
        addFollower(*loop.results[i], leader, step, weight);
    }
    for (Block *region : loop.regions())
      for (auto &op : region->ops)
        visit(*op, step, inner);
    // The back edge: what the body returns is resharded to the carried
    // layout at the end of every iteration.
    std::vector<Value *> args = Op::carriedArgs(loop, *loop.body);
    for (size_t i = 0; i < args.size() && i < loop.body->returned.size(); ++i) {
      auto from = graph_.nodeOf.find(loop.body->returned[i]);
      if (from != graph_.nodeOf.end())
        backEdges_.push_back({from->second, graph_.nodeOf.at(args[i]), inner});
    }
  }

  static constexpr const char *kWithRegions = "an op with regions";
  static constexpr const char *kNoTypedCandidate = "no candidate keeps the explicit types";

  /// Leaves `op` (at `step`) to propagation, saying `why` in the report; its
  /// values still count in the memory rows (makeProblem).
  void leaveToPropagation(Op &op, int step, const char *why) {
    graph_.opaque.push_back({&op, why});
    opaqueAt_.push_back({&op, step});
  }
  std::function<bool(const Value &, const Sharding &)> explicitTypes_;
  std::vector<std::pair<const Op *, int>> opaqueAt_;
  std::vector<BackEdge> backEdges_;

  void addOp(Op &op, int step) {
    if (op.results.size() != 1) {
      leaveToPropagation(op, step, op.body ? kWithRegions : "not one result");
      return;
    }
    if (const char *why = outsideWhy(op)) {
      leaveToPropagation(op, step, why);
      return;
    }
    Value &result = *op.result();
    if (op.kind == OpKind::ShardingConstraint || op.kind == OpKind::Reshard) {
      const Attribute *a = op.attr(attrs::sharding);
      if (!a || a->shardings.empty() || outsideSolver(a->shardings[0])) {
        leaveToPropagation(op, step,
                           a && !a->shardings.empty() ? outsideWhy(a->shardings[0])
                                                      : "no sharding written");
        return;
      }
      const Sharding &written = a->shardings[0];
      const Mesh &mesh = meshFor(written);
      if (typedMesh(mesh)) { // a reshard there moves explicit axes: the rules' business
        leaveToPropagation(op, step, "it names a mesh with explicit axes");
        return;
      }
      std::vector<Strategy> all = honouring(valueStrategies(result.type, mesh), written, mesh);
      for (Strategy &s : all)
        s.operands = {s.result};
      addNode(result, &op, std::move(all), step, -1);
      return;
    }
    std::optional<ShardingRule> rule = getShardingRule(op);
    if (!rule) {
      leaveToPropagation(op, step, op.body ? kWithRegions : "no factor rule");
      return;
    }
    OpGroup group = opInfo(op.kind).group;
    auto leader = op.operands.empty() ? graph_.nodeOf.end() : graph_.nodeOf.find(op.operands[0]);
    if ((group == OpGroup::Unary || group == OpGroup::Convert) && !result.sharding &&
        leader != graph_.nodeOf.end()) {
      std::vector<Strategy> all;
      for (const Strategy &l : graph_.nodes[leader->second].strategies) {
        Strategy s;
        s.result = s.computed = l.result;
        s.operands = {l.result};
        all.push_back(s);
      }
      addNode(result, &op, std::move(all), step, leader->second);
      return;
    }
    const Mesh &mesh = meshFor(result.sharding);
    std::vector<Strategy> all = opStrategies(op, *rule, mesh);
    if (!result.sharding && !all.empty()) {
      int leaderOperand = determiningOperand(op);
      if (leaderOperand >= 0) {
        int node = graph_.nodeOf.at(op.operands[leaderOperand]);
        all = typed(result, &op, std::move(all));
        if (all.empty()) {
          leaveToPropagation(op, step, kNoTypedCandidate);
          return;
        }
        addNode(result, &op, bestResponses(op, std::move(all), node, leaderOperand), step, node);
        return;
      }
    }
    if (result.sharding && result.sharding->isClosed()) {
      // Computed any way, then resharded to the written layout; and
      // computed in the written layout itself when the enumeration has no
      // such strategy (uneven dims).
      const Sharding written = result.sharding->closed();
      std::vector<Strategy> base;
      bool computesWritten = false;
      for (Strategy &s : all)
        if (sameLayout(s.result, s.computed, mesh)) {
          computesWritten = computesWritten || sameLayout(s.computed, written, mesh);
          s.result = written;
          base.push_back(std::move(s));
        }
      if (!computesWritten)
        base.push_back(partitionerStrategy(op, *rule, writtenOperands(op, mesh), written, mesh));
      all = keepWrittenOperands(op, *rule, std::move(base), mesh);
    } else {
      all = honouring(std::move(all), result.sharding, mesh);
      // No enumerated strategy honours the written result: honouring gave
      // its layout alone, without operands; compute it as the partitioner
      // would.
      if (all.size() == 1 && all[0].operands.size() != op.operands.size())
        all[0] = partitionerStrategy(op, *rule, writtenOperands(op, mesh), all[0].result, mesh);
    }
    addNode(result, &op, std::move(all), step, -1);
  }

  /// The operand whose layout decides the op's strategy (a follower's
  /// leader), or -1: the operand of a reshape, transpose or broadcast, or
  /// of an elementwise binary op the one not produced by a constant.
  int determiningOperand(const Op &op) const {
    auto isNode = [&](const Value *v) { return graph_.nodeOf.count(v) != 0; };
    if (op.kind == OpKind::Reshape || op.kind == OpKind::Transpose || op.kind == OpKind::Broadcast)
      return op.operands.size() == 1 && isNode(op.operands[0]) ? 0 : -1;
    if (opInfo(op.kind).group != OpGroup::Binary || op.operands.size() != 2)
      return -1;
    auto constant = [](const Value *v) {
      return v->definingOp && v->definingOp->kind == OpKind::Constant;
    };
    for (int i = 0; i < 2; ++i)
      if (isNode(op.operands[i]) && constant(op.operands[1 - i]) && !constant(op.operands[i]))
        return i;
    return -1;
  }

  /// For each strategy of the leader `node`: the op's strategy cheapest when
  /// operand `operand` arrives in the leader's layout.
  std::vector<Strategy> bestResponses(const Op &op, std::vector<Strategy> all, int node,
                                      int operand) {
    for (Strategy &s : all)
      pricer_.price(&op, op.result()->type, s);
    const Value &in = *op.operands[operand];
    const std::vector<Strategy> &leader = graph_.nodes[node].strategies;
    // The reshard from each leader strategy's layout to each op strategy's.
    const std::vector<double> moving = pricePairs(
        leader, resultLayout, all,
        [operand](const Strategy &s) -> const Sharding & { return s.operands[operand]; },
        [&](const Sharding &from, const Sharding &to) {
          return pricer_.time(pricer_.plan(in.type, from, {}, "sum", to), in.type.dtype);
        });
    std::vector<Strategy> chosen;
    for (size_t l = 0; l < leader.size(); ++l) {
      const Strategy *best = nullptr;
      double bestCost = 0;
      for (size_t k = 0; k < all.size(); ++k) {
        const Strategy &s = all[k];
        const double cost = s.compute + s.communication + moving[l * all.size() + k];
        if (!best || cost < bestCost) {
          best = &s;
          bestCost = cost;
        }
      }
      chosen.push_back(*best);
    }
    return chosen;
  }

  /// A result of @main with a written sharding: its value pays the reshard.
  void priceWrittenResults() {
    Function &main = *graph_.main;
    for (size_t k = 0; k < main.body.returned.size() && k < main.results.size(); ++k) {
      const std::optional<Sharding> &written = main.results[k].sharding;
      auto it = graph_.nodeOf.find(main.body.returned[k]);
      if (!written || outsideSolver(written) || it == graph_.nodeOf.end())
        continue; // left unpriced (see outsideSolver)
      GraphNode &node = graph_.nodes[it->second];
      const Mesh &mesh = meshFor(written);
      for (Strategy &s : node.strategies)
        if (!honours(s.result, *written, mesh))
          s.toWrittenResult +=
              pricer_.time(pricer_.plan(node.value->type, s.result, {}, "sum", written->closed()),
                           node.value->type.dtype);
    }
  }

  /// Each result of @main with a written sharding the solver decides: the
  /// bytes per device of its output buffer.
  std::map<const Value *, double> writtenResultBytes() const {
    std::map<const Value *, double> bytes;
    const Function &main = *graph_.main;
    for (size_t k = 0; k < main.body.returned.size() && k < main.results.size(); ++k) {
      const std::optional<Sharding> &w = main.results[k].sharding;
      if (w && !outsideSolver(w)) {
        const Value &v = *main.body.returned[k];
        bytes[&v] = localBytes(v.type, w->closed(), meshFor(w));
      }
    }
    return bytes;
  }

  Module &module_;
  Pricer &pricer_;
  const Mesh &mesh_;
  StrategyGraph graph_;
};

} // namespace

StrategyGraph buildStrategyGraph(Module &module, Function &main, Pricer &pricer,
                                 const AutoShardOptions &options) {
  const Mesh *mesh = defaultMesh(module);
  if (!mesh)
    return StrategyGraph{&main, {}, {}, {}, {}, {}};
  pricer.noteFusion(main.body);
  return GraphBuilder(module, main, pricer, *mesh).build(options);
}

} // namespace shardc::autoshard
