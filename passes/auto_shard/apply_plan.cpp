// Applying the solver's plan: every node's value gets its chosen layout
// (closed), and where a consumer's strategy needs an operand laid out
// otherwise than its producer left it, a sharding_constraint to that layout
// is inserted before the consumer. The partitioner then assigns the op's
// factors from its operands' layouts first (partition_assignment.cpp), so it
// computes each op exactly as the strategy the solver priced.
#include "passes/auto_shard/AutoShardInternal.h"

#include <fmt/format.h>

#include <set>

namespace shardc::autoshard {
namespace {

std::string describeAxes(const Op &op, const Strategy &s) {
  std::optional<ShardingRule> rule = getShardingRule(op);
  if (!rule || s.factorAxes.size() != rule->numFactors())
    return "";
  std::string out;
  for (size_t f = 0; f < s.factorAxes.size(); ++f) {
    std::string axes;
    for (const AxisRef &a : s.factorAxes[f])
      axes += (axes.empty() ? "" : ", ") + a.str();
    out += fmt::format("{}{}={{{}}}", out.empty() ? "" : " ", ShardingRule::factorName(f), axes);
  }
  return out;
}

class Applier {
public:
  Applier(Module &module, StrategyGraph &graph, const std::vector<int> &choice, Pricer &pricer,
          const AutoShardOptions &options)
      : module_(module), graph_(graph), choice_(choice), pricer_(pricer), report_(options.report),
        describeOp_(options.describeOp) {
    walkBlocks(module_, [&](Block &b) {
      for (auto &a : b.args)
        names_.insert(a->name);
      for (auto &op : b.ops)
        for (auto &r : op->results)
          names_.insert(r->name);
    });
  }

  void run() {
    for (size_t n = 0; n < graph_.nodes.size(); ++n) {
      GraphNode &node = graph_.nodes[n];
      const Strategy &s = chosen(static_cast<int>(n));
      node.value->sharding = s.result.closed();
      if (node.op &&
          (node.op->kind == OpKind::ShardingConstraint || node.op->kind == OpKind::Reshard))
        setShardingAttr(*node.op, s.result.closed());
      if (report_)
        reportNode(node, s);
    }
    Block &body = graph_.main->body;
    applyBlock(body);
    Function &main = *graph_.main;
    for (size_t k = 0; k < main.results.size() && k < body.returned.size(); ++k)
      if (!main.results[k].sharding && body.returned[k]->sharding)
        main.results[k].sharding = body.returned[k]->sharding;
  }

private:
  /// Inserts the constraints `block`'s ops need, in loop regions too (each
  /// in the region of its consumer: the partitioner hoists what is
  /// loop-invariant).
  void applyBlock(Block &block) {
    std::vector<std::unique_ptr<Op>> ops;
    for (auto &op : block.ops) {
      auto it = graph_.nodeOf.find(op->results.size() == 1 ? op->result() : nullptr);
      // A sharding_constraint reshards its operand itself.
      bool constraint = op->kind == OpKind::ShardingConstraint || op->kind == OpKind::Reshard;
      if (it != graph_.nodeOf.end() && graph_.nodes[it->second].op == op.get() && !constraint)
        reshardOperands(*op, it->second, ops, block);
      if (op->kind == OpKind::For || op->kind == OpKind::While)
        for (Block *region : op->regions())
          applyBlock(*region);
      ops.push_back(std::move(op));
    }
    block.ops = std::move(ops);
  }

  /// Sets a sharding op's attribute in place: the mixed pass holds the
  /// address of the sharding written there (mixed_axes.cpp).
  static void setShardingAttr(Op &op, Sharding sharding) {
    for (NamedAttribute &a : op.attrs)
      if (a.name == attrs::sharding.name && a.value.shardings.size() == 1) {
        a.value.shardings[0] = std::move(sharding);
        return;
      }
    op.setAttr(attrs::sharding.name, shardingAttr(sharding));
  }

  const Strategy &chosen(int n) const { return graph_.nodes[n].strategies[choice_[n]]; }

