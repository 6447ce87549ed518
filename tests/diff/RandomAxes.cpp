// The random program generator's axis types (LANGUAGE.md section 10): a mesh
// with some axes explicit, the explicit part of each value's sharding (its
// type, Val::ex), and auto_axes / explicit_axes regions, nested in each other,
// in control flow, and around manual_computations.
//
// Programs stay valid by construction: every value's explicit part is known
// to the generator, either because its op's rule gives it plainly (creation
// ops and ops on replicated operands: replicated; elementwise ops whose
// sharded operands agree: theirs; reshard: its target) or because an
// out_sharding written on the result decides it. Explicit axes go only on
// dims larger than 1 (a size-1 dim that broadcasts must be replicated).
#include "ir/Ops.h"
#include "tests/diff/RandomProgramInternal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace shardc::difftest {

namespace {

bool replicated(const Ex &ex) {
  return std::all_of(ex.begin(), ex.end(), [](const auto &d) { return d.empty(); });
}

bool sameEx(const Ex &a, const Ex &b) {
  if (replicated(a) || replicated(b))
    return replicated(a) && replicated(b);
  return a == b;
}

/// `ex` without the axes of `drop`.
Ex without(Ex ex, const std::set<std::string> &drop) {
  for (auto &dim : ex)
    dim.erase(std::remove_if(dim.begin(), dim.end(),
                             [&](const std::string &a) { return drop.count(a) > 0; }),
              dim.end());
  return ex;
}

std::string quoted(const std::vector<std::string> &axes) {
  std::vector<std::string> out;
  for (const std::string &a : axes)
    out.push_back(fmt::format("\"{}\"", a));
  return fmt::format("{{{}}}", fmt::join(out, ", "));
}

} // namespace

bool sameExplicitPart(const Ex &a, const Ex &b) { return sameEx(a, b); }

/// Some programs whose first mesh has axes (ProgramOptions::axisTypes) give
/// it axis types, each axis explicit or auto; when none came out explicit,
/// mostly one is made so, else all stay auto (explicit_axes regions then
/// make some explicit).
void Generator::chooseAxisTypes() {
  MeshSpec &mesh = meshes_[0];
  if (mesh.axes.empty() || !axesRng_.chance(options_.axisTypes))
    return;
  mixed_ = true;
  mesh.typed = true;
  for (const auto &axis : mesh.axes)
    if (rng_.chance(0.5))
      mesh.explicitAxes.insert(axis.first);
  if (mesh.explicitAxes.empty() && rng_.chance(0.7))
    mesh.explicitAxes.insert(rng_.pick(mesh.axes).first);
}

/// The axes explicit in the current scope, in mesh order.
std::vector<std::string> Generator::explicitHere() const {
  std::vector<std::string> out;
  if (!mixed_)
    return out;
  for (const auto &axis : meshes_[0].axes)
    if (scopes_.back().explicitAxes.count(axis.first))
      out.push_back(axis.first);
  return out;
}

/// Each axis of `axes` larger than 1, with even odds, on a random dim of
/// `shape` larger than 1 (after the axes already there).
Ex Generator::randomEx(const Shape &shape, const std::vector<std::string> &axes) {
  Ex ex(shape.size());
  std::vector<size_t> dims;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] > 1)
      dims.push_back(d);
  for (const auto &[name, size] : meshes_[0].axes)
    if (size > 1 && !dims.empty() && std::find(axes.begin(), axes.end(), name) != axes.end() &&
        rng_.chance(0.5))
      ex[rng_.pick(dims)].push_back(name);
  return ex;
}

/// The explicit part of the result of `%r = rhs` when the generator can tell
/// it from the operands (named `%...` in `rhs`), else nullopt (then an
/// out_sharding decides it).
std::optional<Ex> Generator::inferEx(const std::string &rhs, const Val &result) {
  if (nextEx_) {
    Ex ex = *nextEx_;
    nextEx_.reset();
    return ex;
  }
  std::vector<const Val *> operands;
  for (size_t at = rhs.find('%'); at != std::string::npos; at = rhs.find('%', at + 1)) {
    size_t end = at + 1;
    while (end < rhs.size() &&
           (std::isalnum(static_cast<unsigned char>(rhs[end])) || rhs[end] == '_'))
      ++end;
    std::string name = rhs.substr(at + 1, end - at - 1);
    const std::vector<Val> &pool = cur().pool;
    auto it =
        std::find_if(pool.rbegin(), pool.rend(), [&](const Val &v) { return v.name == name; });
    if (it == pool.rend())
      return std::nullopt; // (not in this scope's pool: let an out_sharding say)
    operands.push_back(&*it);
  }
  Ex none(result.shape.size());
  if (std::all_of(operands.begin(), operands.end(), [](const Val *v) { return replicated(v->ex); }))
    return none;
  std::optional<OpKind> kind = lookupOp(rhs.substr(0, rhs.find(' ')));
  if (!kind || !isElementwise(*kind))
    return std::nullopt;
  // select without broadcasting wants its operands sharded alike (JAX's
  // lax.select): else an out_sharding decides.
  if (*kind == OpKind::Select)
    for (const Val *v : operands)
      if (v->shape != result.shape || !sameExplicitPart(v->ex, operands.front()->ex))
        return std::nullopt;
  // Pass-through: the one sharding of the operands that have one (of the
  // result's shape; a broadcast operand is replicated).
  const Ex *found = nullptr;
  for (const Val *v : operands) {
    if (replicated(v->ex))
      continue;
    if (v->shape != result.shape || (found && *found != v->ex))
      return std::nullopt;
    found = &v->ex;
  }
  return found ? *found : none;
}

