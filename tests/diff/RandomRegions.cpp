// The random program generator's regions: manual_computation (nested up to
// two deep) and the collectives of its bodies. Each body value tracks the
// manual axes along which it differs from device to device, so that a result
// leaves the body sharded along every such axis (anything else would be a
// program whose value depends on which device is asked).
//
// Control flow (RandomControl.cpp) follows the same pattern: push a Scope
// per region, call step() in it, pop it and write the op.
#include "tests/diff/RandomProgramInternal.h"

#include <fmt/format.h>

#include <algorithm>

namespace shardc::difftest {

namespace {

/// Each dim's axes, written `{"x", "y"}`.
std::string shardingText(const std::string &mesh,
                         const std::vector<std::vector<std::string>> &dims) {
  std::vector<std::string> out;
  for (const auto &axes : dims) {
    std::vector<std::string> quoted;
    for (const std::string &a : axes)
      quoted.push_back(fmt::format("\"{}\"", a));
    out.push_back(fmt::format("{{{}}}", fmt::join(quoted, ", ")));
  }
  return fmt::format("sharding<@{}, [{}]>", mesh, fmt::join(out, ", "));
}

} // namespace

void Generator::emitManual() {
  std::vector<int> candidates;
  for (size_t m = 0; m < meshes_.size(); ++m)
    if (meshes_[m].hasSplitAxis() && (cur().mesh < 0 || static_cast<int>(m) == cur().mesh) &&
        (!cur().oneMesh || static_cast<int>(m) == home()))
      candidates.push_back(static_cast<int>(m));
  if (candidates.empty())
    return;
  int mesh = rng_.pick(candidates);
  const MeshSpec &spec = meshes_[mesh];
  std::vector<std::string> own, others;
  // The explicit axes here are all made manual (an explicit free axis would
  // need out_shardings in the body, where none are written).
  const std::set<std::string> explicitAxes = cur().explicitAxes;
  for (const auto &[name, size] : spec.axes) {
    if (size == 1 || cur().manual.count(name))
      continue;
    (explicitAxes.count(name) || rng_.chance(0.6) ? own : others).push_back(name);
  }
  if (own.empty() && !others.empty()) {
    own.push_back(others.back());
    others.pop_back();
  }
  if (own.empty())
    return;
  auto sizeOf = [&](const std::string &axis) {
    for (const auto &[name, size] : spec.axes)
      if (name == axis)
        return size;
    return int64_t{1};
  };

  // Operands, their in_shardings (manual axes major, then maybe a free one)
  // and the body's arguments (local along the manual axes, padded when they
  // don't divide).
  int count = static_cast<int>(rng_.between(1, 2));
  std::vector<Val> operands, args;
  std::vector<std::string> inShardings, argTexts;
  for (int i = 0; i < count; ++i) {
    Val x = anyValue({}, rng_.chance(0.1));
    std::vector<std::vector<std::string>> dims(x.shape.size());
    Val arg = x;
    arg.name = fresh("l");
    arg.ex.clear();
    // The operand's explicit axes where its type has them, major-most.
    for (size_t d = 0; d < x.ex.size(); ++d)
      for (const std::string &axis : x.ex[d]) {
        dims[d].push_back(axis);
        arg.varies.insert(axis);
      }
    for (const std::string &axis : own)
      if (!explicitAxes.count(axis) && rng_.chance(0.7)) {
        size_t d = rng_.below(x.shape.size());
        dims[d].push_back(axis);
        arg.varies.insert(axis);
      }
    for (const std::string &axis : others)
      if (rng_.chance(0.15))
        dims[rng_.below(x.shape.size())].push_back(axis);
    for (size_t d = 0; d < dims.size(); ++d) {
      int64_t n = 1;
      for (const std::string &axis : dims[d])
        if (std::find(own.begin(), own.end(), axis) != own.end())
          n *= sizeOf(axis);
      arg.shape[d] = (x.shape[d] + n - 1) / n;
    }
    arg.mesh = mesh;
    operands.push_back(x);
    args.push_back(arg);
    inShardings.push_back(shardingText(spec.name, dims));
    argTexts.push_back(fmt::format("%{}: {}", arg.name, typeText(arg.shape, arg.dtype)));
  }

  Scope body;
  body.pool = args;
  body.mesh = mesh;
  body.manual = cur().manual;
  body.manual.insert(own.begin(), own.end());
  body.ownAxes = own;
  body.depth = cur().depth + 1;
  body.indent = cur().indent + "  ";
  body.annotate = false;
  body.params = false;
  body.oneMesh = cur().oneMesh;
  body.explicitAxes = explicitAxes;
  for (const std::string &axis : own)
    body.explicitAxes.erase(axis);
  scopes_.push_back(body);
  int target = static_cast<int>(rng_.between(1, 5)), made = 0;
  for (int attempts = 0; made < target && attempts < 20; ++attempts) {
    int before = ops_;
    step();
    made += ops_ - before;
  }
  // Results: the latest values, each sharded along every manual axis it
  // varies over (a rank-0 value can only leave when it varies over none).
  std::vector<Val> results;
  std::vector<std::string> outShardings, resultTypes, returned;
  const std::vector<Val> &pool = cur().pool;
  for (auto it = pool.rbegin(); it != pool.rend() && results.size() < 2; ++it) {
    const Val &v = *it;
    bool varies = std::any_of(own.begin(), own.end(),
                              [&](const std::string &a) { return v.varies.count(a) > 0; });
    if ((v.shape.empty() && varies) || (!results.empty() && rng_.chance(0.5)))
      continue;
    std::vector<std::vector<std::string>> dims(v.shape.size());
    Val r = v;
    for (const std::string &axis : own) {
      if ((v.varies.count(axis) || rng_.chance(0.3)) && !v.shape.empty()) {
        size_t d = rng_.below(v.shape.size());
        dims[d].push_back(axis);
        r.shape[d] *= sizeOf(axis);
      }
      r.varies.erase(axis);
    }
    for (const std::string &axis : others)
      if (!v.shape.empty() && rng_.chance(0.15))
        dims[rng_.below(v.shape.size())].push_back(axis);
    r.mesh = mesh;
    r.ex.assign(dims.size(), {});
    for (size_t d = 0; d < dims.size(); ++d)
      for (const std::string &axis : dims[d])
        if (explicitAxes.count(axis))
          r.ex[d].push_back(axis);
    results.push_back(r);
    returned.push_back("%" + v.name);
    outShardings.push_back(shardingText(spec.name, dims));
    resultTypes.push_back(typeText(r.shape, r.dtype));
  }
  std::string bodyText = cur().body;
  scopes_.pop_back();
  if (results.empty())
    return;

  std::vector<std::string> names, operandNames, quotedAxes;
  for (Val &r : results) {
    r.name = fresh("v");
    names.push_back("%" + r.name);
  }
  for (const Val &x : operands)
    operandNames.push_back("%" + x.name);
  for (const std::string &a : own)
    quotedAxes.push_back(fmt::format("\"{}\"", a));
  // Any order is valid (the import stage sorts them, as Shardy does).
  if (quotedAxes.size() > 1 && rng_.chance(0.3))
    std::reverse(quotedAxes.begin(), quotedAxes.end());
  const std::string &in = cur().indent;
  cur().body += fmt::format(
      "{}{} = manual_computation ({}) in_shardings=[{}] out_shardings=[{}] manual_axes={{{}}} "
      "({}) {{\n{}{}  return {}\n{}}} : {}\n",
      in, fmt::join(names, ", "), fmt::join(operandNames, ", "), fmt::join(inShardings, ", "),
      fmt::join(outShardings, ", "), fmt::join(quotedAxes, ", "), fmt::join(argTexts, ", "),
      bodyText, in, fmt::join(returned, ", "), in, fmt::join(resultTypes, ", "));
  for (const Val &r : results)
    cur().pool.push_back(r);
  ++ops_;
}

/// Pairs of instances (row-major over the manual axes in mesh order, as the
/// interpreter and the partitioner number them) that move every instance's
/// value one step along `axis`, cyclically; `dropSome` leaves one instance
/// without a sender (it receives zeros).
std::vector<std::string> Generator::permutePairs(const std::string &axis, bool dropSome) {
  const MeshSpec &mesh = meshes_[cur().mesh];
  int64_t total = 1, stride = 1, size = 1;
  bool after = false;
  for (auto it = mesh.axes.rbegin(); it != mesh.axes.rend(); ++it) {
    if (!cur().manual.count(it->first))
      continue;
    total *= it->second;
    if (it->first == axis) {
      size = it->second;
      after = true;
    } else if (!after) {
      stride *= it->second;
    }
  }
  std::vector<std::string> pairs;
  int64_t skip = dropSome ? rng_.below(total) : -1;
  for (int64_t pos = 0; pos < total; ++pos) {
    int64_t c = pos / stride % size;
    int64_t to = pos + ((c + 1) % size - c) * stride;
    if (pos != skip)
      pairs.push_back(fmt::format("[{}, {}]", pos, to));
  }
  return pairs;
}

void Generator::emitCollective() {
  const MeshSpec &mesh = meshes_[cur().mesh];
  // The axes of a collective: manual ones here, in mesh order, sometimes a
  // sub-axis of one of them.
  std::vector<std::pair<std::string, int64_t>> manual;
  for (const auto &[name, size] : mesh.axes)
    if (cur().manual.count(name))
      manual.emplace_back(name, size);
  if (manual.empty())
    return;
  std::vector<std::string> axes, whole;
  int64_t n = 1;
  for (const auto &[name, size] : manual)
    if (rng_.chance(0.6)) {
      axes.push_back(fmt::format("\"{}\"", name));
      whole.push_back(name);
      n *= size;
    }
  if (axes.empty()) {
    const auto &[name, size] = rng_.pick(manual);
    if (size >= 4 && rng_.chance(0.5)) {
      int64_t pre = rng_.chance(0.5) ? 1 : 2;
      axes.push_back(fmt::format("\"{}\":({})2", name, pre));
      n = 2; // a sub-axis: the whole axis still varies
    } else {
      axes.push_back(fmt::format("\"{}\"", name));
      whole.push_back(name);
      n = size;
    }
  }
  std::string axesText = fmt::format("{{{}}}", fmt::join(axes, ", "));
  auto gathers = [&](Val &r) {
    for (const std::string &a : whole)
      r.varies.erase(a);
  };
  auto splits = [&](Val &r) {
    for (const auto &[name, size] : manual)
      if (axesText.find("\"" + name + "\"") != std::string::npos)
        r.varies.insert(name);
  };
  switch (rng_.below(7)) {
  case 0: { // all_reduce
    Val x = anyValue();
    static const std::vector<std::string> kKinds = {"sum", "max", "min"};
    const std::string &kind = rng_.pick(kKinds);
    Val r = x;
    r.exact = x.exact && (kind != "sum" || isInt(x.dtype));
    gathers(r);
    emit(fmt::format("all_reduce %{} {{axes = {}, kind = \"{}\"}}", x.name, axesText, kind), r);
    return;
  }
  case 1: { // all_gather
    Val x = anyValue({}, true);
    Val r = x;
    int64_t dim = rng_.below(x.shape.size());
    r.shape[dim] *= n;
    gathers(r);
    emit(fmt::format("all_gather %{} {{dim = {}, axes = {}}}", x.name, dim, axesText), r, true);
    return;
  }
  case 2:
  case 3: { // reduce_scatter and all_to_all need a dim the group divides
    bool scatter = rng_.chance(0.5);
    Val x = anyValue([&](const Val &v) {
      return std::any_of(v.shape.begin(), v.shape.end(), [&](int64_t d) { return d % n == 0; });
    });
    std::vector<int64_t> dims;
    for (size_t d = 0; d < x.shape.size(); ++d)
      if (x.shape[d] % n == 0)
        dims.push_back(d);
    if (dims.empty())
      return;
    int64_t dim = rng_.pick(dims);
    Val r = x;
    r.shape[dim] /= n;
    splits(r);
    if (scatter) {
      r.exact = x.exact && isInt(x.dtype);
      emit(fmt::format("reduce_scatter %{} {{dim = {}, axes = {}}}", x.name, dim, axesText), r,
           true);
      return;
    }
    int64_t concat = rng_.below(x.shape.size());
    r.shape[concat] *= n;
    emit(fmt::format("all_to_all %{} {{split_dim = {}, concat_dim = {}, axes = {}}}", x.name, dim,
                     concat, axesText),
         r, true);
    return;
  }
  case 4: { // all_slice
    Val x = anyValue({}, true);
    Val r = x;
    int64_t dim = rng_.below(x.shape.size());
    r.shape[dim] = (x.shape[dim] + n - 1) / n;
    splits(r);
    emit(fmt::format("all_slice %{} {{dim = {}, axes = {}}}", x.name, dim, axesText), r, true);
    return;
  }
  case 5: { // collective_permute one step along a manual axis
    Val x = anyValue({}, true);
    const std::string &axis = rng_.pick(manual).first;
    bool drop = rng_.chance(0.2);
    Val r = x;
    // The instance left without a sender holds zeros: it differs from its
    // neighbours along every manual axis, not only the permuted one.
    if (drop)
      for (const auto &m : manual)
        r.varies.insert(m.first);
    emit(fmt::format("collective_permute %{} {{pairs = [{}]}}", x.name,
                     fmt::join(permutePairs(axis, drop), ", ")),
         r);
    return;
  }
  default: { // axis_index, added to a value
    const std::string &axis = rng_.pick(manual).first;
    Val idx{"", {}, "i32", true, cur().mesh, {axis}, {}};
    idx = emit(fmt::format("axis_index {{axis = \"{}\"}}", axis), idx, true);
    Val x = anyValue();
    if (x.dtype != "i32") {
      Val c = idx;
      c.dtype = x.dtype;
      idx = emit(fmt::format("convert %{}", idx.name), c, true);
    }
    Val r = x;
    r.varies.insert(axis);
    emit(fmt::format("add %{}, %{}", x.name, idx.name), r);
    return;
  }
  }
}

} // namespace shardc::difftest