  static Attribute shardingAttr(const Sharding &s) {
    Attribute a;
    a.kind = Attribute::Kind::Sharding;
    a.shardings = {s};
    return a;
  }

  std::string fresh(const std::string &hint) {
    for (int i = 0;; ++i) {
      std::string name = fmt::format("{}_as{}", hint, i);
      if (names_.insert(name).second)
        return name;
    }
  }

  void reshardOperands(Op &op, int consumer, std::vector<std::unique_ptr<Op>> &ops,
                       const Block &block) {
    const Strategy &s = chosen(consumer);
    for (const GraphEdge &edge : graph_.edges) {
      if (edge.to != consumer)
        continue;
      Value *value = op.operands[edge.operand];
      const Sharding &have = chosen(edge.from).result;
      const Sharding &want = s.operands[edge.operand];
      if (sameLayout(have, want, pricer_.meshOf(want)))
        continue;
      std::string key =
          fmt::format("{}|{}|{}", static_cast<const void *>(&block), value->name, want.str());
      auto it = inserted_.find(key);
      if (it == inserted_.end()) {
        auto c = std::make_unique<Op>();
        c->kind = OpKind::ShardingConstraint;
        c->loc = op.loc;
        c->operands = {value};
        c->operandLocs = {op.loc};
        c->setAttr(attrs::sharding.name, shardingAttr(want.closed()));
        auto r = std::make_unique<Value>();
        r->name = fresh(value->name);
        r->type = value->type;
        r->sharding = want.closed();
        r->loc = op.loc;
        r->definingOp = c.get();
        c->results.push_back(std::move(r));
        it = inserted_.emplace(key, c->result()).first;
        ops.push_back(std::move(c));
        if (report_)
          reportEdge(*value, op, edge.operand, have, want);
      }
      op.operands[edge.operand] = it->second;
    }
  }

  void reportNode(const GraphNode &node, const Strategy &s) {
    AutoShardOpRow row;
    row.what = node.op ? describe(*node.op) : fmt::format("param %{}", node.value->name);
    row.shardings = s.result.closed().str();
    row.strategy = node.op ? describeAxes(*node.op, s) : "";
    row.compute = s.compute;
    row.communication = s.communication + s.toWrittenResult;
    row.loc = node.op ? node.op->loc : node.value->loc;
    report_->ops.push_back(row);
  }

  void reportEdge(const Value &value, const Op &consumer, size_t operand, const Sharding &from,
                  const Sharding &to) {
    const ReshardPlan &plan = pricer_.plan(value.type, from, {}, "sum", to);
    AutoShardEdgeRow row;
    row.value = fmt::format("%{} -> operand {} of {}", value.name, operand, describe(consumer));
    row.from = from.closed().str();
    row.to = to.closed().str();
    std::string steps = describePlan(plan);
    while (!steps.empty() && steps.back() == '\n')
      steps.pop_back();
    for (char &c : steps)
      if (c == '\n')
        c = ';';
    row.steps = steps;
    row.bytes = plan.bytes;
    row.seconds = pricer_.time(plan, value.type.dtype);
    report_->edges.push_back(row);
  }

  /// `%h = matmul`, or what the caller names an op it made.
  std::string describe(const Op &op) const {
    if (describeOp_)
      if (std::string named = describeOp_(op); !named.empty())
        return named;
    return fmt::format("%{} = {}", op.result()->name, op.name());
  }

  Module &module_;
  StrategyGraph &graph_;
  const std::vector<int> &choice_;
  Pricer &pricer_;
  AutoShardReport *report_;
  const std::function<std::string(const Op &)> &describeOp_;
  std::set<std::string> names_;
  std::map<std::string, Value *> inserted_;
};

} // namespace

void applyPlan(Module &module, StrategyGraph &graph, const std::vector<int> &choice, Pricer &pricer,
               const AutoShardOptions &options) {
  Applier(module, graph, choice, pricer, options).run();
}

} // namespace shardc::autoshard
