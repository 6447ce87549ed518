// The random program generator's ops: one emit function per op group of
// LANGUAGE.md section 5, each typed by construction (every dtype, an op only
// where its type rules allow), and step(), which draws one of them.
#include "tests/diff/RandomProgramInternal.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace shardc::difftest {

namespace {

std::set<std::string> unite(const Val &a, const Val &b) {
  std::set<std::string> s = a.varies;
  s.insert(b.varies.begin(), b.varies.end());
  return s;
}

} // namespace

void Generator::step() {
  // The table of op groups, by weight. Regions (manual_computation, for,
  // while, if) and calls are entries like any other.
  struct Entry {
    int weight;
    std::function<void()> emit;
  };
  const std::vector<Entry> table = {
      {3, [&] { emitUnary(anyValue()); }},
      {1, [&] { emitPositive(anyValue([](const Val &v) { return isFloat(v.dtype); })); }},
      {3, [&] { emitBinary(anyValue()); }},
      {1, [&] { emitLogical(); }},
      {1, [&] { emitSelect(); }},
      {2, [&] { emitContraction(); }},
      {2, [&] { emitReduction(anyValue()); }},
      {1, [&] { emitTranspose(); }},
      {1, [&] { emitReshape(); }},
      {1, [&] { emitBroadcast(anyValue({}, true)); }},
      {1, [&] { emitConcatSliceOrPad(); }},
      {1, [&] { emitCreation(); }},
      {1, [&] { emitConvert(anyValue({}, true)); }},
      {cur().annotate ? 2 : 0, [&] { emitShardingOp(anyValue({}, true)); }},
      {cur().mesh >= 0 && cur().collectives ? 4 : 0, [&] { emitCollective(); }},
      {cur().depth < 2 && cur().collectives ? 1 : 0, [&] { emitManual(); }},
      {cur().oneMesh && cur().depth < 3 ? 1 : 0, [&] { emitFor(); }},
      {cur().oneMesh && cur().depth < 3 ? 1 : 0, [&] { emitWhile(); }},
      {cur().oneMesh && cur().depth < 3 ? 1 : 0, [&] { emitIf(); }},
      {callDepth_ < 2 && !mixed_ ? 1 : 0, [&] { emitCall(); }},
      {mixed_ && cur().annotate && cur().depth < 3 ? 1 : 0, [&] { emitAxesRegion(true); }},
      {mixed_ && cur().annotate && cur().depth < 3 ? 1 : 0, [&] { emitAxesRegion(false); }},
  };
  int total = 0;
  for (const Entry &e : table)
    total += e.weight;
  int64_t r = rng_.below(total);
  for (const Entry &e : table) {
    if (r < e.weight) {
      e.emit();
      return;
    }
    r -= e.weight;
  }
}

void Generator::emitUnary(const Val &x) {
  std::vector<std::string> ops = {"abs", "neg", "identity"};
  if (isInt(x.dtype) || x.exact)
    ops.push_back("sign");
  if (isFloat(x.dtype)) {
    for (const char *op : {"tanh", "sigmoid", "relu", "sin", "cos", "erf"})
      ops.push_back(op);
    if (x.exact)
      for (const char *op : {"exp", "floor", "ceil", "round"})
        ops.push_back(op);
  } else {
    ops.push_back("relu");
    ops.push_back("not"); // bitwise on integers
  }
  emit(fmt::format("{} %{}", rng_.pick(ops), x.name), x);
}

/// The ops defined on positive floats (log sqrt rsqrt reciprocal pow), on
/// sigmoid(tanh(x)), which lies in (0.26, 0.74) whatever x is.
void Generator::emitPositive(const Val &x) {
  if (!isFloat(x.dtype))
    return;
  Val t = emit(fmt::format("tanh %{}", x.name), x);
  Val s = emit(fmt::format("sigmoid %{}", t.name), t);
  if (rng_.chance(0.25)) {
    Val b = newOperand(x.shape, x.dtype);
    Val e = emit(fmt::format("tanh %{}", b.name), b);
    Val r = s;
    r.varies = unite(s, e);
    r.exact = s.exact && e.exact;
    emit(fmt::format("pow %{}, %{}", s.name, e.name), r);
    return;
  }
  static const std::vector<std::string> kOps = {"log", "sqrt", "rsqrt", "reciprocal"};
  emit(fmt::format("{} %{}", rng_.pick(kOps), s.name), s);
}

