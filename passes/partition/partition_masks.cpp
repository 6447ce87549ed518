// Padding masks. A dim of size D split n ways holds ceil(D/n) elements per
// device; the tail of the last blocks is padding whose contents are
// whatever the ops before computed on it. Before a reduction or contraction
// reads such a dim, the padding is replaced by the reduction's identity:
//
//   %i   = axis_index {axis = "x"}           shard index (mixed radix over
//   ...                                       the dim's axes, sub-axes cut out)
//   %s   = mul %i, b                          first global index of my block
//   %p   = add (iota {dim = d}), %s           global index of each element
//   %ok  = lt %p, D
//   %m   = select %ok, %x, identity
#include "passes/partition/PartitionInternal.h"

#include <limits>

namespace shardc::partition {
namespace {

Value *binary(Body &body, OpKind kind, Value *a, Value *b, Loc loc, const std::string &hint) {
  TensorType type = a->type.rank() >= b->type.rank() ? a->type : b->type;
  if (kind == OpKind::Lt)
    type.dtype = DType::I1;
  return body.emit(kind, {a, b}, {}, type, loc, hint);
}

/// The device's coordinate along `axis` (a sub-axis cut out of its axis).
Value *axisCoordinate(Body &body, const AxisRef &axis, Loc loc) {
  Attribute name;
  name.kind = Attribute::Kind::String;
  name.s = axis.name;
  Value *coord = body.emit(OpKind::AxisIndex, {}, {NamedAttribute{"axis", name, {}}},
                           TensorType{{}, DType::I32}, loc, "idx_" + axis.name);
  if (!axis.isSubAxis())
    return coord;
  // "x":(m)k of an axis of size n: (coord / (n / (m*k))) mod k.
  const MeshAxis *full = body.mesh.findAxis(axis.name);
  int64_t post = full->size / (axis.preSize * axis.size);
  Value *q =
      binary(body, OpKind::Div, coord, emitScalar(body, post, DType::I32, loc, "c"), loc, "q");
  Value *k = emitScalar(body, axis.size, DType::I32, loc, "c");
  Value *whole = binary(body, OpKind::Mul, binary(body, OpKind::Div, q, k, loc, "q"), k, loc, "q");
  return binary(body, OpKind::Sub, q, whole, loc, "sub_" + axis.name);
}

} // namespace

Scalar reductionIdentity(const std::string &kind, DType dtype) {
  Scalar s;
  s.isFloat = isFloat(dtype);
  s.isBool = dtype == DType::I1;
  if (kind == "sum")
    return s; // 0 of every dtype
  const bool max = kind == "max";
  switch (dtype) {
  case DType::F32:
  case DType::F64:
    s.f = max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    break;
  case DType::I32:
    s.i = max ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int32_t>::max();
    break;
  case DType::I64:
    // Exact: no detour through double, which cannot hold INT64_MAX.
    s.i = max ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
    break;
  case DType::I1:
    s.i = max ? 0 : 1;
    break;
  }
  return s;
}

Value *maskPadding(Body &body, Value *value, const Sharding &sharding, size_t dim, int64_t dimSize,
                   const Scalar &identity, Loc loc) {
  if (dim >= sharding.dims.size())
    return value;
  const std::vector<AxisRef> &axes = sharding.dims[dim].axes;
  int64_t shards = productOf(axes, body.mesh);
  int64_t block = localDimSize(dimSize, shards);
  if (shards <= 1 || block * shards == dimSize)
    return value;
  Value *index = nullptr;
  for (const AxisRef &axis : axes) {
    Value *coord = axisCoordinate(body, axis, loc);
    if (!index) {
      index = coord;
      continue;
    }
    int64_t size = axis.isSubAxis() ? axis.size : body.mesh.findAxis(axis.name)->size;
    index = binary(body, OpKind::Mul, index, emitScalar(body, size, DType::I32, loc, "c"), loc,
                   "shard");
    index = binary(body, OpKind::Add, index, coord, loc, "shard");
  }
  Value *start =
      binary(body, OpKind::Mul, index, emitScalar(body, block, DType::I32, loc, "c"), loc, "start");
  TensorType positions{value->type.shape, DType::I32};
  Value *iota = body.emit(OpKind::Iota, {}, {intAttr("dim", static_cast<int64_t>(dim))}, positions,
                          loc, "pos");
  Value *global = binary(body, OpKind::Add, iota, start, loc, "pos");
  Value *valid = binary(body, OpKind::Lt, global, emitScalar(body, dimSize, DType::I32, loc, "c"),
                        loc, "valid");
  Value *fill = body.emit(OpKind::Constant, {}, {splatAttr(identity)},
                          TensorType{{}, value->type.dtype}, loc, "pad");
  return body.emit(OpKind::Select, {valid, value, fill}, {}, value->type, loc,
                   value->name + "_masked");
}

} // namespace shardc::partition
