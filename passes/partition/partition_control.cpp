// Control flow in the per-device body: `for`, `while` and `if` are
// partitioned in place, not unrolled (LANGUAGE.md section 9).
//
// 1. A carried value has one layout, its loop result's (export gave the
//    region arguments the same): the init is resharded to it before the loop,
//    and the value the body returns at the end of each iteration.
// 2. Each region is partitioned like the body around it, in a child Body that
//    sees the values captured from above.
// 3. A predicate (a `while` cond's result, an `if` operand) is made
//    replicated: reduced or gathered when it comes from sharded values, so
//    every device takes the same path and the collectives inside a region
//    never wait for a device that took another.
// 4. What a loop's regions compute from loop-invariant values alone (a
//    reshard of a captured weight, a constant) is hoisted in front of the
//    loop, so it runs once instead of every iteration.
// 5. `if` results take their declared layouts: each branch reshards what it
//    returns.
#include "passes/partition/PartitionInternal.h"

#include <fmt/format.h>

#include <set>

namespace shardc::partition {
namespace {

std::unique_ptr<Value> localValue(Body &body, const Value &global, const Sharding &sharding,
                                  Op *definingOp) {
  auto v = std::make_unique<Value>();
  v->name = body.names.fresh(global.name);
  v->type = TensorType{localShape(global.type.shape, sharding, body.mesh), global.type.dtype};
  v->writtenType = v->type;
  v->loc = global.loc;
  v->definingOp = definingOp;
  return v;
}

Sharding closedCopy(const Sharding &s) {
  Sharding out = s;
  for (DimSharding &d : out.dims)
    d.open = false, d.priority.reset();
  out.replicated.clear();
  return out;
}

/// The layout carried value / result `i` of `op` keeps.
Sharding carriedSharding(const Body &body, const Op &op, size_t i) {
  const Value &result = *op.results.at(i);
  if (result.sharding)
    return closedCopy(*result.sharding);
  return Sharding::replicatedOn(body.mesh.name, result.type.rank());
}

/// Moves the ops of `region` that depend only on values defined outside it
/// in front of `loop` in `outer` (they compute the same every iteration).
/// Returns the ops moved.
std::vector<const Op *> hoistInvariants(Block &region, Block &outer, size_t loopIndex) {
  std::set<const Value *> inside;
  for (const auto &arg : region.args)
    inside.insert(arg.get());
  std::vector<std::unique_ptr<Op>> kept, hoisted;
  for (auto &op : region.ops) {
    bool invariant = op->regions().empty();
    for (const Value *v : op->operands)
      invariant &= !inside.count(v);
    if (!invariant) {
      // Its results, and everything its regions define, vary.
      for (const auto &r : op->results)
        inside.insert(r.get());
      kept.push_back(std::move(op));
    } else {
      hoisted.push_back(std::move(op));
    }
  }
  region.ops = std::move(kept);
  std::vector<const Op *> moved;
  for (const auto &op : hoisted)
    moved.push_back(op.get());
  outer.ops.insert(outer.ops.begin() + static_cast<std::ptrdiff_t>(loopIndex),
                   std::make_move_iterator(hoisted.begin()),
                   std::make_move_iterator(hoisted.end()));
  return moved;
}

class ControlFlowPartitioner {
public:
  ControlFlowPartitioner(Body &body, const Op &op) : body_(body), op_(op) {}

  void run() {
    auto copy = std::make_unique<Op>();
    copy->kind = op_.kind;
    copy->loc = op_.loc;
    copy->attrs = op_.attrs;
    copy_ = copy.get();
    std::vector<Sharding> layouts;
    for (size_t i = 0; i < op_.results.size(); ++i)
      layouts.push_back(carriedSharding(body_, op_, i));

    if (op_.kind == OpKind::If) {
      const Value *pred = op_.operands.at(0);
      copy->operands.push_back(replicated(body_, *pred, "predicate of if"));
      copy->body = std::make_unique<Block>();
      copy->elseBody = std::make_unique<Block>();
      region(*op_.body, *copy->body, layouts, "then branch returns");
      region(*op_.elseBody, *copy->elseBody, layouts, "else branch returns");
    } else {
      for (size_t i = 0; i < op_.operands.size(); ++i) {
        const Value *init = op_.operands[i];
        Local local = reshardLocal(body_, body_.local(init, op_.loc), init->type, layouts.at(i),
                                   op_.loc, fmt::format("init of carried value {}", i));
        copy->operands.push_back(local.value);
      }
      if (body_.report)
        body_.report->enterLoop(op_);
      if (op_.cond) {
        copy->cond = std::make_unique<Block>();
        condRegion(*op_.cond, *copy->cond, layouts);
      }
      copy->body = std::make_unique<Block>();
      region(*op_.body, *copy->body, layouts, "carried value at the end of an iteration");
      if (body_.report)
        body_.report->leaveLoop();
    }
    for (size_t i = 0; i < op_.results.size(); ++i) {
      copy->results.push_back(localValue(body_, *op_.results[i], layouts[i], copy.get()));
      copy->results.back()->resultIndex = static_cast<int>(i);
      body_.locals[op_.results[i].get()] = Local{copy->results.back().get(), layouts[i], {}, "sum"};
    }
    size_t at = body_.block.ops.size();
    body_.block.ops.push_back(std::move(copy));
    if (op_.kind == OpKind::If)
      return;
    std::set<const Op *> hoisted;
    for (Block *r : copy_->regions()) {
      size_t before = body_.block.ops.size();
      std::vector<const Op *> moved = hoistInvariants(*r, body_.block, at);
      at += body_.block.ops.size() - before;
      if (body_.report)
        body_.report->hoisted(moved);
      hoisted.insert(moved.begin(), moved.end());
    }
    // A reshard the regions made of a value from before the loop now runs in
    // front of it: the ops after the loop may reuse it too.
    for (auto &[key, local] : regionReshards_)
      if (local.value && hoisted.count(local.value->definingOp))
        body_.reshards.emplace(key, std::move(local));
  }

private:
  /// How often the loop's regions run (for a while, kWhileRuns).
  double trips() const {
    if (op_.kind != OpKind::For)
      return kWhileRuns;
    int64_t lower = op_.get(attrs::lower, 0), upper = op_.get(attrs::upper, 0);
    int64_t step = std::max<int64_t>(1, op_.get(attrs::loopStep, 1));
    return upper > lower ? static_cast<double>((upper - lower - 1) / step + 1) : 1.0;
  }