/// A shape `b` broadcasts with `a` to `a`: a suffix of `a` with some dims 1.
Shape Generator::broadcastable(const Shape &a) {
  Shape b(a.end() - rng_.below(a.size() + 1), a.end());
  for (int64_t &d : b)
    if (rng_.chance(0.3))
      d = 1;
  return b;
}

void Generator::emitBinary(const Val &a) {
  Val b;
  bool found = false;
  for (const Val &v : cur().pool)
    if (v.dtype == a.dtype && v.shape == a.shape && v.name != a.name && usable(v) &&
        rng_.chance(0.5)) {
      b = v;
      found = true;
    }
  if (!found)
    b = newOperand(rng_.chance(0.5) || !cur().params ? a.shape : broadcastable(a.shape), a.dtype);
  std::vector<std::string> ops = {"add", "sub", "mul", "max", "min"};
  Val r = a;
  r.exact = a.exact && b.exact;
  r.varies = unite(a, b);
  if (isFloat(a.dtype) && rng_.chance(0.15)) {
    // A denominator in (0, 1): division stays well conditioned.
    Val s = emit(fmt::format("sigmoid %{}", b.name), b);
    emit(fmt::format("div %{}, %{}", a.name, s.name), r);
    return;
  }
  std::string lhs = a.name, rhs = b.name;
  if (rng_.chance(0.5))
    std::swap(lhs, rhs); // broadcasting works either way round
  emit(fmt::format("{} %{}, %{}", rng_.pick(ops), lhs, rhs), r);
}

/// i1 values: a comparison of exact values, then not/and/or/xor on them (and
/// bitwise and/or/xor on integers).
void Generator::emitLogical() {
  Val a = anyValue([](const Val &v) { return v.exact; }, true);
  if (!a.exact)
    return;
  static const std::vector<std::string> kCompare = {"lt", "le", "gt", "ge", "eq", "ne"};
  static const std::vector<std::string> kLogic = {"and", "or", "xor"};
  if (a.dtype != "i1" && rng_.chance(isInt(a.dtype) ? 0.3 : 0)) {
    Val b = newOperand(a.shape, a.dtype);
    Val r = a;
    r.varies = unite(a, b);
    emit(fmt::format("{} %{}, %{}", rng_.pick(kLogic), a.name, b.name), r);
    return;
  }
  if (a.dtype != "i1") {
    Val b = newOperand(a.shape, a.dtype);
    Val c = a;
    c.dtype = "i1";
    c.varies = unite(a, b);
    a = emit(fmt::format("{} %{}, %{}", rng_.pick(kCompare), a.name, b.name), c);
  }
  if (rng_.chance(0.4)) {
    emit(fmt::format("not %{}", a.name), a);
    return;
  }
  Val b = anyValue([&](const Val &v) { return v.dtype == "i1" && v.shape == a.shape; }, true);
  if (b.dtype != "i1" || b.shape != a.shape)
    return;
  Val r = a;
  r.varies = unite(a, b);
  emit(fmt::format("{} %{}, %{}", rng_.pick(kLogic), a.name, b.name), r);
}

void Generator::emitSelect() {
  Val a = anyValue([](const Val &v) { return v.exact; }, true);
  if (!a.exact || (!cur().params && a.dtype == "i1"))
    return; // (a region invents no i1 operand)
  Val b = newOperand(a.shape, a.dtype);
  static const std::vector<std::string> kCompare = {"lt", "le", "gt", "ge", "eq", "ne"};
  Val c = a;
  c.dtype = "i1";
  c.varies = unite(a, b);
  c = emit(fmt::format("{} %{}, %{}", rng_.pick(kCompare), a.name, b.name), c);
  Val r = c;
  r.dtype = a.dtype;
  emit(fmt::format("select %{}, %{}, %{}", c.name, a.name, b.name), r);
}

