// The kernel's plan, made before any IR is emitted: the fusion plan of every
// block, which values share storage (aliases), the step at which each value
// is written and last read, and from those the arena offsets.
//
// Steps number the ops in execution order: the ops of @main's body, with a
// manual_computation's body ops numbered where the manual_computation is.
//
// Aliases (no copy, one storage): a manual_computation's body argument is its
// operand; its result is the value its body returns; `sharding_constraint`
// and a `reshard` inside a body are their operand (identities on local
// buffers). The storage of @main's parameters is the runtime's input buffers;
// a storage @main returns is the runtime's output buffer of that result (it is
// written there, not copied there at the end); every other storage lives in
// the arena.
//
// Control flow (for, while, if): a loop's carried values have storage of
// their own (the body's arguments; a while's cond arguments and the loop's
// results alias them), written from the inits at the loop's first step and
// live until its last step, where the body's returned values are copied into
// them. A `for` index is an i64 in storage of its own. Values defined before
// a loop and read inside it stay live until the loop's last step (the next
// iteration reads them again). An `if`'s results have storage of their own,
// live from the if's first step, which each branch's last step writes. A
// region's ops get steps in execution order (a while's cond before its body,
// an if's then-branch before its else-branch).
#pragma once

#include "backend/llvm/BufferPlan.h"
#include "backend/llvm/Lowering.h"
#include "backend/llvm/SliceChain.h"

#include <map>
#include <memory>
#include <set>
#include <vector>

namespace shardc::llvmgen {

class KernelPlan {
public:
  KernelPlan(const shardc::Module &program, const Function &main);

  const FusionPlan &fusion(const Block &block) const { return *fusion_.at(&block); }
  /// The value whose storage `v` uses (itself unless an alias).
  const Value *storageOf(const Value *v) const;
  /// A @main parameter's index when `v`'s storage is one, else -1.
  int64_t inputIndexOf(const Value *v) const;
  /// The index of the output buffer that is `v`'s storage, else -1.
  int64_t outputIndexOf(const Value *v) const;
  /// The arena offset of `v`'s storage (neither an input nor an output).
  int64_t arenaOffset(const Value *v) const { return offsets_.at(storageOf(v)); }
  bool hasStorage(const Value *v) const;
  int64_t arenaBytes() const { return arena_.bytes; }
  /// The local (per-device, padded) type each stored value has.
  const TensorType &localType(const Value *v) const { return localTypes_.at(storageOf(v)); }
  /// Where the copy of a loop body's `i`th returned value goes first when it
  /// is another carried value (`return %b, %a`): a temporary of its own, so
  /// the copies into the carried storage read values not yet overwritten.
  /// Null when the returned value is copied directly.
  const Value *copyTemporary(const Op &loop, size_t i) const;
  /// The storage a loop's `i`th carried value lives in (the body's argument).
  static const Value *carriedStorage(const Op &loop, size_t i);
  /// The slice chain `op` belongs to (SliceChain.h), or null. The kernel
  /// runs the whole chain, slice by slice, where its first op is.
  const SliceChain *chainOf(const Op &op) const {
    auto it = chainOf_.find(&op);
    return it == chainOf_.end() ? nullptr : it->second;
  }
  /// The view of a slice chain's shadow value (an argument or a returned
  /// value: a slice of a value in memory), or null.
  const SliceChain::View *viewOf(const Value *v) const {
    auto it = views_.find(v);
    return it == views_.end() ? nullptr : it->second;
  }

private:
  const shardc::Module &program_;
  std::map<const Block *, std::unique_ptr<FusionPlan>> fusion_;
  std::map<const Value *, const Value *> alias_;
  std::map<const Value *, int64_t> inputIndex_;
  std::map<const Value *, int64_t> outputIndex_;
  std::map<const Value *, TensorType> localTypes_;
  std::map<const Value *, BufferRequest> requests_;
  std::vector<const Value *> definitionOrder_; // the keys of requests_, as defined
  std::map<const Value *, int64_t> offsets_;
  ArenaPlan arena_;
  int64_t step_ = 0;
  /// The storages read in each loop being planned, innermost last.
  std::vector<std::vector<const Value *>> loopReads_;
  std::map<std::pair<const Op *, size_t>, std::unique_ptr<Value>> temporaries_;
  std::vector<std::unique_ptr<SliceChain>> chains_;
  std::map<const Op *, const SliceChain *> chainOf_;
  std::map<const Value *, const SliceChain::View *> views_;

  void planBlock(const Block &block, bool topLevel);
  /// Plans the slice chains of a block inside a manual body (once).
  void planChains(const Block &block);
  std::set<const Block *> chainsPlanned_;
  /// The fusion plan of `block`, planned on first use.
  const FusionPlan &fusionOf(const Block &block);
  void placeResultsInOutputs(const Block &body);
  void define(const Value *v, const TensorType &local);
  void use(const Value *v);
  /// The stored values an op reads: through fused operands to their leaves.
  void useLeaves(const Value *v, const FusionPlan &plan);
  void planLoop(const Op &op, bool topLevel);
  /// Lets a loop body's returned value be written straight into its carried
  /// storage when nothing reads that storage from its writing on.
  void planInPlaceReturns(const Op &loop, bool topLevel);
  void planIf(const Op &op, bool topLevel);
  /// A slice chain's storage: its views' values live through the whole
  /// chain; the values it materializes of its own get one slice's bytes.
  void planChain(const SliceChain &chain);
};

/// The per-device type of a top-level value: its global type split by its
/// sharding (the type itself without one).
TensorType localTypeOf(const shardc::Module &program, const Value &v);

} // namespace shardc::llvmgen
