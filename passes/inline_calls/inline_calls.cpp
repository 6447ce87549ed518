// inline-calls: every call replaced by a copy of its callee (InlineCalls.h).
#include "passes/inline_calls/InlineCalls.h"

#include "ir/Clone.h"

#include <map>
#include <set>

namespace shardc {
namespace {

class Inliner {
public:
  Inliner(const Module &module, Function &caller, bool explicitMode)
      : module_(module), caller_(caller), explicitMode_(explicitMode) {}

  void run() { inlineBlock(caller_.body); }

private:
  const Module &module_;
  Function &caller_;
  bool explicitMode_;
  /// Every value name of the caller, gathered at its first call (a function
  /// without calls costs one walk of its ops, no strings).
  std::set<std::string> names_;
  bool namesKnown_ = false;
  std::string prefix_;          // `callee.` of the call being inlined
  std::set<std::string> taken_; // its result names already given to a copy

  void walkBlocks(const Block &block) {
    for (const auto &arg : block.args)
      names_.insert(arg->name);
    for (const auto &op : block.ops) {
      for (const auto &r : op->results)
        names_.insert(r->name);
      for (Block *region : op->regions())
        walkBlocks(*region);
    }
  }

  std::string freshName(const std::string &base) {
    std::string name = base;
    for (int i = 1; names_.count(name); ++i)
      name = base + "." + std::to_string(i);
    names_.insert(name);
    return name;
  }

  /// `%name = sharding_constraint %v S` (or `reshard`) of `v`'s type.
  std::unique_ptr<Op> pin(Value *v, const Sharding &sharding, const std::string &name, Loc loc) {
    auto op = std::make_unique<Op>();
    op->kind = explicitMode_ ? OpKind::Reshard : OpKind::ShardingConstraint;
    op->loc = loc;
    op->operands.push_back(v);
    op->operandLocs.push_back(loc);
    Attribute a;
    a.kind = Attribute::Kind::Sharding;
    a.shardings.push_back(sharding);
    a.loc = sharding.loc;
    op->attrs.push_back({attrs::sharding.name, a, loc});
    auto r = std::make_unique<Value>();
    r->name = name;
    r->type = v->type;
    r->typeKnown = v->typeKnown;
    r->loc = loc;
    r->definingOp = op.get();
    op->results.push_back(std::move(r));
    return op;
  }

  /// The ops that replace `call`, and per call result its replacement.
  std::vector<std::unique_ptr<Op>> expand(const Op &call, std::vector<Value *> &replacements) {
    const Function &callee = *module_.findFunction(call.get(attrs::callee, ""));
    std::vector<std::unique_ptr<Op>> ops;
    ValueMap map;
    for (size_t i = 0; i < callee.body.args.size(); ++i) {
      const Value &param = *callee.body.args[i];
      Value *arg = call.operands[i];
      if (param.sharding) {
        ops.push_back(pin(arg, *param.sharding, freshName(callee.name + "." + param.name),
                          call.operandLocs.at(i)));
        arg = ops.back()->result();
      }
      map[&param] = arg;
    }
    // Names: a returned op result takes the call result's name, the rest
    // `callee.name`.
    std::map<const Value *, std::string> resultNames;
    for (size_t i = 0; i < callee.body.returned.size(); ++i) {
      const Value *v = callee.body.returned[i];
      bool pinned = i < callee.results.size() && callee.results[i].sharding;
      if (v && !v->isParameter() && !pinned)
        resultNames.emplace(v, call.results[i]->name);
    }
    for (const auto &op : callee.body.ops) {
      ops.push_back(cloneOp(*op, map));
      renameCopies(*op, *ops.back(), resultNames);
    }
    for (size_t i = 0; i < call.results.size(); ++i) {
      Value *v = map.count(callee.body.returned[i]) ? map[callee.body.returned[i]]
                                                    : callee.body.returned[i];
      if (i < callee.results.size() && callee.results[i].sharding) {
        ops.push_back(pin(v, *callee.results[i].sharding, call.results[i]->name, call.loc));
        v = ops.back()->result();
      }
      replacements.push_back(v);
    }
    return ops;
  }

  /// Gives the copy `copy` of callee op `original` (and its regions) fresh
  /// names; results named in `resultNames` take the caller's name.
  void renameCopies(const Op &original, Op &copy,
                    const std::map<const Value *, std::string> &resultNames) {
    for (size_t i = 0; i < copy.results.size(); ++i) {
      auto named = resultNames.find(original.results[i].get());
      copy.results[i]->name = named != resultNames.end() && !taken_.count(named->second)
                                  ? (taken_.insert(named->second), named->second)
                                  : freshName(prefix_ + copy.results[i]->name);
    }
    // The regions of one op share their argument names (a while's cond and
    // do both name its carried values): each name is renamed once.
    std::map<std::string, std::string> argNames;
    RegionList from = original.regions(), to = copy.regions();
    for (size_t r = 0; r < from.size(); ++r) {
      for (auto &arg : to[r]->args) {
        auto [it, added] = argNames.emplace(arg->name, "");
        if (added)
          it->second = freshName(prefix_ + arg->name);
        arg->name = it->second;
      }
      for (size_t k = 0; k < from[r]->ops.size(); ++k)
        renameCopies(*from[r]->ops[k], *to[r]->ops[k], resultNames);
    }
  }

  void inlineBlock(Block &block) {
    for (size_t i = 0; i < block.ops.size();) {
      Op &op = *block.ops[i];
      if (op.kind != OpKind::Call) {
        for (Block *region : op.regions())
          inlineBlock(*region);
        ++i;
        continue;
      }
      if (!namesKnown_) {
        walkBlocks(caller_.body);
        namesKnown_ = true;
      }
      prefix_ = op.get(attrs::callee, "") + ".";
      taken_.clear();
      std::vector<Value *> replacements;
      std::vector<std::unique_ptr<Op>> ops = expand(op, replacements);
      for (size_t r = 0; r < op.results.size(); ++r)
        replaceAllUses(caller_.body, op.results[r].get(), replacements[r]);
      block.ops.erase(block.ops.begin() + static_cast<std::ptrdiff_t>(i));
      block.ops.insert(block.ops.begin() + static_cast<std::ptrdiff_t>(i),
                       std::make_move_iterator(ops.begin()), std::make_move_iterator(ops.end()));
      // The copies may call further: they are visited next.
    }
  }
};

} // namespace

void inlineCalls(Module &module, bool explicitMode) {
  for (auto &f : module.functions)
    Inliner(module, *f, explicitMode).run();
}

} // namespace shardc