void Generator::emitContraction() {
  Val a = anyValue([](const Val &v) { return v.shape.size() == 2 || v.shape.size() == 3; });
  if (a.shape.size() < 2 || a.shape.size() > 3)
    return;
  bool batched = a.shape.size() == 3;
  int64_t k = a.shape.back();
  int64_t n = rng_.between(1, options_.maxDim);
  Shape bShape = batched ? Shape{a.shape[0], k, n} : Shape{k, n};
  Val b = newOperand(bShape, a.dtype);
  Val r = a;
  r.exact = false;
  r.varies = unite(a, b);
  r.shape.back() = n;
  if (batched || rng_.chance(0.6)) {
    emit(fmt::format("matmul %{}, %{}", a.name, b.name), r);
    return;
  }
  switch (rng_.below(3)) {
  case 0:
    emit(fmt::format("einsum \"ij,jk->ik\" (%{}, %{})", a.name, b.name), r);
    return;
  case 1: // contract over both dims of a and the rows of b
    r.shape = {n};
    emit(fmt::format("einsum \"ij,jk->k\" (%{}, %{})", a.name, b.name), r);
    return;
  default: { // an outer dim kept on both sides: "ij,ik->ijk"-like
    Val c = newOperand({a.shape[0], n}, a.dtype);
    r.shape = {a.shape[0], a.shape[1], n};
    r.varies = unite(a, c);
    emit(fmt::format("einsum \"ij,ik->ijk\" (%{}, %{})", a.name, c.name), r);
    return;
  }
  }
}

void Generator::emitReduction(const Val &x) {
  std::vector<int64_t> dims;
  for (size_t d = 0; d < x.shape.size(); ++d)
    if (rng_.chance(0.5))
      dims.push_back(d);
  if (dims.empty())
    dims.push_back(rng_.below(x.shape.size()));
  bool keep = rng_.chance(0.3);
  Val r = x;
  r.shape.clear();
  for (size_t d = 0; d < x.shape.size(); ++d) {
    bool reduced = std::find(dims.begin(), dims.end(), int64_t(d)) != dims.end();
    if (!reduced)
      r.shape.push_back(x.shape[d]);
    else if (keep)
      r.shape.push_back(1);
  }
  std::vector<std::string> ops = {"reduce_sum", "reduce_max", "reduce_min", "reduce_mean"};
  const std::string &op = rng_.pick(ops);
  // max and min pick an element: exact; sums and (truncated) means are exact
  // on integers only.
  r.exact = x.exact && (op == "reduce_max" || op == "reduce_min" || isInt(x.dtype));
  emit(fmt::format("{} %{} {{dims = {}, keep_dims = {}}}", op, x.name, listText(dims),
                   keep ? "true" : "false"),
       r);
}

void Generator::emitTranspose() {
  Val x = anyValue([](const Val &v) { return v.shape.size() >= 2; }, true);
  if (x.shape.size() < 2)
    return;
  std::vector<int64_t> perm(x.shape.size());
  std::iota(perm.begin(), perm.end(), 0);
  for (size_t i = perm.size() - 1; i > 0; --i)
    std::swap(perm[i], perm[rng_.below(i + 1)]);
  Val r = x;
  for (size_t i = 0; i < perm.size(); ++i)
    r.shape[i] = x.shape[perm[i]];
  emit(fmt::format("transpose %{} {{perm = {}}}", x.name, listText(perm)), r);
}

void Generator::emitReshape() {
  Val x = anyValue({}, true);
  Val r = x;
  size_t d = rng_.below(x.shape.size());
  if (x.shape.size() >= 2 && d + 1 < x.shape.size() && rng_.chance(0.5)) {
    r.shape[d] *= r.shape[d + 1]; // merge d and d+1
    r.shape.erase(r.shape.begin() + d + 1);
  } else {
    int64_t size = x.shape[d], f = 0;
    for (int64_t c = 2; c < size && !f; ++c)
      if (size % c == 0)
        f = c;
    if (!f || x.shape.size() >= 4)
      return; // nothing to split
    r.shape[d] = f;
    r.shape.insert(r.shape.begin() + d + 1, size / f);
  }
  emit(fmt::format("reshape %{}", x.name), r, true);
}

void Generator::emitBroadcast(const Val &x) {
  if (x.shape.size() >= 3)
    return;
  size_t at = rng_.below(x.shape.size() + 1);
  Val r = x;
  r.shape.insert(r.shape.begin() + at, rng_.between(2, 5));
  std::vector<int64_t> dims;
  for (size_t d = 0; d < x.shape.size(); ++d)
    dims.push_back(d < at ? d : d + 1);
  emit(fmt::format("broadcast %{} {{dims = {}}}", x.name, listText(dims)), r, true);
}

