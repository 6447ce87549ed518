// The random program generator: meshes, shardings, the pool of typed values
// and the program text. Ops come from RandomOps.cpp, regions from
// RandomRegions.cpp; every operand is drawn from the pool (or invented as a
// parameter of the right shape when none fits), so every program
// type-checks by construction.
//
// Numerics are kept comparable: the partitioned program sums in another
// order than the global one, so ops that are discontinuous (floor, sign,
// comparisons) or that amplify tiny differences (exp of a large sum) only
// read "exact" values, those computed without any reduction or contraction.
#include "tests/diff/RandomProgramInternal.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace shardc::difftest {

bool MeshSpec::hasSplitAxis() const {
  return std::any_of(axes.begin(), axes.end(), [](const auto &a) { return a.second > 1; });
}

bool isFloat(const std::string &dtype) { return dtype == "f32" || dtype == "f64"; }
bool isInt(const std::string &dtype) { return dtype == "i32" || dtype == "i64"; }

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

std::string Generator::run() {
  makeMeshes();
  scopes_.push_back(Scope{});
  cur().explicitAxes = meshes_[0].explicitAxes;
  // Control flow runs inside one per-device body, whose values must all be
  // on one mesh; and propagation carries an open value onto the mesh of any
  // user. So a program with loops and branches keeps every value on its
  // first mesh (the others, if any, stay unused); the rest move between
  // meshes and have no control flow.
  cur().oneMesh = meshes_.size() == 1 || rng_.chance(0.5);
  int target = static_cast<int>(rng_.between(1, options_.maxOps));
  for (int attempts = 0; ops_ < target && attempts < 20 * target; ++attempts)
    step();
  if (ops_ == 0)
    emitUnary(newParam(randomShape(), "f32"));
  return assemble();
}

// ---- meshes and shardings ---------------------------------------------------

void Generator::makeMeshes() {
  // The device count: 1, 2, 4 and 8 (the MPI sample's rank counts) most often.
  static const std::vector<int64_t> kDevices = {1, 2, 2, 4, 4, 4, 8, 8, 8, 3, 6};
  devices_ = rng_.pick(kDevices);
  static const std::vector<std::vector<int64_t>> kShapes = {
      {1},    {2},    {4},    {8},    {3},       {6},    {2, 2},
      {2, 4}, {4, 2}, {2, 3}, {3, 2}, {2, 2, 2}, {1, 4}, {4, 1, 2}};
  std::vector<std::vector<int64_t>> fits;
  for (const auto &s : kShapes)
    if (product(s) == devices_)
      fits.push_back(s);
  static const char *kNames[] = {"x", "y", "z"};
  auto permuted = [&]() {
    std::vector<int64_t> ids(devices_);
    std::iota(ids.begin(), ids.end(), 0);
    for (int64_t i = devices_ - 1; i > 0; --i)
      std::swap(ids[i], ids[rng_.below(i + 1)]);
    return ids;
  };
  if (devices_ == 1 && rng_.chance(0.4)) {
    meshes_.push_back({"m", {}, {0}, {}}); // a one-device program on a maximal mesh
  } else {
    const std::vector<int64_t> &sizes = rng_.pick(fits);
    MeshSpec mesh{"m", {}, {}, {}};
    for (size_t i = 0; i < sizes.size(); ++i)
      mesh.axes.emplace_back(kNames[i], sizes[i]);
    if (devices_ > 1 && rng_.chance(0.2))
      mesh.ids = permuted();
    meshes_.push_back(mesh);
    chooseAxisTypes();
    if (mixed_)
      return; // one mesh: values on meshes without types would need reshards
  }
  // A second mesh over the same devices in another order and shape: values
  // move there through reshard and the partitioner must move their data.
  if (devices_ >= 4 && rng_.chance(0.3)) {
    const std::vector<int64_t> &sizes = rng_.pick(fits);
    MeshSpec other{"m2", {}, permuted(), {}};
    static const char *kOther[] = {"a", "b", "c"};
    for (size_t i = 0; i < sizes.size(); ++i)
      other.axes.emplace_back(kOther[i], sizes[i]);
    meshes_.push_back(other);
  }
  // One-device (maximal) meshes, and sometimes the empty mesh.
  for (int k = rng_.chance(0.35) ? static_cast<int>(rng_.between(1, 2)) : 0; k > 0; --k) {
    int64_t id = rng_.below(devices_);
    std::string name = fmt::format("d{}", id);
    if (std::none_of(meshes_.begin(), meshes_.end(),
                     [&](const MeshSpec &m) { return m.name == name; }))
      meshes_.push_back({name, {}, {id}, {}});
  }
  if (rng_.chance(0.08))
    meshes_.push_back({"e", {}, {}, {}});
}

