// The random program generator: builds @main op by op from a pool of typed
// values, drawing operands from the pool (or inventing a parameter of the
// right shape when none fits), so every program type-checks by construction.
//
// Numerics are kept comparable: the partitioned program sums in another
// order than the global one, so ops that are discontinuous (floor, sign,
// comparisons) or that amplify tiny differences (exp of a large sum) only
// read "exact" values, those computed without any reduction or contraction.
#include "tests/diff/RandomProgram.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace shardc::difftest {
namespace {

/// splitmix64: tiny, fast and the same everywhere (std distributions are not).
class Rng {
public:
  explicit Rng(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 0x1234567ull) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n).
  int64_t below(int64_t n) { return n <= 1 ? 0 : static_cast<int64_t>(next() % n); }
  int64_t between(int64_t lo, int64_t hi) { return lo + below(hi - lo + 1); }
  bool chance(double p) { return (next() >> 11) * 0x1.0p-53 < p; }
  template <class T> const T &pick(const std::vector<T> &v) { return v[below(v.size())]; }

private:
  uint64_t state_;
};

using Shape = std::vector<int64_t>;

struct MeshSpec {
  std::string name;
  std::vector<std::pair<std::string, int64_t>> axes;
};

/// A value of @main: its SSA name, type, and whether it is "exact".
struct Val {
  std::string name;
  Shape shape;
  std::string dtype; // f32, f64, i32, i1
  bool exact = true;
  int mesh = 0; // index into Generator::meshes_ of the mesh it was last pinned on
};

std::string typeText(const Shape &shape, const std::string &dtype) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += fmt::format("{}x", d);
  return s + dtype + ">";
}

std::string listText(const std::vector<int64_t> &v) {
  return fmt::format("[{}]", fmt::join(v, ", "));
}

int64_t product(const Shape &s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
}

class Generator {
public:
  Generator(uint64_t seed, const ProgramOptions &options) : rng_(seed), options_(options) {}

  std::string run() {
    makeMeshes();
    int target = static_cast<int>(rng_.between(1, options_.maxOps));
    for (int attempts = 0; ops_ < target && attempts < 20 * target; ++attempts)
      step();
    if (ops_ == 0)
      emitUnary(newParam(randomShape(), "f32"));
    return assemble();
  }

private:
  Rng rng_;
  ProgramOptions options_;
  std::vector<MeshSpec> meshes_;
  std::vector<std::string> meshTexts_;
  std::vector<std::string> params_;
  std::vector<Val> pool_;
  std::string body_;
  int ops_ = 0;
  int names_ = 0;

  // ---- meshes and shardings -------------------------------------------------

  void makeMeshes() {
    static const std::vector<std::vector<int64_t>> kShapes = {
        {2}, {4}, {8}, {3}, {2, 2}, {2, 4}, {4, 2}, {2, 3}, {2, 2, 2}, {1, 4}};
    const std::vector<int64_t> &sizes = rng_.pick(kShapes);
    static const char *kNames[] = {"x", "y", "z"};
    MeshSpec mesh{"m", {}};
    for (size_t i = 0; i < sizes.size(); ++i)
      mesh.axes.emplace_back(kNames[i], sizes[i]);
    meshes_.push_back(mesh);
    meshTexts_.push_back(meshText(mesh, rng_.chance(0.2)));
    int64_t devices = product(sizes);
    // Sometimes a second mesh over the same devices in another order: values
    // move there through reshard and the partitioner must move their data.
    if (devices >= 4 && rng_.chance(0.25)) {
      MeshSpec other{"m2", {{"a", devices / 2}, {"b", 2}}};
      meshes_.push_back(other);
      meshTexts_.push_back(meshText(other, true));
    }
  }

  std::string meshText(const MeshSpec &mesh, bool permuted) {
    std::vector<std::string> axes;
    int64_t devices = 1;
    for (const auto &[name, size] : mesh.axes) {
      axes.push_back(fmt::format("\"{}\"={}", name, size));
      devices *= size;
    }
    std::string text = fmt::format("@{} = <[{}]", mesh.name, fmt::join(axes, ", "));
    if (permuted) {
      std::vector<int64_t> ids(devices);
      std::iota(ids.begin(), ids.end(), 0);
      for (int64_t i = devices - 1; i > 0; --i)
        std::swap(ids[i], ids[rng_.below(i + 1)]);
      text += fmt::format(", device_ids={}", listText(ids));
    }
    return text + ">";
  }