void Generator::emitConcatSliceOrPad() {
  Val x = anyValue({}, true);
  Val r = x;
  size_t dim = rng_.below(x.shape.size());
  switch (rng_.below(3)) {
  case 0: {
    if (x.dtype == "i1")
      return; // no i1 operand to invent in a region
    Shape other = x.shape;
    other[dim] = rng_.between(1, options_.maxDim);
    Val b = newOperand(other, x.dtype);
    r.shape[dim] += other[dim];
    r.varies = unite(x, b);
    r.exact = x.exact && b.exact;
    emit(fmt::format("concat %{}, %{} {{dim = {}}}", x.name, b.name, dim), r);
    return;
  }
  case 1: {
    std::vector<int64_t> start, limit, stride;
    for (size_t d = 0; d < x.shape.size(); ++d) {
      int64_t s = rng_.below(x.shape[d]);
      int64_t l = rng_.between(s + 1, x.shape[d]);
      int64_t st = rng_.between(1, 2);
      start.push_back(s);
      limit.push_back(l);
      stride.push_back(st);
      r.shape[d] = (l - s + st - 1) / st;
    }
    emit(fmt::format("slice %{} {{start = {}, limit = {}, stride = {}}}", x.name, listText(start),
                     listText(limit), listText(stride)),
         r);
    return;
  }
  default: {
    if (x.dtype == "i1")
      return;
    std::vector<int64_t> low, high;
    for (size_t d = 0; d < x.shape.size(); ++d) {
      low.push_back(rng_.below(3));
      high.push_back(rng_.below(3));
      r.shape[d] += low.back() + high.back();
    }
    emit(fmt::format("pad %{} {{low = {}, high = {}, value = {}}}", x.name, listText(low),
                     listText(high), isInt(x.dtype) ? "-2" : "0.5"),
         r);
    return;
  }
  }
}

/// constant, iota, random_uniform, random_normal: of `shape` and `dtype`
/// when given (a region's stand-in for a parameter), else random ones.
void Generator::emitCreation(Shape shape, std::string dtype) {
  Val r{"",   shape.empty() ? randomShape() : shape, dtype.empty() ? randomDtype() : dtype,
        true, cur().mesh >= 0 ? cur().mesh : 0,      {},
        {}};
  int kind = static_cast<int>(rng_.below(4));
  if (isInt(r.dtype) && kind >= 2)
    kind = static_cast<int>(rng_.below(2));
  switch (kind) {
  case 0:
    emit(fmt::format("constant dense<{}>", isInt(r.dtype) ? "3" : "0.25"), r, true);
    return;
  case 1:
    emit(fmt::format("iota {{dim = {}}}", rng_.below(r.shape.size())), r, true);
    return;
  case 2:
    emit(fmt::format("random_uniform {{seed = {}, low = -1.0, high = 1.0}}", rng_.below(100)), r,
         true);
    return;
  default:
    emit(fmt::format("random_normal {{seed = {}}}", rng_.below(100)), r, true);
    return;
  }
}

void Generator::emitConvert(const Val &x) {
  Val r = x;
  static const std::vector<std::string> kAll = {"f32", "f64", "i32", "i64"};
  r.dtype = rng_.pick(kAll);
  // float -> int of inexact values would truncate differently.
  if (isFloat(x.dtype) && isInt(r.dtype) && !x.exact)
    r.dtype = x.dtype == "f32" ? "f64" : "f32";
  if (r.dtype == x.dtype)
    return;
  emit(fmt::format("convert %{}", x.name), r, true);
}

void Generator::emitShardingOp(const Val &x) {
  Val r = x;
  if (rng_.chance(0.5)) {
    // On explicit axes an assertion: it names the value's explicit part.
    if (mixed_)
      nextEx_ = x.ex;
    emit(fmt::format("sharding_constraint %{} {}", x.name,
                     sharding(x.shape, x.mesh, rng_.chance(0.5), false, {}, &x.ex)),
         r);
    return;
  }
  if (mixed_) { // reshard names explicit axes only
    Ex target = randomEx(x.shape, explicitHere());
    nextEx_ = target;
    emit(fmt::format("reshard %{} {}", x.name, exText(target, x.shape.size())), r);
    return;
  }
  r.mesh = cur().oneMesh ? home() : static_cast<int>(rng_.below(meshes_.size()));
  emit(fmt::format("reshard %{} {}", x.name, sharding(x.shape, r.mesh, true)), r);
}

} // namespace shardc::difftest