  Body &body_;
  const Op &op_;
  Op *copy_ = nullptr;
  std::vector<std::pair<KeyWords, Local>> regionReshards_;

  /// `v` (rank 0) replicated on every device, its partial sums reduced.
  static Value *replicated(Body &body, const Value &v, const std::string &why) {
    Sharding all = Sharding::replicatedOn(body.mesh.name, v.type.rank());
    return reshardLocal(body, body.local(&v, v.loc), v.type, all, v.loc, why).value;
  }

  /// A child body for `to`, seeing the values above; the region's carried
  /// arguments are laid out as `layouts`.
  Body child(const Block &from, Block &to, const std::vector<Sharding> &layouts) {
    Body inner{body_.module, body_.mesh,    to,
               body_.names,  body_.report,  body_.locals,
               body_.caches, body_.options, body_.reshards};
    to.loc = from.loc;
    to.endLoc = from.endLoc;
    to.hasReturn = from.hasReturn;
    to.returnLoc = from.returnLoc;
    std::vector<Value *> carried = Op::carriedArgs(op_, from);
    size_t first = from.args.size() - carried.size();
    for (size_t a = 0; a < from.args.size(); ++a) {
      const Value &arg = *from.args[a];
      Sharding layout = a < first ? Sharding::replicatedOn(body_.mesh.name, arg.type.rank())
                                  : layouts.at(a - first);
      to.args.push_back(localValue(body_, arg, layout, nullptr));
      inner.locals[&arg] = Local{to.args.back().get(), layout, {}, "sum"};
    }
    inner.runs = body_.runs;
    if (op_.kind != OpKind::If) { // a branch hoists nothing
      inner.beforeLoop = &body_.locals;
      inner.hoistedRuns = body_.runs;
      inner.runs *= trips();
    }
    return inner;
  }

  void partitionRegionOps(Body &inner, const Block &from) {
    for (const auto &op : from.ops) {
      if (op->kind == OpKind::ManualComputation)
        partitionManual(inner, *op);
      else
        partitionOp(inner, *op);
    }
  }

  /// Keeps the reshards a loop's region made that the enclosing body does
  /// not have (run() hands those that were hoisted to it).
  void keepReshards(const Body &inner) {
    if (op_.kind == OpKind::If || !body_.options.reuseReshards)
      return;
    for (const auto &[key, local] : inner.reshards)
      if (!body_.reshards.count(key))
        regionReshards_.emplace_back(key, local);
  }

  /// A body or branch: its ops, then each returned value in `layouts`.
  void region(const Block &from, Block &to, const std::vector<Sharding> &layouts, const char *why) {
    Body inner = child(from, to, layouts);
    partitionRegionOps(inner, from);
    keepReshards(inner);
    for (size_t i = 0; i < from.returned.size() && i < layouts.size(); ++i) {
      const Value *v = from.returned[i];
      Loc loc = i < from.returnedLocs.size() ? from.returnedLocs[i] : from.returnLoc;
      Local out = reshardLocal(inner, inner.local(v, loc), v->type, layouts[i], loc,
                               fmt::format("{} ({})", why, i));
      to.returned.push_back(out.value);
      to.returnedLocs.push_back(loc);
    }
  }

  void condRegion(const Block &from, Block &to, const std::vector<Sharding> &layouts) {
    Body inner = child(from, to, layouts);
    partitionRegionOps(inner, from);
    keepReshards(inner);
    if (from.returned.empty() || !from.returned[0])
      throw Unsupported(op_.loc, "while - cannot partition: its cond returns nothing");
    to.returned.push_back(replicated(inner, *from.returned[0], "predicate of while"));
    to.returnedLocs.push_back(from.returnedLocs.empty() ? from.returnLoc : from.returnedLocs[0]);
  }
};

} // namespace

void partitionControlFlow(Body &body, const Op &op) { ControlFlowPartitioner(body, op).run(); }

} // namespace shardc::partition