std::string Generator::meshText(const MeshSpec &mesh) {
  std::vector<std::string> axes;
  for (const auto &[name, size] : mesh.axes)
    axes.push_back(fmt::format("\"{}\"={}", name, size));
  std::string text = fmt::format("@{} = <[{}]", mesh.name, fmt::join(axes, ", "));
  if (!mesh.ids.empty())
    text += fmt::format(", device_ids={}", listText(mesh.ids));
  if (mesh.typed) {
    std::vector<std::string> types;
    for (const auto &axis : mesh.axes)
      types.push_back(mesh.explicitAxes.count(axis.first) ? "explicit" : "auto");
    text += fmt::format(", axis_types=[{}]", fmt::join(types, ", "));
  }
  return text + ">";
}

namespace {

/// One axis or sub-axis `"x":(pre)size`, with the range of the pre-size
/// coordinate it covers, [pre, pre*size).
struct Piece {
  std::string text;
  std::string axis;
  int64_t lo, hi;
};

std::vector<Piece> pieces(const MeshSpec &mesh, const std::set<std::string> &exclude) {
  std::vector<Piece> out;
  for (const auto &[name, size] : mesh.axes) {
    if (size == 1 || exclude.count(name))
      continue;
    out.push_back({fmt::format("\"{}\"", name), name, 1, size});
    for (int64_t pre = 1; pre < size; pre *= 2)
      for (int64_t k = 2; pre * k <= size && k < size; k *= 2)
        if (size % (pre * k) == 0)
          out.push_back({fmt::format("\"{}\":({}){}", name, pre, k), name, pre, pre * k});
  }
  return out;
}

} // namespace

std::string names(const std::vector<Val> &values) {
  std::vector<std::string> out;
  for (const Val &v : values)
    out.push_back("%" + v.name);
  return fmt::format("{}", fmt::join(out, ", "));
}

/// A random sharding of `shape` on mesh `meshIndex` that names no axis of
/// `exclude`. Closed when `closed`; otherwise dims may be open, and
/// `priorities` allows `p0`/`p1`. On a mesh with axis types, the axes
/// explicit here are written as `ex` gives them (none when null), each dim's
/// major-most, and the random part names auto axes only.
std::string Generator::sharding(const Shape &shape, int meshIndex, bool closed, bool priorities,
                                const std::set<std::string> &excludeGiven, const Ex *ex) {
  std::set<std::string> exclude = excludeGiven;
  if (mixed_ && meshIndex == 0) {
    for (const std::string &axis : explicitHere())
      exclude.insert(axis);
    // Every axis explicit: the --explicit rules, where open dims and
    // priorities are errors.
    if (meshes_[0].explicitAxes.size() == meshes_[0].axes.size()) {
      closed = true;
      priorities = false;
    }
  }
  const MeshSpec &mesh = meshes_[meshIndex];
  // A maximal mesh (no axes, one device) takes no dim shardings (Shardy's
  // verifier): `sharding<@d, []>` whatever the rank.
  if (mesh.axes.empty() && mesh.ids.size() == 1)
    return fmt::format("sharding<@{}, []>", mesh.name);
  std::vector<Piece> all = pieces(mesh, exclude);
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
    if (mixed_ && ex && d < ex->size())
      for (const std::string &axis : (*ex)[d])
        axes.push_back(fmt::format("\"{}\"", axis));
    int wanted = all.empty() ? 0 : rng_.chance(0.5) ? (rng_.chance(0.2) ? 2 : 1) : 0;
    wanted += static_cast<int>(axes.size());
    for (int tries = 0; tries < 6 && static_cast<int>(axes.size()) < wanted; ++tries) {
      const Piece &p = rng_.pick(all);
      if (!fits(p) || std::find(axisNames.begin(), axisNames.end(), p.axis) != axisNames.end())
        continue;
      used.push_back(p);
      axes.push_back(p.text);
      axisNames.push_back(p.axis);
    }
    bool open = !closed && !all.empty() && rng_.chance(0.25);
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
    if (!touched && size > 1 && !exclude.count(name) && rng_.chance(0.12))
      replicated.push_back(fmt::format("\"{}\"", name));
  }
  std::string text = fmt::format("sharding<@{}, [{}]", mesh.name, fmt::join(dims, ", "));
  if (!replicated.empty())
    text += fmt::format(", replicated={{{}}}", fmt::join(replicated, ", "));
  return text + ">";
}

// ---- the value pool -----------------------------------------------------------

Shape Generator::randomShape(int minRank, int maxRank) {
  Shape s(rng_.between(minRank, maxRank));
  for (int64_t &d : s)
    d = rng_.chance(0.1) ? 1 : rng_.between(2, options_.maxDim);
  return s;
}

std::string Generator::randomDtype() {
  static const std::vector<std::string> kTypes = {"f32", "f32", "f32", "f32", "f32", "f32",
                                                  "f64", "f64", "i32", "i32", "i64", "i64"};
  return rng_.pick(kTypes);
}