  /// One axis or sub-axis `"x":(pre)size`, with the range of the pre-size
  /// coordinate it covers, [pre, pre*size).
  struct Piece {
    std::string text;
    std::string axis;
    int64_t lo, hi;
  };

  std::vector<Piece> pieces(const MeshSpec &mesh) {
    std::vector<Piece> out;
    for (const auto &[name, size] : mesh.axes) {
      if (size == 1)
        continue;
      out.push_back({fmt::format("\"{}\"", name), name, 1, size});
      for (int64_t pre = 1; pre < size; pre *= 2)
        for (int64_t k = 2; pre * k <= size && k < size; k *= 2)
          if (size % (pre * k) == 0)
            out.push_back({fmt::format("\"{}\":({}){}", name, pre, k), name, pre, pre * k});
    }
    return out;
  }

  /// A random sharding of `shape` on mesh `meshIndex`. Closed when `closed`;
  /// otherwise dims may be open, and `priorities` allows `p0`/`p1`.
  std::string sharding(const Shape &shape, int meshIndex, bool closed, bool priorities = false) {
    const MeshSpec &mesh = meshes_[meshIndex];
    std::vector<Piece> all = pieces(mesh);
    std::vector<Piece> used;
    auto fits = [&](const Piece &p) {
      for (const Piece &u : used)
        if (u.axis == p.axis && p.lo < u.hi && u.lo < p.hi)
          return false;
      return true;
    };
    std::vector<std::string> dims;
    for (size_t d = 0; d < shape.size(); ++d) {
      std::vector<std::string> axes;
      std::vector<std::string> axisNames;
      int wanted = all.empty() ? 0 : rng_.chance(0.5) ? (rng_.chance(0.2) ? 2 : 1) : 0;
      for (int tries = 0; tries < 6 && static_cast<int>(axes.size()) < wanted; ++tries) {
        const Piece &p = rng_.pick(all);
        if (!fits(p) || std::find(axisNames.begin(), axisNames.end(), p.axis) != axisNames.end())
          continue;
        used.push_back(p);
        axes.push_back(p.text);
        axisNames.push_back(p.axis);
      }
      bool open = !closed && rng_.chance(0.25);
      if (open)
        axes.push_back("?");
      std::string dim = fmt::format("{{{}}}", fmt::join(axes, ", "));
      if (priorities && (open || !axes.empty()) && rng_.chance(0.15))
        dim += fmt::format("p{}", rng_.below(2));
      dims.push_back(dim);
    }
    // Explicitly replicated: full axes this tensor does not use, in mesh order.
    std::vector<std::string> replicated;
    for (const auto &[name, size] : mesh.axes) {
      bool touched = std::any_of(used.begin(), used.end(),
                                 [&, n = name](const Piece &p) { return p.axis == n; });
      if (!touched && size > 1 && rng_.chance(0.12))
        replicated.push_back(fmt::format("\"{}\"", name));
    }
    std::string text = fmt::format("sharding<@{}, [{}]", mesh.name, fmt::join(dims, ", "));
    if (!replicated.empty())
      text += fmt::format(", replicated={{{}}}", fmt::join(replicated, ", "));
    return text + ">";
  }

  // ---- the value pool ---------------------------------------------------------

  Shape randomShape(int minRank = 1, int maxRank = 3) {
    Shape s(rng_.between(minRank, maxRank));
    for (int64_t &d : s)
      d = rng_.chance(0.1) ? 1 : rng_.between(2, options_.maxDim);
    return s;
  }

  std::string fresh(const char *prefix) { return fmt::format("{}{}", prefix, names_++); }

  Val newParam(const Shape &shape, const std::string &dtype) {
    Val v{fresh("p"), shape, dtype, true, 0};
    std::string text = fmt::format("%{}: {}", v.name, typeText(shape, dtype));
    if (rng_.chance(0.6))
      text += " " + sharding(shape, 0, rng_.chance(0.5), true);
    params_.push_back(text);
    pool_.push_back(v);
    return v;
  }

  /// A pool value of rank 1 or more matching `want`, or a new f32 (sometimes
  /// i32) parameter.
  Val anyValue(bool (*want)(const Val &) = nullptr) {
    std::vector<Val> fits;
    for (const Val &v : pool_)
      if (v.dtype != "i1" && !v.shape.empty() && (!want || want(v)))
        fits.push_back(v);
    if (!fits.empty() && rng_.chance(0.8))
      return rng_.pick(fits);
    return newParam(randomShape(), rng_.chance(0.15) ? "i32" : "f32");
  }

