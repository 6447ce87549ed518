// Collectives inside a manual body -> libshardrt calls (runtime/shardrt.h;
// semantics in SPMD_CONTRACT.md section 2). Each passes the op's profile id,
// so the runtime times it and counts its bytes under that op. all_slice, which
// communicates nothing, is elemental instead (ElementalShape.cpp).
#include "backend/llvm/Codegen.h"
#include "backend/llvm/KernelEmitter.h"

namespace shardc::llvmgen {
namespace {

int64_t intAttribute(const Op &op, AttrKey<int64_t> key) {
  std::optional<int64_t> value = op.get(key);
  if (!value)
    throw CodegenError(op.loc, std::string(op.name()) + " needs an integer `" + key.name + "`");
  return *value;
}

const std::vector<AxisRef> &axesAttribute(const Op &op) {
  const Attribute *attr = op.attr(attrs::axes);
  if (!attr || attr->kind != Attribute::Kind::AxisSet)
    throw CodegenError(op.loc, std::string(op.name()) + " needs `axes`");
  return attr->axes;
}

/// The call's common leading arguments and types: ctx, op id.
struct CallBuilder {
  KernelLowering &k;
  ProgramDescription &d;
  const Op &op;
  std::vector<llvm::Type *> types;
  std::vector<llvm::Value *> args;

  CallBuilder(KernelLowering &k, ProgramDescription &d, const Op &op) : k(k), d(d), op(op) {
    add(k.runtimeContext);
    add(k.opIdValue(op));
  }
  CallBuilder &add(llvm::Value *v) {
    types.push_back(v->getType());
    args.push_back(v);
    return *this;
  }
  CallBuilder &add(int64_t v) { return add(k.i64(v)); }
  CallBuilder &group() { return add(k.externalPointer(d.group(mesh(), axesAttribute(op)))); }
  CallBuilder &shape(const TensorType &t) {
    add(static_cast<int64_t>(t.rank()));
    return add(k.externalPointer(d.int64Array(t.shape, "shape")));
  }
  CallBuilder &inOut() {
    add(k.buffer(op.operands.at(0)));
    return add(k.buffer(op.result()));
  }
  const Mesh &mesh() {
    if (!k.currentMesh())
      throw CodegenError(op.loc, std::string(op.name()) + " outside a manual_computation");
    return *k.currentMesh();
  }
  void call(const char *name, llvm::Type *result = nullptr) {
    llvm::Type *ret = result ? result : k.builder.getVoidTy();
    k.builder.CreateCall(k.runtimeFunction(name, llvm::FunctionType::get(ret, types, false)), args);
  }
};

int64_t reductionKind(const Op &op) {
  const Attribute *attr = op.attr(attrs::kind);
  std::string kind = attr && attr->kind == Attribute::Kind::String ? attr->s : "sum";
  if (kind == "sum")
    return 0; // SHARDRT_SUM
  if (kind == "max")
    return 1;
  if (kind == "min")
    return 2;
  throw CodegenError(op.loc, "unknown reduction kind \"" + kind + "\"");
}

void emitAxisIndex(KernelLowering &k, ProgramDescription &d, const Op &op) {
  const Attribute *axis = op.attr(attrs::axis);
  if (!axis || axis->kind != Attribute::Kind::String || !k.currentMesh())
    throw CodegenError(op.loc, "axis_index needs an `axis` of the manual_computation's mesh");
  AxisRef ref;
  ref.name = axis->s;
  ref.loc = axis->loc;
  const Mesh &mesh = *k.currentMesh();
  auto *i8p = k.builder.getInt8PtrTy();
  llvm::Value *axisRef = k.externalPointer(d.axisRef(mesh, ref));
  llvm::FunctionCallee fn = k.runtimeFunction(
      "shardrt_axis_index",
      llvm::FunctionType::get(k.builder.getInt32Ty(), {i8p, k.builder.getInt64Ty(), i8p}, false));
  llvm::Value *index =
      k.builder.CreateCall(fn, {k.runtimeContext, k.i64(k.meshIndex(&mesh)), axisRef});
  k.store(k.buffer(op.result()), DType::I32, k.i64(0), index);
}

void emitPermute(KernelLowering &k, ProgramDescription &d, const Op &op) {
  const Attribute *pairs = op.attr(attrs::pairs);
  if (!pairs || pairs->kind != Attribute::Kind::List)
    throw CodegenError(op.loc, "collective_permute needs `pairs`");
  std::vector<int64_t> flat;
  for (const Attribute &pair : pairs->list) {
    std::optional<std::vector<int64_t>> ends = pair.intList();
    if (!ends || ends->size() != 2)
      throw CodegenError(pair.loc, "each pair of collective_permute is [source, target]");
    flat.insert(flat.end(), ends->begin(), ends->end());
  }
  CallBuilder c(k, d, op);
  const TensorType &t = op.operands.at(0)->type;
  c.add(k.meshIndex(&c.mesh()))
      .add(static_cast<int64_t>(flat.size() / 2))
      .add(k.externalPointer(d.int64Array(flat, "pairs")))
      .add(static_cast<int64_t>(t.dtype))
      .add(t.numElements())
      .inOut()
      .call("shardrt_collective_permute");
}

} // namespace

void emitCollective(KernelLowering &k, ProgramDescription &d, const Op &op) {
  if (op.kind == OpKind::AxisIndex)
    return emitAxisIndex(k, d, op);
  if (op.kind == OpKind::CollectivePermute)
    return emitPermute(k, d, op);
  const TensorType &t = op.operands.at(0)->type;
  const auto dtype = static_cast<int64_t>(t.dtype);
  CallBuilder c(k, d, op);
  switch (op.kind) {
  case OpKind::AllGather:
    c.group()
        .add(dtype)
        .shape(t)
        .add(intAttribute(op, attrs::dim))
        .inOut()
        .call("shardrt_all_gather");
    return;
  case OpKind::AllReduce:
    c.group()
        .add(dtype)
        .add(t.numElements())
        .add(reductionKind(op))
        .inOut()
        .call("shardrt_all_reduce");
    return;
  case OpKind::ReduceScatter:
    c.group()
        .add(dtype)
        .shape(t)
        .add(intAttribute(op, attrs::dim))
        .inOut()
        .call("shardrt_reduce_scatter");
    return;
  case OpKind::AllToAll:
    c.group()
        .add(dtype)
        .shape(t)
        .add(intAttribute(op, attrs::splitDim))
        .add(intAttribute(op, attrs::concatDim))
        .inOut()
        .call("shardrt_all_to_all");
    return;
  default:
    throw CodegenError(op.loc, std::string("not a collective: ") + op.name());
  }
}

} // namespace shardc::llvmgen