/// `sharding<@m, [...]>` naming the axes of `ex` only.
std::string Generator::exText(const Ex &ex, size_t rank) const {
  std::vector<std::string> dims;
  for (size_t d = 0; d < rank; ++d)
    dims.push_back(d < ex.size() ? quoted(ex[d]) : "{}");
  return fmt::format("sharding<@{}, [{}]>", meshes_[0].name, fmt::join(dims, ", "));
}

/// `auto_axes` (some explicit axes made auto) or `explicit_axes` (some auto
/// axes made explicit) around one to five ops on one or two operands.
void Generator::emitAxesRegion(bool autoAxes) {
  const MeshSpec &mesh = meshes_[0];
  std::vector<std::string> candidates;
  for (const auto &axis : mesh.axes)
    if (!cur().manual.count(axis.first) && (cur().explicitAxes.count(axis.first) > 0) == autoAxes)
      candidates.push_back(axis.first);
  if (candidates.empty())
    return;
  std::vector<std::string> axes;
  for (const std::string &a : candidates)
    if (rng_.chance(0.6))
      axes.push_back(a);
  if (axes.empty())
    axes.push_back(rng_.pick(candidates));
  const std::set<std::string> axisSet(axes.begin(), axes.end());

  // Operands; explicit_axes reshards each to its in_sharding, whose
  // explicit part is the operand's plus some of the region's axes.
  std::vector<Val> operands, args;
  std::vector<std::string> inShardings, argTexts;
  for (int i = static_cast<int>(rng_.between(1, 2)); i > 0; --i) {
    Val x = anyValue({}, rng_.chance(0.1));
    Val arg = x;
    arg.name = fresh("l");
    if (autoAxes) {
      arg.ex = without(x.ex, axisSet);
    } else {
      arg.ex = x.ex;
      arg.ex.resize(x.shape.size());
      Ex added = randomEx(x.shape, axes);
      for (size_t d = 0; d < added.size(); ++d)
        arg.ex[d].insert(arg.ex[d].end(), added[d].begin(), added[d].end());
      inShardings.push_back(sharding(x.shape, 0, true, false, axisSet, &arg.ex));
    }
    operands.push_back(x);
    args.push_back(arg);
    argTexts.push_back(fmt::format("%{}: {}", arg.name, typeText(arg.shape, arg.dtype)));
  }

  Scope body;
  body.pool = args;
  body.mesh = cur().mesh;
  body.manual = cur().manual;
  body.explicitAxes = cur().explicitAxes;
  for (const std::string &a : axes)
    autoAxes ? (void)body.explicitAxes.erase(a) : (void)body.explicitAxes.insert(a);
  body.depth = cur().depth + 1;
  body.indent = cur().indent + "  ";
  body.annotate = true;
  body.params = false; // the body sees its arguments only
  body.collectives = cur().collectives;
  body.oneMesh = true;
  scopes_.push_back(body);
  fill(5);
  // One or two results, the latest values first. An auto_axes result leaves
  // replicated along the axes still explicit in the body (its out_sharding
  // may name only the region's axes): a reshard first when it is not.
  std::vector<Val> returned;
  for (auto it = cur().pool.rbegin(); it != cur().pool.rend() && returned.size() < 2; ++it)
    if (returned.empty() || rng_.chance(0.5))
      returned.push_back(*it);
  for (Val &v : returned)
    if (autoAxes && !replicated(v.ex)) {
      nextEx_ = Ex(v.shape.size());
      v = emit(fmt::format("reshard %{} {}", v.name, exText({}, v.shape.size())), v);
    }
  std::string bodyText = cur().body;
  scopes_.pop_back();

  std::vector<Val> results;
  std::vector<std::string> outShardings, types, names, returnedNames;
  for (const Val &v : returned) {
    Val r = v;
    r.name = fresh("v");
    if (autoAxes) {
      r.ex = randomEx(v.shape, axes);
      // Only the region's axes among the explicit ones outside: exclude the others.
      std::set<std::string> others;
      for (const std::string &a : cur().explicitAxes)
        if (!axisSet.count(a))
          others.insert(a);
      outShardings.push_back(sharding(v.shape, 0, true, false, others, &r.ex));
    } else {
      r.ex = without(v.ex, axisSet);
    }
    results.push_back(r);
    types.push_back(typeText(r.shape, r.dtype));
    names.push_back("%" + r.name);
    returnedNames.push_back("%" + v.name);
  }
  std::vector<std::string> operandNames;
  for (const Val &x : operands)
    operandNames.push_back("%" + x.name);
  const std::string &in = cur().indent;
  cur().body += fmt::format(
      "{}{} = {} ({}) axes={} {}=[{}] ({}) {{\n{}{}  return {}\n{}}} : {}\n", in,
      fmt::join(names, ", "), autoAxes ? "auto_axes" : "explicit_axes",
      fmt::join(operandNames, ", "), quoted(axes), autoAxes ? "out_shardings" : "in_shardings",
      fmt::join(autoAxes ? outShardings : inShardings, ", "), fmt::join(argTexts, ", "), bodyText,
      in, fmt::join(returnedNames, ", "), in, fmt::join(types, ", "));
  ++ops_;
  for (const Val &r : results)
    cur().pool.push_back(r);
}

} // namespace shardc::difftest
