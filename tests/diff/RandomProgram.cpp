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
  /// A maximal mesh (no axes, one device): that device's id.
  int64_t device = -1;
};

/// A value of @main: its SSA name, type, and whether it is "exact".
struct Val {
  std::string name;
  Shape shape;
  std::string dtype; // f32, f64, i32, i64, i1
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

bool isInt(const std::string &dtype) { return dtype == "i32" || dtype == "i64"; }

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
    // Sometimes one-device (maximal) meshes, any device: values reshard to
    // and from them, and results may live there.
    for (int i = 0; devices > 1 && i < 2 && rng_.chance(0.2); ++i) {
      MeshSpec one{fmt::format("d{}", i), {}, rng_.below(devices)};
      meshes_.push_back(one);
      meshTexts_.push_back(fmt::format("@{} = <[], device_ids=[{}]>", one.name, one.device));
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
    if (mesh.device >= 0) { // maximal: the whole tensor on one device
      // Shardy's only form, dimless. The draw that once chose between it and
      // one `{}` per dim stays, so a seed still makes the same program.
      (void)rng_.chance(0.5);
      return fmt::format("sharding<@{}, []>", mesh.name);
    }
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
    return newParam(randomShape(), rng_.chance(0.15) ? (rng_.chance(0.5) ? "i32" : "i64") : "f32");
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
    switch (rng_.below(17)) {
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
    case 14:
      if (rng_.chance(0.5)) {
        emitManual();
        return;
      }
      [[fallthrough]];
    default:
      emitShardingOp(anyValue());
      return;
    }
  }

  void emitUnary(const Val &x) {
    std::vector<std::string> ops = {"abs", "neg"};
    if (!isInt(x.dtype)) {
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
    if (!isInt(a.dtype) && rng_.chance(0.15)) {
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
    if (!isInt(x.dtype))
      ops.push_back("reduce_mean");
    std::string op = rng_.pick(ops);
    // A max over values that are all negative (a min over all positive ones)
    // sees a wrong padding identity such as 0: one sign of the data, often.
    Val in = x;
    if ((op == "reduce_max" || op == "reduce_min") && rng_.chance(0.4)) {
      in = emit(fmt::format("abs %{}", x.name), x);
      if (op == "reduce_max")
        in = emit(fmt::format("neg %{}", in.name), in);
    }
    emit(fmt::format("{} %{} {{dims = {}, keep_dims = {}}}", op, in.name, listText(dims),
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
                       listText(high), isInt(x.dtype) ? "0" : "0.5"),
           r);
      return;
    }
    }
  }

  void emitCreation() {
    Val r{"", randomShape(), "f32", true, 0};
    switch (rng_.below(4)) {
    case 0:
      if (rng_.chance(0.3))
        r.dtype = rng_.chance(0.5) ? "i32" : "i64";
      emit(fmt::format("constant dense<{}>", isInt(r.dtype) ? "3" : "0.25"), r, true);
      return;
    case 1:
      r.dtype = rng_.pick(std::vector<std::string>{"i32", "i64", "f32", "f64"});
      emit(fmt::format("iota {{dim = {}}}", rng_.below(r.shape.size())), r, true);
      return;
    case 2:
      emit(fmt::format("random_uniform {{seed = {}, low = -1.0, high = 1.0}}", rng_.below(100)), r,
           true);
      return;
    default:
      if (rng_.chance(0.3))
        r.dtype = "f64";
      emit(fmt::format("random_normal {{seed = {}, mean = 0.5, stddev = 0.25}}", rng_.below(100)),
           r, true);
      return;
    }
  }

  void emitConvert(const Val &x) {
    Val r = x;
    if (x.dtype == "f32")
      r.dtype = x.exact && rng_.chance(0.3) ? "i32" : "f64";
    else if (x.dtype == "f64" || isInt(x.dtype))
      r.dtype = "f32";
    else
      return;
    if (r.dtype == "i32")
      return; // float -> int of inexact values would round differently
    emit(fmt::format("convert %{}", x.name), r, true);
  }

  // ---- manual_computation ---------------------------------------------------------
  //
  // A region kind is one generator function: it writes its op and its body's
  // ops at an indent, drawing only on the body's own values. Control flow
  // (for, while, if) will be more functions like this one.

  /// A manual_computation over the first mesh around `x`: its body runs
  /// unary ops, collectives over the manual axes in scope (all_reduce,
  /// collective_permute, axis_index) and sometimes a nested
  /// manual_computation over axes still free.
  void emitManual() {
    std::vector<std::string> free;
    for (const auto &[name, size] : meshes_[0].axes)
      if (size > 1)
        free.push_back(name);
    if (free.empty())
      return;
    Val x = anyValue([](const Val &v) { return v.mesh == 0; });
    if (x.mesh != 0)
      return;
    std::string out;
    std::string result = manual(x.name, x.shape, x.dtype, free, {}, 0, "  ", out);
    body_ += out;
    Val r = x;
    r.name = result;
    r.exact = false;
    pool_.push_back(r);
    ++ops_;
  }

  int64_t axisSize(const std::string &name) const {
    for (const auto &[n, size] : meshes_[0].axes)
      if (n == name)
        return size;
    return 1;
  }

  /// The names of the axes of the first mesh in `set`, in mesh order.
  std::vector<std::string> inMeshOrder(const std::vector<std::string> &set) const {
    std::vector<std::string> out;
    for (const auto &axis : meshes_[0].axes)
      if (std::find(set.begin(), set.end(), axis.first) != set.end())
        out.push_back(axis.first);
    return out;
  }

  static std::string quoted(const std::vector<std::string> &axes) {
    std::vector<std::string> q;
    for (const std::string &a : axes)
      q.push_back("\"" + a + "\"");
    return fmt::format("{{{}}}", fmt::join(q, ", "));
  }

