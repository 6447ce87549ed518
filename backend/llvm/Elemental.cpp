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
// broadcast row or scalar) is loop-invariant in the inner loop.
#include "backend/llvm/Codegen.h"
#include "backend/llvm/ElementalInternal.h"

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
  if (k.fusion().isMaterialized(v) || !v->definingOp)
    return k.load(k.buffer(v), v->type.dtype, index.linear(k));
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

void emitElementalOp(KernelLowering &k, const Value *v) {
  const Op &op = *v->definingOp;
  llvm::Value *out = k.buffer(v);
  DType dtype = v->type.dtype;
  const std::vector<int64_t> &shape = v->type.shape;
  if (opInfo(op.kind).group == OpGroup::Reduction && emitReductionByRows(k, v))
    return;
  auto group = k.fusion().rowGroups.find(v);
  if (group != k.fusion().rowGroups.end()) {
    emitRowGroup(k, v, group->second);
    return;
  }
  if (readsAtOwnLinearIndex(k, op)) {
    k.emitLoop(k.i64(v->type.numElements()), [&](llvm::Value *i) {
      ElementIndex at = ElementIndex::fromLinear(shape, i);
      k.store(out, dtype, i, computeElement(k, op, at));
    });
    return;
  }
  k.emitLoopNest(shape, [&](const std::vector<llvm::Value *> &index) {
    ElementIndex at(shape, index);
    llvm::Value *element = computeElement(k, op, at);
    k.store(out, dtype, at.linear(k), element);
  });
}

} // namespace shardc::llvmgen
