// The random program generator's control flow (LANGUAGE.md section 9): for,
// while and if, nested in each other and in manual_computation bodies (calls
// are in RandomCalls.cpp).
//
// Every program still computes the same on every stage: predicates compare
// exact reductions (so the global and the per-device programs take the same
// branch), trip counts are small (0 to 4) and carried floats are squashed
// each iteration (tanh, sigmoid, a halving), carried integers clamped. In a
// manual body, a predicate that differs between devices keeps collectives
// and manual_computations out of its regions.
#include "tests/diff/RandomProgramInternal.h"

#include <fmt/format.h>

#include <algorithm>

namespace shardc::difftest {

namespace {

std::set<std::string> unite(const std::set<std::string> &a, const std::set<std::string> &b) {
  std::set<std::string> s = a;
  s.insert(b.begin(), b.end());
  return s;
}

/// Keeps a control-flow op's operands on the home mesh while it is written
/// (Scope::oneMesh), in the scope where the op goes.
class OneMesh {
public:
  explicit OneMesh(std::vector<Scope> &scopes)
      : scopes_(scopes), at_(scopes.size() - 1), saved_(scopes[at_].oneMesh) {
    scopes_[at_].oneMesh = true;
  }
  ~OneMesh() { scopes_[at_].oneMesh = saved_; }
  OneMesh(const OneMesh &) = delete;
  OneMesh &operator=(const OneMesh &) = delete;

private:
  std::vector<Scope> &scopes_;
  size_t at_;
  bool saved_;
};

std::string allDims(const Val &x) {
  std::vector<int64_t> dims;
  for (size_t d = 0; d < x.shape.size(); ++d)
    dims.push_back(static_cast<int64_t>(d));
  return listText(dims);
}

} // namespace

/// A region of a control-flow op: it sees every value of the enclosing one
/// on the home mesh (implicit capture) and `args`, and keeps its flags.
Scope Generator::regionScope(const std::vector<Val> &args) {
  Scope s = cur();
  s.body.clear();
  s.oneMesh = true;
  s.pool.clear();
  for (const Val &v : cur().pool)
    if (v.mesh == home())
      s.pool.push_back(v);
  s.pool.insert(s.pool.end(), args.begin(), args.end());
  s.depth = cur().depth + 1;
  s.indent = cur().indent + "  ";
  return s;
}

/// One to `maxOps` ops in the current scope.
void Generator::fill(int maxOps) {
  int target = static_cast<int>(rng_.between(1, maxOps)), made = 0;
  for (int attempts = 0; made < target && attempts < 20; ++attempts) {
    int before = ops_;
    step();
    made += ops_ - before;
  }
}

Val Generator::scalar(const std::string &dtype, const std::string &text) {
  Val r{"", {}, dtype, true, cur().mesh >= 0 ? cur().mesh : 0, {}, {}};
  return emit(fmt::format("constant dense<{}>", text), r, true);
}

/// A rank-0 i1 that the global and the per-device programs compute alike:
/// exact reductions (max and min, integer sums; in a manual body sometimes
/// all-reduced) compared with each other or a constant, or an exact i1
/// value of the pool reduced.
Val Generator::predicate() {
  static const std::vector<std::string> kCompare = {"lt", "le", "gt", "ge", "eq", "ne"};
  auto reduceAll = [&](const Val &x, const std::string &op) {
    Val r = x;
    r.shape.clear();
    return emit(fmt::format("{} %{} {{dims = {}}}", op, x.name, allDims(x)), r);
  };
  std::vector<Val> bools;
  for (const Val &v : cur().pool)
    if (v.dtype == "i1" && v.exact && !v.shape.empty() && usable(v))
      bools.push_back(v);
  if (!bools.empty() && rng_.chance(0.3)) {
    Val b = rng_.pick(bools), c = b;
    c.dtype = "i32";
    c = emit(fmt::format("convert %{}", b.name), c, true);
    Val m = reduceAll(c, rng_.chance(0.5) ? "reduce_max" : "reduce_min");
    Val zero = scalar("i32", "0");
    Val p = m;
    p.dtype = "i1";
    return emit(fmt::format("{} %{}, %{}", rng_.chance(0.5) ? "gt" : "eq", m.name, zero.name), p);
  }
  Val x = anyValue([](const Val &v) { return v.exact; });
  std::vector<std::string> ops = {"reduce_max", "reduce_min"};
  if (isInt(x.dtype))
    ops.push_back("reduce_sum");
  const std::string &op = rng_.pick(ops);
  // In a manual body, sometimes the same on every device through all_reduces
  // of both sides (then collectives may go inside the regions it decides;
  // never one side only: a collective in a while's cond would then wait for
  // devices that left the loop).
  bool reduced = cur().mesh >= 0 && cur().collectives && rng_.chance(0.6);
  auto uniform = [&](Val v, const std::string &how) {
    if (!reduced || v.varies.empty())
      return v;
    std::vector<std::string> axes;
    for (const auto &axis : meshes_[cur().mesh].axes)
      if (v.varies.count(axis.first))
        axes.push_back(fmt::format("\"{}\"", axis.first));
    const char *kind = how == "reduce_sum" ? "sum" : how == "reduce_max" ? "max" : "min";
    Val r = v;
    r.varies.clear();
    return emit(fmt::format("all_reduce %{} {{axes = {{{}}}, kind = \"{}\"}}", v.name,
                            fmt::join(axes, ", "), kind),
                r);
  };
  Val a = uniform(reduceAll(x, op), op);
  std::vector<Val> others;
  for (const Val &v : cur().pool)
    if (v.exact && v.dtype == x.dtype && !v.shape.empty() && v.name != x.name && usable(v))
      others.push_back(v);
  Val b;
  if (!others.empty() && rng_.chance(0.5)) {
    const std::string &how = rng_.pick(ops);
    b = uniform(reduceAll(rng_.pick(others), how), how);
  } else {
    b = scalar(x.dtype, isInt(x.dtype) ? std::to_string(rng_.between(-3, 3)) : "0.25");
  }
  Val p = a;
  p.dtype = "i1";
  p.varies = unite(a.varies, b.varies);
  return emit(fmt::format("{} %{}, %{}", rng_.pick(kCompare), a.name, b.name), p);
}

/// What a region returns for a value like `want`: a pool value of its type
/// (exact when `exact`, varying only along `within` when given), the later
/// ones preferred; when `bound`, squashed so that it stays bounded however
/// many iterations feed it back: floats through tanh, sigmoid or a halving,
/// integers clamped to [-100, 100].
Val Generator::pickReturn(const Val &want, bool exact, const std::set<std::string> *within,
                          bool bound) {
  std::vector<Val> fits;
  for (const Val &v : cur().pool)
    if (v.shape == want.shape && v.dtype == want.dtype && (!exact || v.exact) &&
        sameExplicitPart(v.ex, want.ex) &&
        (!within ||
         std::includes(within->begin(), within->end(), v.varies.begin(), v.varies.end())))
      fits.push_back(v);
  if (fits.empty()) // (the region's own argument, or the captured value, always fits)
    return want;
  Val v = rng_.chance(0.6) ? fits.back() : rng_.pick(fits);
  if (!bound || v.dtype == "i1")
    return v;
  // The squashed value keeps the explicit part (no out_sharding changes it).
  const Ex keep = v.ex;
  auto keepEx = [&] {
    if (mixed_)
      nextEx_ = keep;
  };
  if (isInt(v.dtype)) {
    Val hi = scalar(v.dtype, "100"), lo = scalar(v.dtype, "-100");
    keepEx();
    v = emit(fmt::format("min %{}, %{}", v.name, hi.name), v);
    keepEx();
    return emit(fmt::format("max %{}, %{}", v.name, lo.name), v);
  }
  int64_t r = rng_.below(20);
  if (r < 17) {
    keepEx();
    return emit(fmt::format("{} %{}", r < 12 ? "tanh" : "sigmoid", v.name), v);
  }
  Val half = scalar(v.dtype, "0.5");
  keepEx();
  return emit(fmt::format("mul %{}, %{}", v.name, half.name), v);
}

/// Ops on a region's own values first (most of them), so that its body
/// works on what it carries rather than on what it captures.
void Generator::useCarried(const std::vector<Val> &values) {
  for (const Val &v : values) {
    if (v.dtype == "i1" || !rng_.chance(0.7))
      continue;
    if (rng_.chance(0.5))
      emitUnary(v);
    else
      emitBinary(v);
  }
}

/// The loop index, converted and added to a number value of the pool.
void Generator::useIndex(const Val &index) {
  Val x = anyValue();
  Val i = index;
  if (x.dtype != "i64") {
    i.dtype = x.dtype;
    i = emit(fmt::format("convert %{}", index.name), i, true);
  }
  emit(rng_.chance(0.5) ? fmt::format("add %{}, %{}", x.name, i.name)
                        : fmt::format("sub %{}, %{}", i.name, x.name),
       x);
}

/// ` : T1 [sharding], T2 ...` for an op's results (shardings only where
/// they may be written, each sometimes).
std::string Generator::resultTypes(const std::vector<Val> &results) {
  std::vector<std::string> types;
  for (const Val &v : results) {
    std::string t = typeText(v.shape, v.dtype);
    if (cur().annotate && rng_.chance(0.3))
      t += " " + sharding(v.shape, v.mesh, rng_.chance(0.6), false, {}, &v.ex);
    types.push_back(t);
  }
  return fmt::format(" : {}", fmt::join(types, ", "));
}

void Generator::emitFor() {
  OneMesh guard(scopes_);
  // 0 to 3 carried values from the pool, each sometimes treated as inexact.
  std::vector<Val> inits, args;
  for (int n = static_cast<int>(rng_.below(4)); n > 0; --n) {
    Val x = anyValue({}, rng_.chance(0.1));
    Val a = x;
    a.name = fresh("c");
    a.exact = x.exact && rng_.chance(0.8);
    inits.push_back(x);
    args.push_back(a);
  }
  // 0 to 4 trips, sometimes from a negative bound or with a step.
  int64_t step = rng_.chance(0.3) ? rng_.between(2, 3) : 1;
  int64_t lb = rng_.between(-3, 3);
  int64_t trips = rng_.chance(0.15) ? 0 : rng_.between(1, 4);
  int64_t ub = trips == 0 ? lb - rng_.below(3) : lb + step * (trips - 1) + rng_.between(1, step);
  Val index{fresh("i"), {}, "i64", true, cur().mesh >= 0 ? cur().mesh : 0, {}, {}};

  scopes_.push_back(regionScope(args));
  cur().pool.push_back(index);
  if (rng_.chance(0.5))
    useIndex(index);
  useCarried(args);
  fill(4);
  std::vector<Val> next;
  for (const Val &a : args)
    next.push_back(pickReturn(a, a.exact, &a.varies, true));
  std::string body = cur().body;
  scopes_.pop_back();

  const std::string &in = cur().indent;
  std::vector<std::string> carry;
  for (size_t k = 0; k < args.size(); ++k)
    carry.push_back(fmt::format("%{} = %{}", args[k].name, inits[k].name));
  std::string head =
      fmt::format("for %{} = {} to {}{} carry({}) {{\n", index.name, lb, ub,
                  step == 1 ? "" : fmt::format(" step {}", step), fmt::join(carry, ", "));
  ++ops_;
  if (args.empty()) {
    cur().body += fmt::format("{}{}{}{}}}\n", in, head, body, in);
    return;
  }
  std::vector<Val> results;
  for (size_t k = 0; k < args.size(); ++k) {
    Val r = inits[k];
    r.name = fresh("v");
    r.exact = args[k].exact;
    results.push_back(r);
  }
  cur().body += fmt::format("{}{} = {}{}{}  return {}\n{}}}{}\n", in, names(results), head, body,
                            in, names(next), in, resultTypes(results));
  for (const Val &r : results)
    cur().pool.push_back(r);
}

void Generator::emitWhile() {
  OneMesh guard(scopes_);
  // An i64 counter bounds the trip count (0 to 4); 0 to 2 more carried values.
  Val zero = scalar("i64", "0");
  std::vector<Val> inits = {zero}, args;
  for (int n = static_cast<int>(rng_.below(3)); n > 0; --n)
    inits.push_back(anyValue({}, rng_.chance(0.1)));
  for (const Val &x : inits) {
    Val a = x;
    a.name = fresh("c");
    a.exact = x.exact && rng_.chance(0.8);
    args.push_back(a);
  }
  // cond: counter < N, sometimes and a data-dependent predicate.
  scopes_.push_back(regionScope(args));
  Val limit = scalar("i64", std::to_string(rng_.between(0, 4)));
  Val p = args[0];
  p.dtype = "i1";
  p = emit(fmt::format("lt %{}, %{}", args[0].name, limit.name), p);
  if (rng_.chance(0.4)) {
    Val q = predicate();
    Val both = p;
    both.varies = q.varies;
    p = emit(fmt::format("{} %{}, %{}", "and", p.name, q.name), both);
  }
  std::string cond = cur().body;
  scopes_.pop_back();

  // do: when devices may run different trip counts, no collectives inside.
  scopes_.push_back(regionScope(args));
  if (!p.varies.empty())
    cur().collectives = false;
  Val one = scalar("i64", "1");
  std::vector<Val> next = {emit(fmt::format("add %{}, %{}", args[0].name, one.name), args[0])};
  useCarried(std::vector<Val>(args.begin() + 1, args.end()));
  fill(4);
  for (size_t k = 1; k < args.size(); ++k)
    next.push_back(pickReturn(args[k], args[k].exact, &args[k].varies, true));
  std::string body = cur().body;
  scopes_.pop_back();

  std::vector<std::string> carry;
  std::vector<Val> results;
  for (size_t k = 0; k < args.size(); ++k) {
    carry.push_back(fmt::format("%{} = %{}", args[k].name, inits[k].name));
    Val r = inits[k];
    r.name = fresh("v");
    r.exact = args[k].exact;
    r.varies = unite(r.varies, p.varies);
    results.push_back(r);
  }
  const std::string &in = cur().indent;
  cur().body += fmt::format("{}{} = while carry({}) cond {{\n{}{}  return %{}\n{}}} do {{\n{}{}  "
                            "return {}\n{}}}{}\n",
                            in, names(results), fmt::join(carry, ", "), cond, in, p.name, in, body,
                            in, names(next), in, resultTypes(results));
  ++ops_;
  for (const Val &r : results)
    cur().pool.push_back(r);
}

void Generator::emitIf() {
  OneMesh guard(scopes_);
  Val p = predicate();
  // 0 to 2 results, of the types of pool values; without results, the else
  // branch is sometimes left out.
  std::vector<Val> wants;
  if (rng_.chance(0.8))
    for (int n = static_cast<int>(rng_.between(1, 2)); n > 0; --n)
      wants.push_back(anyValue({}, rng_.chance(0.1)));
  bool withElse = !wants.empty() || rng_.chance(0.5);
  std::vector<std::string> bodies;
  std::vector<std::vector<Val>> returned;
  for (int branch = 0; branch < (withElse ? 2 : 1); ++branch) {
    scopes_.push_back(regionScope({}));
    if (!p.varies.empty())
      cur().collectives = false;
    useCarried(wants);
    fill(4);
    std::vector<Val> ret;
    for (const Val &w : wants)
      ret.push_back(pickReturn(w, false, nullptr, false));
    if (!ret.empty())
      cur().body += fmt::format("{}return {}\n", cur().indent, names(ret));
    bodies.push_back(cur().body);
    returned.push_back(ret);
    scopes_.pop_back();
  }
  const std::string &in = cur().indent;
  std::string text = fmt::format("if %{} {{\n{}{}}}", p.name, bodies[0], in);
  if (withElse)
    text += fmt::format(" else {{\n{}{}}}", bodies[1], in);
  ++ops_;
  if (wants.empty()) {
    cur().body += in + text + "\n";
    return;
  }
  std::vector<Val> results;
  for (size_t k = 0; k < wants.size(); ++k) {
    Val r = wants[k];
    r.name = fresh("v");
    r.exact = returned[0][k].exact && returned[1][k].exact;
    r.varies = unite(unite(returned[0][k].varies, returned[1][k].varies), p.varies);
    results.push_back(r);
  }
  cur().body += fmt::format("{}{} = {}{}\n", in, names(results), text, resultTypes(results));
  for (const Val &r : results)
    cur().pool.push_back(r);
}

} // namespace shardc::difftest
