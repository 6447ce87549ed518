// Fusion per block, storage aliases, live ranges, arena offsets.
#include "backend/llvm/KernelPlan.h"

#include "backend/llvm/Codegen.h"

#include <algorithm>
#include <set>

namespace shardc::llvmgen {

TensorType localTypeOf(const shardc::Module &program, const Value &v) {
  if (!v.sharding)
    return v.type;
  const Mesh *mesh = program.findMesh(v.sharding->meshName);
  if (!mesh)
    throw CodegenError(v.loc,
                       "%" + v.name + " is sharded on an unknown mesh @" + v.sharding->meshName);
  return TensorType{localShape(v.type.shape, *v.sharding, *mesh), v.type.dtype};
}

KernelPlan::KernelPlan(const shardc::Module &program, const Function &main) : program_(program) {
  const Block &body = main.body;
  for (size_t i = 0; i < body.args.size(); ++i) {
    inputIndex_[body.args[i].get()] = static_cast<int64_t>(i);
    localTypes_[body.args[i].get()] = localTypeOf(program, *body.args[i]);
  }
  planBlock(body, /*topLevel=*/true);
  ++step_; // the copy of @main's results into the output buffers
  for (const Value *v : body.returned)
    use(v);
  placeResultsInOutputs(body);

  std::vector<const Value *> stored;
  std::vector<BufferRequest> requests;
  // In the order the values are written: the plan (and --emit=llvm) must
  // not depend on where the IR happens to live in memory.
  for (const Value *v : definitionOrder_) {
    if (outputIndex_.count(v))
      continue;
    const BufferRequest &request = requests_.at(v);
    stored.push_back(v);
    requests.push_back(request);
  }
  arena_ = planArena(requests);
  for (size_t i = 0; i < stored.size(); ++i)
    offsets_[stored[i]] = arena_.offsets[i];
}

const Value *KernelPlan::storageOf(const Value *v) const {
  for (auto it = alias_.find(v); it != alias_.end(); it = alias_.find(v))
    v = it->second;
  return v;
}

int64_t KernelPlan::inputIndexOf(const Value *v) const {
  auto it = inputIndex_.find(storageOf(v));
  return it == inputIndex_.end() ? -1 : it->second;
}

int64_t KernelPlan::outputIndexOf(const Value *v) const {
  auto it = outputIndex_.find(storageOf(v));
  return it == outputIndex_.end() ? -1 : it->second;
}

// A returned value computed by the kernel is written straight into its output
// buffer: a copy at the end would read and write it all once more (a third of
// the time of a fused elementwise loop). Not for a parameter returned as it is
// (its storage is an input buffer), nor twice for one storage returned twice,
// nor when the buffers' sizes differ.
void KernelPlan::placeResultsInOutputs(const Block &body) {
  for (size_t i = 0; i < body.returned.size(); ++i) {
    const Value *storage = storageOf(body.returned[i]);
    auto request = requests_.find(storage);
    if (request == requests_.end() || outputIndex_.count(storage))
      continue;
    const TensorType output = localTypeOf(program_, *body.returned[i]);
    if (request->second.bytes != output.bytes())
      continue;
    outputIndex_[storage] = static_cast<int64_t>(i);
  }
}

bool KernelPlan::hasStorage(const Value *v) const {
  const Value *s = storageOf(v);
  return inputIndex_.count(s) || requests_.count(s) || views_.count(s);
}

void KernelPlan::define(const Value *v, const TensorType &local) {
  localTypes_[v] = local;
  if (alias_.count(v))
    return; // written into another value's storage (planInPlaceReturns)
  if (!requests_.count(v))
    definitionOrder_.push_back(v);
  BufferRequest &r = requests_[v];
  r.bytes = local.bytes();
  r.firstStep = r.lastStep = step_;
}

void KernelPlan::use(const Value *v) {
  const Value *s = storageOf(v);
  auto it = requests_.find(s);
  if (it != requests_.end()) {
    it->second.lastStep = std::max(it->second.lastStep, step_);
    if (!loopReads_.empty())
      loopReads_.back().push_back(s);
  }
}

const Value *KernelPlan::copyTemporary(const Op &loop, size_t i) const {
  auto it = temporaries_.find({&loop, i});
  return it == temporaries_.end() ? nullptr : it->second.get();
}

const Value *KernelPlan::carriedStorage(const Op &loop, size_t i) {
  return Op::carriedArgs(loop, *loop.body).at(i);
}

// Steps: the first (inits copied, index set), the cond region (while), the
// branch on its predicate (while), the body, the last (the body's returned
// values copied into the carried storage, the index advanced).
void KernelPlan::planLoop(const Op &op, bool topLevel) {
  const int64_t first = step_;
  std::vector<Value *> carried = Op::carriedArgs(op, *op.body);
  for (const Value *init : op.operands)
    use(init);
  for (const auto &arg : op.body->args)
    define(arg.get(), topLevel ? localTypeOf(program_, *arg) : arg->type);
  if (op.cond)
    for (size_t i = 0; i < op.cond->args.size() && i < carried.size(); ++i)
      alias_[op.cond->args[i].get()] = carried[i];
  for (size_t i = 0; i < op.results.size() && i < carried.size(); ++i)
    alias_[op.results[i].get()] = carried[i];

  planInPlaceReturns(op, topLevel);

  loopReads_.emplace_back();
  if (op.cond) {
    planBlock(*op.cond, topLevel);
    ++step_; // the branch
    for (const Value *p : op.cond->returned)
      use(p);
  }
  planBlock(*op.body, topLevel);
  ++step_; // the copies into the carried storage
  const Block &body = *op.body;
  for (size_t i = 0; i < body.returned.size() && i < carried.size(); ++i) {
    use(body.returned[i]);
    const Value *source = storageOf(body.returned[i]);
    bool otherCarried = false;
    for (size_t j = 0; j < carried.size(); ++j)
      otherCarried |= j != i && source == carried[j];
    if (!otherCarried)
      continue;
    auto temporary = std::make_unique<Value>();
    temporary->name = carried[i]->name + ".next";
    temporary->type = localTypes_.at(carried[i]);
    define(temporary.get(), temporary->type);
    temporaries_[{&op, i}] = std::move(temporary);
  }
  const int64_t last = step_;
  for (const auto &arg : op.body->args)
    requests_.at(arg.get()).lastStep = std::max(requests_.at(arg.get()).lastStep, last);

  // What the loop reads from before it is read again by the next iteration.
  std::vector<const Value *> reads = std::move(loopReads_.back());
  loopReads_.pop_back();
  for (const Value *s : reads) {
    BufferRequest &r = requests_.at(s);
    if (r.firstStep < first)
      r.lastStep = std::max(r.lastStep, last);
    if (!loopReads_.empty())
      loopReads_.back().push_back(s);
  }
}

// A body that returns a fresh value for a carried one, as in
//
//   for ... carry(%h = %x) { %m = matmul %h, %w; %n = tanh %m; return %n }
//
// would write %n into bytes of its own and copy it into %h's storage at the
// end of every iteration. The copy is not needed when %n's op writes straight
// into %h's storage, which is safe when nothing reads that storage from the
// moment %n's op starts: (1) %n is the result of an op directly in the body
// (no region op, no alias) and is returned once, with %h's bytes; (2) let D be
// %h and the values whose reads read %h's bytes (aliases of D, and values of
// D that are not materialized: computed inside their consumer's loop, or as
// members of a row group); no op from %n's op on,
// nor any op inside their regions, reads a value of D; (3) no other returned
// value is in D (the copies at the end would read the new bytes).
void KernelPlan::planInPlaceReturns(const Op &loop, bool topLevel) {
  const Block &body = *loop.body;
  std::vector<Value *> carried = Op::carriedArgs(loop, body);
  const FusionPlan &fusion = fusionOf(body);
  if (!topLevel)
    planChains(body);
  auto bytes = [&](const Value *v) {
    return (topLevel ? localTypeOf(program_, *v) : v->type).bytes();
  };
  for (size_t i = 0; i < body.returned.size() && i < carried.size(); ++i) {
    const Value *result = body.returned[i];
    const Op *writer = result->definingOp;
    // (A slice chain writes its output slice by slice while its later slices
    // may still read the carried value whole.)
    if (!writer || chainOf(*writer) || writer->regions().size() > 0 ||
        writer->kind == OpKind::ShardingConstraint || writer->kind == OpKind::Reshard ||
        alias_.count(result) || bytes(result) != bytes(carried[i]))
      continue;
    if (std::count(body.returned.begin(), body.returned.end(), result) != 1)
      continue;
    size_t at = 0;
    while (at < body.ops.size() && body.ops[at].get() != writer)
      ++at;
    if (at == body.ops.size())
      continue; // defined in a nested region

    // (2) D, in program order.
    std::set<const Value *> reads{carried[i]};
    for (const auto &op : body.ops) {
      bool readsD = false;
      for (const Value *operand : op->operands)
        readsD |= reads.count(operand) > 0;
      if (!readsD)
        continue;
      // A deferred all_gather's operand is read by its contraction.
      bool alias = op->kind == OpKind::ShardingConstraint || op->kind == OpKind::Reshard ||
                   fusion.isDeferredGather(*op);
      for (const auto &r : op->results)
        if (alias || !fusion.isMaterialized(r.get()))
          reads.insert(r.get());
    }
    bool safe = true;
    for (size_t k = at; k < body.ops.size() && safe; ++k) {
      for (const Value *operand : body.ops[k]->operands)
        safe &= reads.count(operand) == 0;
      for (Block *region : body.ops[k]->regions())
        walkOps(*region, [&](Op &inner) {
          for (const Value *operand : inner.operands)
            safe &= reads.count(operand) == 0;
        });
    }
    // (3)
    for (size_t j = 0; j < body.returned.size(); ++j)
      safe &= j == i || reads.count(body.returned[j]) == 0;
    if (safe)
      alias_[result] = carried[i];
  }
}

// Steps: the first (the predicate read), the then-branch, its copies into
// the results, the else-branch, its copies.
void KernelPlan::planIf(const Op &op, bool topLevel) {
  for (const Value *p : op.operands)
    use(p);
  for (const auto &result : op.results)
    define(result.get(), topLevel ? localTypeOf(program_, *result) : result->type);
  for (const Block *branch : {op.body.get(), op.elseBody.get()}) {
    if (!branch)
      continue;
    planBlock(*branch, topLevel);
    ++step_;
    for (const Value *v : branch->returned)
      use(v);
  }
  for (const auto &result : op.results)
    requests_.at(result.get()).lastStep = std::max(requests_.at(result.get()).lastStep, step_);
}

void KernelPlan::useLeaves(const Value *v, const FusionPlan &plan) {
  if (plan.isMaterialized(v) || !v->definingOp || hasStorage(v)) {
    use(v);
    return;
  }
  for (const Value *operand : v->definingOp->operands)
    useLeaves(operand, plan);
}

const FusionPlan &KernelPlan::fusionOf(const Block &block) {
  std::unique_ptr<FusionPlan> &plan = fusion_[&block];
  if (!plan)
    plan = std::make_unique<FusionPlan>(planFusion(block));
  return *plan;
}

// The first step: the views' values are read or written from here on. One
// step per op of the shadow. The last: every slice has read and written
// the views, so their values live until here.
void KernelPlan::planChain(const SliceChain &chain) {
  for (const auto &[shadow, view] : chain.views) {
    if (shadow->definingOp)
      define(view.original, view.original->type);
    else
      use(view.original);
  }
  for (const auto &opPtr : chain.shadow.ops) {
    const Op &op = *opPtr;
    ++step_;
    const Value *result = op.result();
    bool elemental = isElementalOp(op.kind);
    if (elemental && !chain.fusion.isMaterialized(result))
      continue;
    if (!views_.count(result))
      define(result, result->type);
    for (const Value *operand : op.operands) {
      if (elemental)
        useLeaves(operand, chain.fusion);
      else
        use(operand);
    }
  }
  ++step_;
  for (const auto &[shadow, view] : chain.views)
    use(view.original);
}

void KernelPlan::planChains(const Block &block) {
  if (!chainsPlanned_.insert(&block).second)
    return;
  for (std::unique_ptr<SliceChain> &chain : planSliceChains(block, fusionOf(block))) {
    for (const Op *op : chain->ops)
      chainOf_[op] = chain.get();
    for (const auto &[shadow, view] : chain->views)
      views_[shadow] = &view;
    chains_.push_back(std::move(chain));
  }
}

void KernelPlan::planBlock(const Block &block, bool topLevel) {
  const FusionPlan &fusion = fusionOf(block);
  // (At the top level a value's local type may not be its type, which the
  // shadow's are made from; partitioned programs compute in manual bodies.)
  if (!topLevel)
    planChains(block);
  for (const auto &opPtr : block.ops) {
    const Op &op = *opPtr;
    ++step_;
    if (const SliceChain *chain = chainOf(op)) {
      if (&op == chain->ops.front())
        planChain(*chain);
      continue;
    }
    if (op.kind == OpKind::ManualComputation) {
      for (size_t i = 0; i < op.body->args.size() && i < op.operands.size(); ++i)
        alias_[op.body->args[i].get()] = op.operands[i];
      planBlock(*op.body, /*topLevel=*/false);
      for (size_t i = 0; i < op.results.size() && i < op.body->returned.size(); ++i)
        alias_[op.results[i].get()] = op.body->returned[i];
      continue;
    }
    if (op.kind == OpKind::For || op.kind == OpKind::While) {
      planLoop(op, topLevel);
      continue;
    }
    if (op.kind == OpKind::If) {
      planIf(op, topLevel);
      continue;
    }
    if (!topLevel && (op.kind == OpKind::ShardingConstraint || op.kind == OpKind::Reshard)) {
      alias_[op.result()] = op.operands[0];
      continue;
    }
    bool elemental = isElementalOp(op.kind);
    bool stored = false;
    for (const auto &result : op.results) {
      if (elemental && !fusion.isMaterialized(result.get()))
        continue; // computed inside its consumer's loop
      define(result.get(), topLevel ? localTypeOf(program_, *result) : result->type);
      stored = true;
    }
    if (elemental && !stored)
      continue; // its reads happen in the loop of the op that fuses it
    for (const Value *operand : op.operands) {
      if (elemental)
        useLeaves(operand, fusion);
      else
        use(operand);
    }
    // The contraction that does an all_gather's exchange reads its operand.
    if (auto gathered = fusion.gatheredOperands.find(&op);
        gathered != fusion.gatheredOperands.end())
      use(gathered->second.gather->operands.at(0));
  }
  for (const Value *v : block.returned)
    use(v);
}

} // namespace shardc::llvmgen