  /// Writes `%name = rhs [: type [sharding]]` and adds the result to the pool.
  Val emit(const std::string &rhs, Val result, bool writeType = false) {
    result.name = fresh("v");
    std::string line = fmt::format("  %{} = {}", result.name, rhs);
    bool outSharding = rng_.chance(0.15);
    if (writeType || outSharding)
      line += " : " + typeText(result.shape, result.dtype);
    if (outSharding)
      line += " " + sharding(result.shape, result.mesh, rng_.chance(0.6));
    body_ += line + "\n";
    pool_.push_back(result);
    ++ops_;
    return result;
  }

  // ---- ops ------------------------------------------------------------------

  void step() {
    switch (rng_.below(16)) {
    case 0:
    case 1:
      emitUnary(anyValue());
      return;
    case 2:
    case 3:
      emitBinary(anyValue());
      return;
    case 4:
      emitSelect();
      return;
    case 5:
    case 6:
      emitContraction();
      return;
    case 7:
      emitReduction(anyValue());
      return;
    case 8:
      emitTranspose();
      return;
    case 9:
      emitReshape();
      return;
    case 10:
      emitBroadcast(anyValue());
      return;
    case 11:
      emitConcatSliceOrPad();
      return;
    case 12:
      emitCreation();
      return;
    case 13:
      emitConvert(anyValue());
      return;
    default:
      emitShardingOp(anyValue());
      return;
    }
  }

  void emitUnary(const Val &x) {
    std::vector<std::string> ops = {"abs", "neg"};
    if (x.dtype != "i32") {
      for (const char *op : {"tanh", "sigmoid", "relu", "sin", "cos", "erf"})
        ops.push_back(op);
      if (x.exact)
        for (const char *op : {"exp", "floor", "ceil", "round", "sign"})
          ops.push_back(op);
    }
    Val r = x;
    emit(fmt::format("{} %{}", rng_.pick(ops), x.name), r);
  }

  /// A shape `b` broadcasts with `a` to `a`: a suffix of `a` with some dims 1.
  Shape broadcastable(const Shape &a) {
    Shape b(a.end() - rng_.below(a.size() + 1), a.end());
    for (int64_t &d : b)
      if (rng_.chance(0.3))
        d = 1;
    return b;
  }

  void emitBinary(const Val &a) {
    Val b;
    bool found = false;
    for (const Val &v : pool_)
      if (v.dtype == a.dtype && v.shape == a.shape && v.name != a.name && rng_.chance(0.5)) {
        b = v;
        found = true;
      }
    if (!found)
      b = newParam(rng_.chance(0.5) ? a.shape : broadcastable(a.shape), a.dtype);
    std::vector<std::string> ops = {"add", "sub", "mul", "max", "min"};
    Val r = a;
    r.exact = a.exact && b.exact;
    if (a.dtype != "i32" && rng_.chance(0.15)) {
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

  void emitSelect() {
    Val a = anyValue([](const Val &v) { return v.exact; });
    if (!a.exact)
      return;
    Val b = newParam(a.shape, a.dtype);
    static const std::vector<std::string> kCompare = {"lt", "le", "gt", "ge", "eq", "ne"};
    Val c = a;
    c.dtype = "i1";
    c = emit(fmt::format("{} %{}, %{}", rng_.pick(kCompare), a.name, b.name), c);
    emit(fmt::format("select %{}, %{}, %{}", c.name, a.name, b.name), a);
  }

  void emitContraction() {
    Val a = anyValue([](const Val &v) { return v.shape.size() == 2 || v.shape.size() == 3; });
    if (a.shape.size() < 2 || a.shape.size() > 3)
      return;
    bool batched = a.shape.size() == 3;
    int64_t k = a.shape.back();
    int64_t n = rng_.between(1, options_.maxDim);
    Shape bShape = batched ? Shape{a.shape[0], k, n} : Shape{k, n};
    Val b = newParam(bShape, a.dtype);
    Val r = a;
    r.exact = false;
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
      Val c = newParam({a.shape[0], n}, a.dtype);
      r.shape = {a.shape[0], a.shape[1], n};
      emit(fmt::format("einsum \"ij,ik->ijk\" (%{}, %{})", a.name, c.name), r);
      return;
    }
    }
  }

