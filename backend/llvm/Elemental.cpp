// The elemental lowering's entry points (Lowering.h): emitElement computes
// one element of any value, emitElementalOp fills a materialized value's
// buffer with one loop. A fused chain is an expression tree evaluated inside
// that loop (ElementalInternal.h), so it reads its leaves once per element
// and writes nothing in between.
//
// The loop: a single flat loop over the linear index when every leaf of the
// tree is read at the output's own linear index (elementwise ops without
// broadcasting, reshapes, splat or dense constants, random values); otherwise
// a loop nest over the output's shape, innermost dim innermost, so stores
// and most loads are contiguous and a leaf indexed only by outer dims (a
// broadcast row or scalar) is loop-invariant in the inner loop; in square
// tiles when a stored operand is read transposed (ElementalTiles.cpp). The loads
// are marked as not reading the output (OutputScope), which the vectorizer
// needs when both live in the arena.
#include "backend/llvm/Codegen.h"
#include "backend/llvm/ElementalInternal.h"

#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Operator.h>

namespace shardc::llvmgen {
namespace elemental {

ElementIndex ElementIndex::fromLinear(const std::vector<int64_t> &shape, llvm::Value *linear) {
  ElementIndex index(shape, {});
  index.linear_ = linear;
  if (shape.size() == 1)
    index.dims_ = {linear};
  return index;
}

const std::vector<llvm::Value *> &ElementIndex::dims(KernelLowering &k) {
  if (dimsKnown())
    return dims_;
  // Row-major delinearization: dim d = (linear / stride[d]) % shape[d]. The
  // divisors are constants, so these become multiplications.
  std::vector<llvm::Value *> dims(shape_.size());
  int64_t stride = 1;
  for (size_t d = shape_.size(); d-- > 0;) {
    llvm::Value *q = stride == 1 ? linear_ : k.builder.CreateUDiv(linear_, k.i64(stride));
    dims[d] = d == 0 ? q : k.builder.CreateURem(q, k.i64(shape_[d]));
    stride *= shape_[d];
  }
  dims_ = std::move(dims);
  return dims_;
}

llvm::Value *ElementIndex::linear(KernelLowering &k) {
  if (!linear_)
    linear_ = k.linearIndex(shape_, dims_);
  return linear_;
}

llvm::Value *elementOf(KernelLowering &k, const Value *v, ElementIndex &index) {
  if (llvm::Value *member = rowMemberElement(k, v, index))
    return member;
  if (k.fusion().isMaterialized(v) || !v->definingOp) {
    if (llvm::Value *tiled = tiledElement(k, v, index))
      return tiled;
    return k.load(k.buffer(v), v->type.dtype, index.linear(k));
  }
  return computeElement(k, *v->definingOp, index);
}

llvm::Value *computeElement(KernelLowering &k, const Op &op, ElementIndex &index) {
  if (op.kind == OpKind::AllSlice)
    return emitAllSliceElement(k, op, index);
  switch (opInfo(op.kind).group) {
  case OpGroup::Unary:
  case OpGroup::Binary:
  case OpGroup::Convert:
    return emitElementwise(k, op, index);
  case OpGroup::Shape:
    return emitShapeElement(k, op, index);
  case OpGroup::Creation:
    return emitCreationElement(k, op, index);
  case OpGroup::Reduction:
    return emitReductionElement(k, op, index);
  default:
    unsupported(op, "not computed element by element");
  }
}

// ---- attributes ---------------------------------------------------------------

void unsupported(const Op &op, const std::string &why) {
  throw CodegenError(op.loc, std::string(op.name()) + " - cannot lower: " + why);
}

std::vector<int64_t> intListAttr(const Op &op, AttrKey<std::vector<int64_t>> key) {
  std::optional<std::vector<int64_t>> values = op.get(key);
  if (!values)
    unsupported(op, std::string("missing attribute: ") + key.name);
  return *values;
}

int64_t intAttr(const Op &op, AttrKey<int64_t> key) {
  std::optional<int64_t> value = op.get(key);
  if (!value)
    unsupported(op, std::string("missing attribute: ") + key.name);
  return *value;
}

llvm::Value *constantOf(llvm::Type *type, double v) {
  if (type->isFloatingPointTy())
    return llvm::ConstantFP::get(type, v);
  return llvm::ConstantInt::get(type, static_cast<uint64_t>(static_cast<int64_t>(v)),
                                /*isSigned=*/true);
}

namespace {

/// True when every leaf of the tree computing `op`'s result is read at the
/// result's own linear index, so a flat loop needs no per-dim index.
bool readsAtOwnLinearIndex(const KernelLowering &k, const Op &op);

bool leafAtLinearIndex(const KernelLowering &k, const Value *v) {
  if (k.fusion().isMaterialized(v) || !v->definingOp)
    return true;
  return readsAtOwnLinearIndex(k, *v->definingOp);
}

bool readsAtOwnLinearIndex(const KernelLowering &k, const Op &op) {
  const TensorType &type = op.result()->type;
  if (type.rank() <= 1)
    return true; // the linear index is the index
  switch (opInfo(op.kind).group) {
  case OpGroup::Unary:
  case OpGroup::Convert:
  case OpGroup::Binary:
    for (const Value *operand : op.operands)
      if (operand->type.shape != type.shape || !leafAtLinearIndex(k, operand))
        return false;
    return true;
  case OpGroup::Shape:
    return op.kind == OpKind::Reshape && leafAtLinearIndex(k, op.operands[0]);
  case OpGroup::Creation:
    return op.kind != OpKind::Iota;
  default:
    return false;
  }
}

} // namespace
} // namespace elemental

using namespace elemental;

llvm::Value *emitElement(KernelLowering &k, const Value *v,
                         const std::vector<llvm::Value *> &index) {
  ElementIndex at(v->type.shape, index);
  return elementOf(k, v, at);
}

namespace {

/// Tells LLVM that no load of the loops emitted between construction and
/// finish() reads what their stores into `out` write. The planner gives a
/// value's storage to no other value live at the same time, so an op's
/// output never overlaps what it reads; but arena buffers are offsets from
/// one pointer, and without this a loop that reads a broadcast operand
/// from the arena (the row max of softmax) and writes the arena stays
/// scalar: the vectorizer cannot prove its invariant load independent of
/// the stores, and adds no run-time check within one object.
class OutputScope {
public:
  OutputScope(KernelLowering &k, llvm::Value *out) : k_(k), out_(out->stripPointerCasts()) {
    llvm::BasicBlock *start = k.builder.GetInsertBlock();
    fn_ = start->getParent();
    for (llvm::BasicBlock &block : *fn_)
      before_.insert(&block);
    start_ = start;
    startEnd_ = start->empty() ? nullptr : &start->back();
  }