  /// Writes `%r = manual_computation (%operand) ... { ... } : T` into `out`
  /// at `indent`, manual over a non-empty subset of `avail` with `scope`
  /// manual around it; returns %r's name. Its result has `shape`.
  std::string manual(const std::string &operand, const Shape &shape, const std::string &dtype,
                     const std::vector<std::string> &avail, const std::vector<std::string> &scope,
                     int depth, const std::string &indent, std::string &out) {
    std::vector<std::string> manualAxes, rest;
    for (const std::string &a : avail)
      (rng_.chance(0.6) ? manualAxes : rest).push_back(a);
    if (manualAxes.empty()) {
      manualAxes.push_back(rest.back());
      rest.pop_back();
    }
    manualAxes = inMeshOrder(manualAxes);
    // in_sharding = out_sharding: some manual axes on dims they divide.
    Shape local = shape;
    std::vector<std::vector<std::string>> dims(shape.size());
    for (const std::string &a : manualAxes) {
      if (shape.empty() || !rng_.chance(0.7))
        continue; // the body sees this dim whole along `a`
      size_t d = rng_.below(shape.size());
      if (local[d] % axisSize(a) != 0)
        continue;
      local[d] /= axisSize(a);
      dims[d].push_back(a);
    }
    std::vector<std::string> dimTexts;
    for (const auto &axes : dims)
      dimTexts.push_back(quoted(axes));
    std::string sharding =
        fmt::format("sharding<@{}, [{}]>", meshes_[0].name, fmt::join(dimTexts, ", "));
    std::vector<std::string> inScope = scope;
    inScope.insert(inScope.end(), manualAxes.begin(), manualAxes.end());
    inScope = inMeshOrder(inScope);

    const std::string inner = indent + "  ";
    const std::string localType = typeText(local, dtype);
    std::string arg = fresh("m");
    std::string text =
        fmt::format("{}%@RESULT@ = manual_computation (%{}) in_shardings=[{}] out_shardings=[{}] "
                    "manual_axes={} (%{}: {}) {{\n",
                    indent, operand, sharding, sharding, quoted(manualAxes), arg, localType);
    std::string value = arg;
    // Whether the value may differ between instances along a manual axis the
    // out_sharding leaves unsharded: returning it so would be ill-defined (JAX's
    // check_rep rejects it), so the body then reduces over those axes last.
    bool varies = false;
    int steps = static_cast<int>(rng_.between(1, 3));
    for (int i = 0; i < steps; ++i) {
      std::string next = fresh("m");
      switch (rng_.below(depth < 2 && !rest.empty() ? 5 : 4)) {
      case 0:
        text +=
            fmt::format("{}%{} = {} %{} : {}\n", inner, next,
                        isInt(dtype) ? "neg" : rng_.pick(std::vector<std::string>{"tanh", "neg"}),
                        value, localType);
        break;
      case 1: {
        std::vector<std::string> axes;
        for (const std::string &a : inScope)
          if (rng_.chance(0.6))
            axes.push_back(a);
        if (axes.empty())
          axes.push_back(rng_.pick(inScope));
        text += fmt::format("{}%{} = all_reduce %{} {{axes = {}, kind = \"{}\"}} : {}\n", inner,
                            next, value, quoted(axes),
                            rng_.pick(std::vector<std::string>{"sum", "max", "min"}), localType);
        break;
      }
      case 2: {
        int64_t instances = 1;
        for (const std::string &a : inScope)
          instances *= axisSize(a);
        std::vector<int64_t> perm(instances);
        std::iota(perm.begin(), perm.end(), 0);
        for (int64_t k = instances - 1; k > 0; --k)
          std::swap(perm[k], perm[rng_.below(k + 1)]);
        std::vector<std::string> pairs;
        for (int64_t k = 0; k < instances; ++k)
          pairs.push_back(fmt::format("[{}, {}]", k, perm[k]));
        text += fmt::format("{}%{} = collective_permute %{} {{pairs = [{}]}} : {}\n", inner, next,
                            value, fmt::join(pairs, ", "), localType);
        varies = true;
        break;
      }
      case 3: {
        std::string index = fresh("m"), cast = fresh("m");
        text += fmt::format("{}%{} = axis_index {{axis = \"{}\"}} : tensor<i32>\n", inner, index,
                            rng_.pick(inScope));
        std::string scalar = index;
        if (dtype != "i32") {
          text +=
              fmt::format("{}%{} = convert %{} : {}\n", inner, cast, index, typeText({}, dtype));
          scalar = cast;
        }
        text += fmt::format("{}%{} = add %{}, %{} : {}\n", inner, next, value, scalar, localType);
        varies = true;
        break;
      }
      default:
        next = manual(value, local, dtype, rest, inScope, depth + 1, inner, text);
        varies = true;
        break;
      }
      value = next;
    }
    std::vector<std::string> unsharded;
    for (const std::string &a : manualAxes)
      if (std::none_of(dims.begin(), dims.end(), [&](const std::vector<std::string> &axes) {
            return std::find(axes.begin(), axes.end(), a) != axes.end();
          }))
        unsharded.push_back(a);
    if (varies && !unsharded.empty()) {
      std::string uniform = fresh("m");
      text += fmt::format("{}%{} = all_reduce %{} {{axes = {}, kind = \"max\"}} : {}\n", inner,
                          uniform, value, quoted(unsharded), localType);
      value = uniform;
    }
    text += fmt::format("{}return %{}\n{}}} : {}\n", inner, value, indent, typeText(shape, dtype));
    // Named last, so that the result's number follows its body's.
    std::string result = fresh("v");
    text.replace(text.find("@RESULT@"), 8, result);
    out += text;
    return result;
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