  void emitReduction(const Val &x) {
    std::vector<int64_t> dims;
    for (size_t d = 0; d < x.shape.size(); ++d)
      if (rng_.chance(0.5))
        dims.push_back(d);
    if (dims.empty())
      dims.push_back(rng_.below(x.shape.size()));
    bool keep = rng_.chance(0.3);
    Val r = x;
    r.exact = false;
    r.shape.clear();
    for (size_t d = 0; d < x.shape.size(); ++d) {
      bool reduced = std::find(dims.begin(), dims.end(), int64_t(d)) != dims.end();
      if (!reduced)
        r.shape.push_back(x.shape[d]);
      else if (keep)
        r.shape.push_back(1);
    }
    std::vector<std::string> ops = {"reduce_sum", "reduce_max", "reduce_min"};
    if (x.dtype != "i32")
      ops.push_back("reduce_mean");
    emit(fmt::format("{} %{} {{dims = {}, keep_dims = {}}}", rng_.pick(ops), x.name, listText(dims),
                     keep ? "true" : "false"),
         r);
  }

  void emitTranspose() {
    Val x = anyValue([](const Val &v) { return v.shape.size() >= 2; });
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

  void emitReshape() {
    Val x = anyValue();
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

  void emitBroadcast(const Val &x) {
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

  void emitConcatSliceOrPad() {
    Val x = anyValue();
    Val r = x;
    size_t dim = rng_.below(x.shape.size());
    switch (rng_.below(3)) {
    case 0: {
      Shape other = x.shape;
      other[dim] = rng_.between(1, options_.maxDim);
      Val b = newParam(other, x.dtype);
      r.shape[dim] += other[dim];
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
      std::vector<int64_t> low, high;
      for (size_t d = 0; d < x.shape.size(); ++d) {
        low.push_back(rng_.below(3));
        high.push_back(rng_.below(3));
        r.shape[d] += low.back() + high.back();
      }
      emit(fmt::format("pad %{} {{low = {}, high = {}, value = {}}}", x.name, listText(low),
                       listText(high), x.dtype == "i32" ? "0" : "0.5"),
           r);
      return;
    }
    }
  }

  void emitCreation() {
    Val r{"", randomShape(), "f32", true, 0};
    switch (rng_.below(3)) {
    case 0:
      if (rng_.chance(0.3))
        r.dtype = "i32";
      emit(fmt::format("constant dense<{}>", r.dtype == "i32" ? "3" : "0.25"), r, true);
      return;
    case 1:
      r.dtype = rng_.chance(0.5) ? "i32" : "f32";
      emit(fmt::format("iota {{dim = {}}}", rng_.below(r.shape.size())), r, true);
      return;
    default:
      emit(fmt::format("random_uniform {{seed = {}, low = -1.0, high = 1.0}}", rng_.below(100)), r,
           true);
      return;
    }
  }

  void emitConvert(const Val &x) {
    Val r = x;
    if (x.dtype == "f32")
      r.dtype = x.exact && rng_.chance(0.3) ? "i32" : "f64";
    else if (x.dtype == "f64" || x.dtype == "i32")
      r.dtype = "f32";
    else
      return;
    if (r.dtype == "i32")
      return; // float -> int of inexact values would round differently
    emit(fmt::format("convert %{}", x.name), r, true);
  }

  void emitShardingOp(const Val &x) {
    Val r = x;
    if (rng_.chance(0.5)) {
      emit(fmt::format("sharding_constraint %{} {}", x.name,
                       sharding(x.shape, x.mesh, rng_.chance(0.5))),
           r);
      return;
    }
    r.mesh = static_cast<int>(rng_.below(meshes_.size()));
    emit(fmt::format("reshard %{} {}", x.name, sharding(x.shape, r.mesh, true)), r);
  }

  // ---- the program ------------------------------------------------------------

  std::string assemble() {
    std::vector<Val> results;
    for (auto it = pool_.rbegin(); it != pool_.rend() && results.size() < 2; ++it)
      if (it->name[0] == 'v' && (results.empty() || rng_.chance(0.5)))
        results.push_back(*it);
    std::vector<std::string> types, names;
    for (const Val &v : results) {
      std::string t = typeText(v.shape, v.dtype);
      if (v.dtype != "i1" && rng_.chance(0.35))
        t += " " + sharding(v.shape, v.mesh, true);
      types.push_back(t);
      names.push_back("%" + v.name);
    }
    std::string text;
    for (const std::string &mesh : meshTexts_)
      text += mesh + "\n";
    text += fmt::format("func @main({}) -> ({}) {{\n", fmt::join(params_, ",\n    "),
                        fmt::join(types, ", "));
    text += body_;
    text += fmt::format("  return {}\n}}\n", fmt::join(names, ", "));
    return text;
  }
};

} // namespace

std::string generateProgram(uint64_t seed, const ProgramOptions &options) {
  return Generator(seed, options).run();
}

} // namespace shardc::difftest
