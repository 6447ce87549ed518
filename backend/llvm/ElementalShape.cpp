// Shape ops, one element at a time: each maps the result position to the
// operand position it reads (backend/interpreter/ShapeOps.cpp). concat and
// pad read every candidate at an index clamped into its bounds and select,
// so no load is ever out of bounds and the code stays branch-free.
#include "backend/llvm/ElementalInternal.h"

namespace shardc::llvmgen::elemental {
namespace {

/// j clamped into [0, size - 1] (size >= 1).
llvm::Value *clampIndex(KernelLowering &k, llvm::Value *j, int64_t size) {
  llvm::IRBuilder<> &b = k.builder;
  llvm::Value *low = b.CreateSelect(b.CreateICmpSLT(j, k.i64(0)), k.i64(0), j);
  return b.CreateSelect(b.CreateICmpSGT(low, k.i64(size - 1)), k.i64(size - 1), low);
}

llvm::Value *reshape(KernelLowering &k, const Op &op, ElementIndex &index) {
  const Value *x = op.operands[0];
  if (x->type.numElements() != op.result()->type.numElements())
    unsupported(op, "element count doesn't match");
  ElementIndex at = ElementIndex::fromLinear(x->type.shape, index.linear(k));
  return elementOf(k, x, at);
}

/// Result dim i is operand dim perm[i].
llvm::Value *transpose(KernelLowering &k, const Op &op, ElementIndex &index) {
  std::vector<int64_t> perm = intListAttr(op, attrs::perm);
  const Value *x = op.operands[0];
  if (perm.size() != x->type.rank())
    unsupported(op, "perm size doesn't match rank");
  std::vector<llvm::Value *> dims(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    dims.at(perm[i]) = index.dim(k, i);
  ElementIndex at(x->type.shape, dims);
  return elementOf(k, x, at);
}

/// Operand dim i is result dim dims[i] (index 0 when it has size 1).
llvm::Value *broadcast(KernelLowering &k, const Op &op, ElementIndex &index) {
  std::vector<int64_t> to = intListAttr(op, attrs::dims);
  const Value *x = op.operands[0];
  if (to.size() != x->type.rank())
    unsupported(op, "dims size doesn't match operand rank");
  std::vector<llvm::Value *> dims;
  for (size_t i = 0; i < to.size(); ++i)
    dims.push_back(x->type.shape[i] == 1 ? k.i64(0) : index.dim(k, to[i]));
  ElementIndex at(x->type.shape, dims);
  return elementOf(k, x, at);
}

llvm::Value *slice(KernelLowering &k, const Op &op, ElementIndex &index) {
  const Value *x = op.operands[0];
  std::vector<int64_t> start = intListAttr(op, attrs::start);
  std::vector<int64_t> stride = op.get(attrs::stride, std::vector<int64_t>(x->type.rank(), 1));
  if (start.size() != x->type.rank() || stride.size() != x->type.rank())
    unsupported(op, "start and stride must have one entry per dim");
  std::vector<llvm::Value *> dims;
  for (size_t d = 0; d < start.size(); ++d)
    dims.push_back(k.builder.CreateAdd(k.i64(start[d]),
                                       k.builder.CreateMul(index.dim(k, d), k.i64(stride[d]))));
  ElementIndex at(x->type.shape, dims);
  return elementOf(k, x, at);
}

llvm::Value *padValue(KernelLowering &k, const Op &op) {
  DType dtype = op.result()->type.dtype;
  llvm::Type *type = k.elementType(dtype);
  const Attribute *value = op.attr(attrs::padValue);
  if (!value)
    return constantOf(type, 0);
  if (value->kind == Attribute::Kind::Bool)
    return constantOf(type, value->b ? 1 : 0);
  if (isFloat(dtype))
    return constantOf(type, value->number());
  int64_t i =
      value->kind == Attribute::Kind::Int ? value->i : static_cast<int64_t>(value->number());
  if (dtype == DType::I1)
    return k.builder.getInt1((i & 1) != 0); // the interpreter keeps the low bit
  return llvm::ConstantInt::get(type, static_cast<uint64_t>(i), /*isSigned=*/true);
}

llvm::Value *pad(KernelLowering &k, const Op &op, ElementIndex &index) {
  const Value *x = op.operands[0];
  std::vector<int64_t> low = intListAttr(op, attrs::padLow);
  if (low.size() != x->type.rank())
    unsupported(op, "low must have one entry per dim");
  llvm::Value *fill = padValue(k, op);
  if (x->type.numElements() == 0)
    return fill;
  llvm::IRBuilder<> &b = k.builder;
  llvm::Value *inside = b.getTrue();
  std::vector<llvm::Value *> dims;
  for (size_t d = 0; d < low.size(); ++d) {
    int64_t size = x->type.shape[d];
    llvm::Value *j = b.CreateSub(index.dim(k, d), k.i64(low[d]));
    inside = b.CreateAnd(inside, b.CreateICmpULT(j, k.i64(size))); // unsigned: j < 0 is huge
    dims.push_back(clampIndex(k, j, size));
  }
  ElementIndex at(x->type.shape, dims);
  return b.CreateSelect(inside, elementOf(k, x, at), fill);
}

llvm::Value *concat(KernelLowering &k, const Op &op, ElementIndex &index) {
  size_t dim = static_cast<size_t>(intAttr(op, attrs::dim));
  if (dim >= index.shape().size())
    unsupported(op, "dim out of range");
  llvm::IRBuilder<> &b = k.builder;
  llvm::Value *position = index.dim(k, dim);
  // Operand p covers [offset, offset + size) of dim; later operands win from
  // their offset on, so the select chain runs from first to last.
  llvm::Value *result = nullptr;
  int64_t offset = 0;
  for (const Value *x : op.operands) {
    int64_t size = x->type.shape.at(dim);
    if (x->type.numElements() == 0) {
      offset += size;
      continue;
    }
    std::vector<llvm::Value *> dims = index.dims(k);
    dims[dim] = clampIndex(k, b.CreateSub(position, k.i64(offset)), size);
    ElementIndex at(x->type.shape, dims);
    llvm::Value *element = elementOf(k, x, at);
    result = result ? b.CreateSelect(b.CreateICmpSGE(position, k.i64(offset)), element, result)
                    : element;
    offset += size;
  }
  if (!result) // every operand is empty, and so is the result
    return constantOf(k.elementType(op.result()->type.dtype), 0);
  return result;
}

} // namespace

llvm::Value *emitAllSliceElement(KernelLowering &k, const Op &op, ElementIndex &index) {
  const Value *x = op.operands[0];
  const TensorType &type = op.result()->type;
  int64_t dim = intAttr(op, attrs::dim);
  const Attribute *axes = op.attr(attrs::axes);
  if (!axes || axes->kind != Attribute::Kind::AxisSet)
    unsupported(op, "missing attribute: axes");
  if (dim < 0 || static_cast<size_t>(dim) >= type.rank() || x->type.rank() != type.rank())
    unsupported(op, "dim out of range");
  if (!k.currentMesh())
    unsupported(op, "outside a manual_computation");
  // This device keeps block `group index` of `kept` elements along dim (its
  // local type's size there), zero past the operand's end: the same values
  // as shardrt_all_slice, without the operand ever being whole in memory
  // when it is fused (an iota or random value computes only this block).
  llvm::IRBuilder<> &b = k.builder;
  int64_t length = x->type.shape[dim], kept = type.shape[dim];
  llvm::Value *first = b.CreateMul(k.groupIndex(axes->axes), k.i64(kept));
  std::vector<llvm::Value *> dims = index.dims(k);
  llvm::Value *at = b.CreateAdd(first, dims[dim]);
  llvm::Value *inside = b.CreateICmpSLT(at, k.i64(length));
  dims[dim] = clampIndex(k, at, length);
  ElementIndex from(x->type.shape, dims);
  llvm::Value *element = elementOf(k, x, from);
  return b.CreateSelect(inside, element, constantOf(element->getType(), 0));
}

llvm::Value *emitShapeElement(KernelLowering &k, const Op &op, ElementIndex &index) {
  switch (op.kind) {
  case OpKind::Reshape:
    return reshape(k, op, index);
  case OpKind::Transpose:
    return transpose(k, op, index);
  case OpKind::Broadcast:
    return broadcast(k, op, index);
  case OpKind::Concat:
    return concat(k, op, index);
  case OpKind::Slice:
    return slice(k, op, index);
  case OpKind::Pad:
    return pad(k, op, index);
  default:
    unsupported(op, "not a shape op");
  }
}

} // namespace shardc::llvmgen::elemental