  void finish() {
    llvm::MDBuilder md(k_.context);
    llvm::MDNode *domain = md.createAnonymousAliasScopeDomain("shardc.op");
    llvm::MDNode *scope = md.createAnonymousAliasScope(domain, "output");
    llvm::MDNode *list = llvm::MDNode::get(k_.context, {scope});
    for (llvm::BasicBlock &block : *fn_) {
      bool fresh = !before_.count(&block);
      if (!fresh && &block != start_)
        continue;
      bool emitted = fresh || !startEnd_;
      for (llvm::Instruction &inst : block) {
        if (emitted) {
          if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&inst))
            load->setMetadata(llvm::LLVMContext::MD_noalias, list);
          else if (auto *store = llvm::dyn_cast<llvm::StoreInst>(&inst); store && writesOut(store))
            store->setMetadata(llvm::LLVMContext::MD_alias_scope, list);
        }
        emitted = emitted || &inst == startEnd_;
      }
    }
  }

private:
  KernelLowering &k_;
  llvm::Value *out_;
  llvm::Function *fn_;
  std::set<llvm::BasicBlock *> before_;
  llvm::BasicBlock *start_;
  llvm::Instruction *startEnd_;

  /// A store at an element of `out` (KernelLowering::elementAddress).
  bool writesOut(llvm::StoreInst *store) const {
    auto *address = llvm::dyn_cast<llvm::GEPOperator>(store->getPointerOperand());
    return address && address->getPointerOperand()->stripPointerCasts() == out_;
  }
};

void emitElementLoops(KernelLowering &k, const Value *v) {
  const Op &op = *v->definingOp;
  llvm::Value *out = k.buffer(v);
  DType dtype = v->type.dtype;
  const std::vector<int64_t> &shape = v->type.shape;
  auto group = k.fusion().rowGroups.find(v);
  if (group != k.fusion().rowGroups.end()) {
    emitRowGroup(k, v, group->second);
    return;
  }
  if (readsAtOwnLinearIndex(k, op)) {
    k.emitLoop(
        k.i64(v->type.numElements()),
        [&](llvm::Value *i) {
          ElementIndex at = ElementIndex::fromLinear(shape, i);
          k.store(out, dtype, i, computeElement(k, op, at));
        },
        /*versionable=*/true);
    return;
  }
  if (emitTiledLoops(k, v))
    return;
  k.emitLoopNest(
      shape,
      [&](const std::vector<llvm::Value *> &index) {
        ElementIndex at(shape, index);
        llvm::Value *element = computeElement(k, op, at);
        k.store(out, dtype, at.linear(k), element);
      },
      /*versionable=*/true);
}

} // namespace

void emitElementalOp(KernelLowering &k, const Value *v) {
  const Op &op = *v->definingOp;
  if (opInfo(op.kind).group == OpGroup::Reduction && emitReductionByRows(k, v))
    return;
  OutputScope scope(k, k.buffer(v));
  emitElementLoops(k, v);
  scope.finish();
}

} // namespace shardc::llvmgen
