// Shape ops: reshape, transpose, broadcast, concat, slice (with stride) and
// pad; and the block helpers (sliceDim, concatDim) that manual_computation
// and the collectives share with them. None of them computes: they move
// elements, whatever the element type.
#include "backend/interpreter/InterpreterInternal.h"

#include <algorithm>
#include <utility>

namespace shardc::interp::detail {
namespace {

/// The value of attribute `key`; a missing one (which infer-types reports)
/// fails the run.
template <class T> T required(const Op &op, AttrKey<T> key) {
  std::optional<T> value = op.get(key);
  if (!value)
    fail(op, std::string("missing attribute: ") + key.name);
  return *value;
}

/// Result dim i is operand dim perm[i].
Tensor transpose(const Op &op, const Tensor &x) {
  std::vector<int64_t> perm = required(op, attrs::perm);
  if (perm.size() != x.rank())
    fail(op, "perm size doesn't match rank");
  std::vector<int64_t> shape, own = stridesOf(x.shape()), from;
  for (int64_t p : perm) {
    shape.push_back(x.shape().at(p));
    from.push_back(own.at(p));
  }
  Tensor out(TensorType{shape, x.dtype()});
  forEachIndex(shape, [&](const std::vector<int64_t> &index, int64_t linear) {
    int64_t at = 0;
    for (size_t d = 0; d < index.size(); ++d)
      at += index[d] * from[d];
    out.copyElement(linear, x, at);
  });
  return out;
}

/// Operand dim i goes to result dim dims[i] (size 1 broadcasts); every
/// other result dim is new.
Tensor broadcast(const Op &op, const Tensor &x) {
  std::vector<int64_t> dims = required(op, attrs::dims);
  const std::vector<int64_t> &shape = op.result()->type.shape;
  if (dims.size() != x.rank())
    fail(op, "dims size doesn't match operand rank");
  std::vector<int64_t> own = stridesOf(x.shape()), from(shape.size(), 0);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= static_cast<int64_t>(shape.size()))
      fail(op, "dims out of range");
    if (x.shape()[i] != 1 && x.shape()[i] != shape[dims[i]])
      fail(op, "operand dim can't broadcast to the result dim");
    from[dims[i]] = x.shape()[i] == 1 ? 0 : own[i];
  }
  Tensor out(TensorType{shape, x.dtype()});
  forEachIndex(shape, [&](const std::vector<int64_t> &index, int64_t linear) {
    int64_t at = 0;
    for (size_t d = 0; d < index.size(); ++d)
      at += index[d] * from[d];
    out.copyElement(linear, x, at);
  });
  return out;
}

Tensor slice(const Op &op, const Tensor &x) {
  std::vector<int64_t> start = required(op, attrs::start), limit = required(op, attrs::limit);
  std::vector<int64_t> stride = op.get(attrs::stride, std::vector<int64_t>(x.rank(), 1));
  if (start.size() != x.rank() || limit.size() != x.rank() || stride.size() != x.rank())
    fail(op, "start, limit and stride must have one entry per dim");
  std::vector<int64_t> shape, own = stridesOf(x.shape());
  for (size_t d = 0; d < x.rank(); ++d) {
    if (start[d] < 0 || start[d] > limit[d] || limit[d] > x.shape()[d] || stride[d] < 1)
      fail(op, "bounds out of range");
    shape.push_back((limit[d] - start[d] + stride[d] - 1) / stride[d]);
  }
  Tensor out(TensorType{shape, x.dtype()});
  forEachIndex(shape, [&](const std::vector<int64_t> &index, int64_t linear) {
    int64_t at = 0;
    for (size_t d = 0; d < index.size(); ++d)
      at += (start[d] + index[d] * stride[d]) * own[d];
    out.copyElement(linear, x, at);
  });
  return out;
}

