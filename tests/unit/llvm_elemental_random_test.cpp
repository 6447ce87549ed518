// Random programs for the LLVM backend's elemental lowering: chains of
// elementwise, shape and reduction ops over a few parameters, with values
// used once (fused) or several times (materialized), JIT-compiled and
// compared with the interpreter. f32 programs use only continuous ops (no
// floor, sign or comparisons, which would turn an ulp of difference in a
// transcendental function into a different answer); i32 programs must match
// exactly.
#include "LlvmElementalHarness.h"

#include <fmt/format.h>

#include <random>

using namespace shardc;
using namespace shardc::testing;

namespace {

struct RandomValue {
  std::string name;
  std::vector<int64_t> shape;
};

std::string typeText(const std::vector<int64_t> &shape, const std::string &dtype) {
  std::string text = "tensor<";
  for (int64_t d : shape)
    text += std::to_string(d) + "x";
  return text + dtype + ">";
}

std::string listText(const std::vector<int64_t> &values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

/// numpy broadcasting of two shapes; false when incompatible.
bool broadcastShapes(std::vector<int64_t> a, std::vector<int64_t> b, std::vector<int64_t> &out) {
  if (a.size() < b.size())
    std::swap(a, b);
  out = a;
  size_t offset = a.size() - b.size();
  for (size_t d = 0; d < b.size(); ++d) {
    int64_t &s = out[offset + d];
    if (s == 1)
      s = b[d];
    else if (b[d] != 1 && b[d] != s)
      return false;
  }
  return true;
}

class ProgramGenerator {
public:
  ProgramGenerator(uint64_t seed, bool integers) : rng_(seed), integers_(integers) {}

  std::string generate() {
    std::string dtype = integers_ ? "i32" : "f32", params;
    for (int p = 0; p < 3; ++p) {
      std::vector<int64_t> shape;
      for (int64_t d = 0, rank = pick(1, 3); d < rank; ++d)
        shape.push_back(pick(1, 6));
      if (p == 1 && chance(2)) // a trailing sub-shape of the first: broadcasts
        shape.assign(values_[0].shape.begin() + 1, values_[0].shape.end());
      std::string name = "p" + std::to_string(p);
      params += (p ? ", %" : "%") + name + ": " + typeText(shape, dtype);
      values_.push_back({name, shape});
    }
    for (int i = 0, n = static_cast<int>(pick(3, 12)); i < n; ++i)
      addOp(dtype);
    const RandomValue &last = values_.back();
    const RandomValue &other = values_[pick(3, values_.size() - 1)];
    return program(params, body_ + "return %" + last.name + ", %" + other.name,
                   "(" + typeText(last.shape, dtype) + ", " + typeText(other.shape, dtype) + ")");
  }

private:
  std::mt19937_64 rng_;
  bool integers_;
  std::vector<RandomValue> values_;
  std::string body_;

  int64_t pick(int64_t lo, int64_t hi) { // inclusive
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool chance(int oneIn) { return pick(1, oneIn) == 1; }
  const RandomValue &anyValue() { return values_[pick(0, values_.size() - 1)]; }

  void define(const std::string &text, std::vector<int64_t> shape) {
    std::string name = "v" + std::to_string(values_.size());
    body_ += "%" + name + " = " + text + "\n";
    values_.push_back({name, std::move(shape)});
  }

  void addOp(const std::string &dtype) {
    RandomValue x = anyValue();
    size_t rank = x.shape.size();
    switch (pick(0, 8)) {
    case 0: { // unary
      static const char *floatOps[] = {"tanh", "sigmoid", "sin", "cos", "abs", "neg", "relu"};
      static const char *intOps[] = {"abs", "neg", "relu", "not"};
      const char *op = integers_ ? intOps[pick(0, 3)] : floatOps[pick(0, 6)];
      define(fmt::format("{} %{}", op, x.name), x.shape);
      return;
    }
    case 1:
    case 2: { // binary, numpy broadcasting
      static const char *ops[] = {"add", "sub", "mul", "max", "min"};
      RandomValue y = anyValue();
      std::vector<int64_t> shape;
      if (!broadcastShapes(x.shape, y.shape, shape)) {
        y = x;
        shape = x.shape;
      }
      define(fmt::format("{} %{}, %{}", ops[pick(0, 4)], x.name, y.name), shape);
      return;
    }
    case 3: { // transpose
      std::vector<int64_t> perm(rank), shape;
      for (size_t d = 0; d < rank; ++d)
        perm[d] = static_cast<int64_t>(d);
      std::shuffle(perm.begin(), perm.end(), rng_);
      for (int64_t p : perm)
        shape.push_back(x.shape[p]);
      define(fmt::format("transpose %{} {{perm = {}}}", x.name, listText(perm)), shape);
      return;
    }
    case 4: { // reshape: flatten, or split the first dim
      std::vector<int64_t> shape = {1};
      for (int64_t d : x.shape)
        shape[0] *= d;
      if (rank > 0 && chance(2) && x.shape[0] % 2 == 0) {
        shape = x.shape;
        shape[0] /= 2;
        shape.insert(shape.begin(), 2);
      }
      define(fmt::format("reshape %{} : {}", x.name, typeText(shape, dtype)), shape);
      return;
    }
    case 5: { // strided slice, or pad
      std::vector<int64_t> start, limit, stride, shape;
      for (int64_t d : x.shape) {
        start.push_back(pick(0, d - 1));
        limit.push_back(pick(start.back() + 1, d));
        stride.push_back(pick(1, 2));
        shape.push_back((limit.back() - start.back() + stride.back() - 1) / stride.back());
      }
      if (chance(2)) {
        define(fmt::format("slice %{} {{start = {}, limit = {}, stride = {}}}", x.name,
                           listText(start), listText(limit), listText(stride)),
               shape);
        return;
      }
      std::vector<int64_t> low, high;
      shape = x.shape;
      for (int64_t &d : shape) {
        low.push_back(pick(0, 2));
        high.push_back(pick(0, 2));
        d += low.back() + high.back();
      }
      define(fmt::format("pad %{} {{low = {}, high = {}, value = {}}}", x.name, listText(low),
                         listText(high), integers_ ? "3" : "0.5"),
             shape);
      return;
    }
    case 6: { // concat with a value of the same shape (or itself)
      if (rank == 0)
        return;
      RandomValue y = x;
      for (const RandomValue &v : values_)
        if (v.shape == x.shape && chance(2))
          y = v;
      int64_t dim = pick(0, rank - 1);
      std::vector<int64_t> shape = x.shape;
      shape[dim] *= 2;
      define(fmt::format("concat %{}, %{} {{dim = {}}}", x.name, y.name, dim), shape);
      return;
    }
    case 7: { // broadcast into a new dim
      size_t at = pick(0, rank);
      std::vector<int64_t> shape = x.shape, dims;
      shape.insert(shape.begin() + at, pick(2, 4));
      for (size_t d = 0; d <= rank; ++d)
        if (d != at)
          dims.push_back(static_cast<int64_t>(d));
      define(fmt::format("broadcast %{} {{dims = {}}} : {}", x.name, listText(dims),
                         typeText(shape, dtype)),
             shape);
      return;
    }
    default: { // reduction over a random non-empty subset of dims
      static const char *ops[] = {"reduce_sum", "reduce_max", "reduce_min", "reduce_mean"};
      std::vector<int64_t> dims, shape;
      bool keep = chance(2);
      for (size_t d = 0; d < rank; ++d) {
        bool reduced = chance(2) || (dims.empty() && d + 1 == rank);
        if (reduced)
          dims.push_back(static_cast<int64_t>(d));
        if (!reduced || keep)
          shape.push_back(reduced ? 1 : x.shape[d]);
      }
      define(fmt::format("{} %{} {{dims = {}, keep_dims = {}}}", ops[pick(0, integers_ ? 2 : 3)],
                         x.name, listText(dims), keep),
             shape);
      return;
    }
    }
  }
};

} // namespace

TEST_CASE("llvm elemental: random f32 programs match the interpreter", "[llvm]") {
  for (uint64_t seed = 0; seed < 60; ++seed) {
    INFO("seed " << seed);
    checkRandom(ProgramGenerator(seed, false).generate(), 1e-5, 1e-5);
  }
}

TEST_CASE("llvm elemental: random i32 programs match the interpreter exactly", "[llvm]") {
  for (uint64_t seed = 0; seed < 60; ++seed) {
    INFO("seed " << seed);
    checkRandom(ProgramGenerator(seed, true).generate(), 0, 0);
  }
}