std::string Generator::fresh(const char *prefix) { return fmt::format("{}{}", prefix, names_++); }

Val Generator::newParam(const Shape &shape, const std::string &dtype) {
  Val v{fresh("p"), shape, dtype, true, 0, {}, {}};
  // Mostly on the first mesh; sometimes on another one (a one-device mesh too).
  if (meshes_.size() > 1 && !cur().oneMesh && rng_.chance(0.2))
    v.mesh = static_cast<int>(rng_.below(meshes_.size()));
  std::string text = fmt::format("%{}: {}", v.name, typeText(shape, dtype));
  if (rng_.chance(0.6) || v.mesh != 0) {
    // An unannotated parameter is replicated along the explicit axes.
    if (mixed_)
      v.ex = randomEx(shape, explicitHere());
    text += " " + sharding(shape, v.mesh, v.mesh != 0 || rng_.chance(0.5), true, {}, &v.ex);
  }
  params_.push_back(text);
  for (Scope &scope : scopes_) // @main's body and the regions in it
    scope.pool.push_back(v);
  return v;
}

/// An operand of `shape` that no pool value provides: a parameter in @main
/// (and its control-flow regions), a creation op in a manual body (which
/// captures nothing) or a callee.
Val Generator::newOperand(const Shape &shape, const std::string &dtype) {
  if (cur().params)
    return newParam(shape, dtype);
  emitCreation(shape, dtype);
  return cur().pool.back();
}

/// A pool value of rank 1 or more matching `want` (i1 only when
/// `allowBool`), or a new operand of a random shape and number type.
Val Generator::anyValue(const std::function<bool(const Val &)> &want, bool allowBool) {
  std::vector<Val> fits;
  for (const Val &v : cur().pool)
    if ((allowBool || v.dtype != "i1") && !v.shape.empty() && usable(v) && (!want || want(v)))
      fits.push_back(v);
  if (!fits.empty() && rng_.chance(0.8))
    return rng_.pick(fits);
  return newOperand(randomShape(), randomDtype());
}

/// Writes `%name = rhs [: type [sharding]]` and adds the result to the pool.
Val Generator::emit(const std::string &rhs, Val result, bool writeType) {
  result.name = fresh("v");
  std::string line = fmt::format("{}%{} = {}", cur().indent, result.name, rhs);
  // out_shardings in @main only: in a body they could name only the free
  // axes, and the body's values have no mesh of their own.
  bool outSharding = cur().annotate && usable(result) && rng_.chance(0.15);
  result.ex.clear();
  if (mixed_) {
    // The explicit part of the result: the op's rule where the generator
    // knows it, else an out_sharding decides it (which overrides the rule).
    bool decided = nextEx_.has_value();
    std::optional<Ex> ex = inferEx(rhs, result);
    if (!ex || (outSharding && !decided && rng_.chance(0.5))) {
      if (!cur().annotate)
        throw std::logic_error("difftest: explicit axes where no out_sharding may be written");
      ex = randomEx(result.shape, explicitHere());
      outSharding = true;
    }
    result.ex = *ex;
  }
  if (writeType || outSharding)
    line += " : " + typeText(result.shape, result.dtype);
  if (outSharding)
    line += " " + sharding(result.shape, result.mesh, rng_.chance(0.6), false, {}, &result.ex);
  cur().body += line + "\n";
  cur().pool.push_back(result);
  ++ops_;
  return result;
}

// ---- the program --------------------------------------------------------------

std::string Generator::assemble() {
  std::vector<Val> results;
  const std::vector<Val> &pool = cur().pool;
  for (auto it = pool.rbegin(); it != pool.rend() && results.size() < 3; ++it)
    if (it->name[0] == 'v' && (results.empty() || rng_.chance(0.4)))
      results.push_back(*it);
  std::vector<std::string> types, names;
  for (const Val &v : results) {
    std::string t = typeText(v.shape, v.dtype);
    if (rng_.chance(0.35))
      t += " " + sharding(v.shape, v.mesh, true, false, {}, &v.ex);
    types.push_back(t);
    names.push_back("%" + v.name);
  }
  std::string text;
  for (const MeshSpec &mesh : meshes_)
    text += meshText(mesh) + "\n";
  for (const std::string &func : funcTexts_)
    text += func;
  text += fmt::format("func @main({}) -> ({}) {{\n", fmt::join(params_, ",\n    "),
                      fmt::join(types, ", "));
  text += cur().body;
  text += fmt::format("  return {}\n}}\n", fmt::join(names, ", "));
  return text;
}

std::string generateProgram(uint64_t seed, const ProgramOptions &options) {
  return Generator(seed, options).run();
}

} // namespace shardc::difftest