Tensor pad(const Op &op, const Tensor &x) {
  std::vector<int64_t> low = required(op, attrs::padLow), high = required(op, attrs::padHigh);
  if (low.size() != x.rank() || high.size() != x.rank())
    fail(op, "low and high must have one entry per dim");
  std::vector<int64_t> shape;
  for (size_t d = 0; d < x.rank(); ++d) {
    if (low[d] < 0 || high[d] < 0)
      fail(op, "low and high must be non-negative");
    shape.push_back(low[d] + x.shape()[d] + high[d]);
  }
  Tensor out(TensorType{shape, x.dtype()});
  if (const Attribute *value = op.attr(attrs::padValue)) {
    double v = value->kind == Attribute::Kind::Bool ? value->b : value->number();
    for (int64_t i = 0; i < out.size(); ++i) {
      if (out.holdsFloats())
        out.setFloat(i, v);
      else
        out.setInt(
            i, static_cast<uint64_t>(value->kind == Attribute::Kind::Int ? value->i : int64_t(v)));
    }
  }
  std::vector<int64_t> outStrides = stridesOf(shape);
  forEachIndex(x.shape(), [&](const std::vector<int64_t> &index, int64_t linear) {
    int64_t at = 0;
    for (size_t d = 0; d < index.size(); ++d)
      at += (index[d] + low[d]) * outStrides[d];
    out.copyElement(at, x, linear);
  });
  return out;
}

} // namespace

namespace {

/// Elements before `dim` (the outer count) and after it (one contiguous run).
std::pair<int64_t, int64_t> aroundDim(const std::vector<int64_t> &shape, size_t dim) {
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    (d < dim ? outer : inner) *= d == dim ? 1 : shape[d];
  return {outer, inner};
}

} // namespace

// Both copy whole runs of the dims after `dim`, which are contiguous in
// source and result alike (an element-wise walk with index arithmetic made
// the per-device simulation of large programs slow, 10x so under ASan).
Tensor sliceDim(const Tensor &t, size_t dim, int64_t start, int64_t size) {
  std::vector<int64_t> shape = t.shape();
  shape[dim] = size;
  Tensor out(TensorType{shape, t.dtype()});
  const auto [outer, inner] = aroundDim(shape, dim);
  const int64_t extent = t.shape()[dim];
  // Past the source's end is padding and stays zero.
  const int64_t copied = std::max<int64_t>(0, std::min(size, extent - start));
  for (int64_t o = 0; o < outer; ++o)
    out.copyElements((o * size) * inner, t, (o * extent + start) * inner, copied * inner);
  return out;
}

Tensor concatDim(const std::vector<const Tensor *> &parts, size_t dim) {
  std::vector<int64_t> shape = parts.front()->shape();
  shape[dim] = 0;
  for (const Tensor *p : parts)
    shape[dim] += p->shape()[dim];
  Tensor out(TensorType{shape, parts.front()->dtype()});
  const auto [outer, inner] = aroundDim(shape, dim);
  int64_t offset = 0;
  for (const Tensor *p : parts) {
    const int64_t extent = p->shape()[dim];
    for (int64_t o = 0; o < outer; ++o)
      out.copyElements((o * shape[dim] + offset) * inner, *p, o * extent * inner, extent * inner);
    offset += extent;
  }
  return out;
}

Tensor evalShapeOp(const Op &op, const std::vector<const Tensor *> &operands) {
  const Tensor &x = *operands[0];
  switch (op.kind) {
  case OpKind::Reshape:
    if (op.result()->type.numElements() != x.size())
      fail(op, "element count doesn't match");
    return x.reshaped(op.result()->type.shape);
  case OpKind::Transpose:
    return transpose(op, x);
  case OpKind::Broadcast:
    return broadcast(op, x);
  case OpKind::Concat: {
    int64_t dim = required(op, attrs::dim);
    if (dim < 0 || dim >= static_cast<int64_t>(x.rank()))
      fail(op, "dim out of range");
    for (const Tensor *t : operands) {
      std::vector<int64_t> a = t->shape(), b = x.shape();
      if (a.size() != b.size())
        fail(op, "operand ranks differ");
      a[dim] = b[dim] = 0;
      if (a != b)
        fail(op, "operand shapes differ outside the concat dim");
    }
    return concatDim(operands, static_cast<size_t>(dim));
  }
  case OpKind::Slice:
    return slice(op, x);
  case OpKind::Pad:
    return pad(op, x);
  default:
    fail(op, "not a shape op");
  }
}

} // namespace shardc::interp::detail
