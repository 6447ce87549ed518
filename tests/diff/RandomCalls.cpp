// The random program generator's calls (LANGUAGE.md section 9): functions
// other than @main, generated on demand from the types of the values at hand
// and emitted before @main, then called (again, when the pool fits their
// parameters), in @main, in loops and branches, in manual bodies and in
// other such functions.
#include "tests/diff/RandomProgramInternal.h"

#include <fmt/format.h>

#include <algorithm>

namespace shardc::difftest {

/// A new function taking values like `args`, its body drawn like any other
/// (no parameters invented, no collectives); emitted before @main. Its
/// signature and body write shardings only when it is made outside a manual
/// body, and then it is called only there.
const FuncSpec &Generator::makeFunction(const std::vector<Val> &args) {
  FuncSpec f;
  f.name = fresh("f");
  f.annotated = cur().annotate;
  f.oneMesh = cur().oneMesh;
  Scope body;
  body.annotate = f.annotated;
  body.params = false;
  body.collectives = f.annotated && cur().collectives;
  body.depth = cur().depth + 1;
  body.oneMesh = f.oneMesh;
  std::vector<std::string> paramTexts;
  for (const Val &a : args) {
    Val p{fresh("a"), a.shape, a.dtype, true, f.annotated ? a.mesh : 0, {}, {}};
    std::string text = fmt::format("%{}: {}", p.name, typeText(p.shape, p.dtype));
    if (f.annotated && rng_.chance(0.5))
      text += " " + sharding(p.shape, p.mesh, rng_.chance(0.5));
    paramTexts.push_back(text);
    f.params.push_back(p);
    body.pool.push_back(p);
  }
  std::vector<Scope> saved = std::move(scopes_);
  int savedOps = ops_;
  scopes_ = {body};
  ++callDepth_;
  fill(5);
  const std::vector<Val> &pool = cur().pool;
  for (auto it = pool.rbegin(); it != pool.rend() && f.results.size() < 2; ++it)
    if (it->name[0] == 'v' && (f.results.empty() || rng_.chance(0.4)))
      f.results.push_back(*it);
  if (f.results.empty())
    f.results.push_back(f.params.back());
  std::string text = fmt::format("func @{}({}) -> ({}) {{\n{}  return {}\n}}\n\n", f.name,
                                 fmt::join(paramTexts, ", "), resultTypes(f.results).substr(3),
                                 cur().body, names(f.results));
  --callDepth_;
  scopes_ = std::move(saved);
  ops_ = savedOps;
  funcTexts_.push_back(text);
  funcs_.push_back(f);
  return funcs_.back();
}

void Generator::emitCall() {
  // An existing function whose parameters the pool can fill, or a new one.
  std::vector<std::pair<size_t, std::vector<Val>>> callable;
  for (size_t k = 0; k < funcs_.size(); ++k) {
    if ((funcs_[k].annotated && !cur().annotate) || (cur().oneMesh && !funcs_[k].oneMesh))
      continue;
    std::vector<Val> args;
    for (const Val &p : funcs_[k].params) {
      std::vector<Val> fits;
      for (const Val &v : cur().pool)
        if (v.shape == p.shape && v.dtype == p.dtype && usable(v))
          fits.push_back(v);
      if (fits.empty())
        break;
      args.push_back(rng_.pick(fits));
    }
    if (args.size() == funcs_[k].params.size())
      callable.emplace_back(k, args);
  }
  FuncSpec f;
  std::vector<Val> args;
  if (!callable.empty() && (funcs_.size() >= 4 || rng_.chance(0.5))) {
    const auto &[k, chosen] = rng_.pick(callable);
    f = funcs_[k];
    args = chosen;
  } else if (funcs_.size() < 4) {
    for (int n = static_cast<int>(rng_.between(1, 3)); n > 0; --n)
      args.push_back(anyValue({}, rng_.chance(0.1)));
    f = makeFunction(args);
  } else {
    return;
  }
  bool exact = std::all_of(args.begin(), args.end(), [](const Val &v) { return v.exact; });
  std::set<std::string> varies;
  for (const Val &a : args)
    varies.insert(a.varies.begin(), a.varies.end());
  std::vector<Val> results;
  for (const Val &res : f.results) {
    Val r = res;
    r.name = fresh("v");
    r.exact = res.exact && exact;
    r.varies = varies;
    r.mesh = cur().mesh >= 0 ? cur().mesh : args[0].mesh;
    results.push_back(r);
  }
  cur().body +=
      fmt::format("{}{} = call @{}({})\n", cur().indent, names(results), f.name, names(args));
  ++ops_;
  for (const Val &r : results)
    cur().pool.push_back(r);
}

} // namespace shardc::difftest
