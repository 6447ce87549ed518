// Compiling a document and indexing the names in it (Analysis.h).
#include "tools/shardc-lsp/Analysis.h"

#include "frontend/SourceInput.h"
#include "pipeline/Pipeline.h"

#include <fmt/format.h>

#include <algorithm>

namespace shardc::lsp {
namespace {

/// Walks a checked module and records every name occurrence.
class Indexer {
public:
  Indexer(const Module &module, std::vector<Occurrence> &out) : module_(module), out_(out) {}

  void run() {
    for (const auto &mesh : module_.meshes) {
      add(Occurrence::Kind::Mesh, mesh->loc, true, mesh.get());
      for (const MeshAxis &axis : mesh->axes)
        add(Occurrence::Kind::Axis, axis.loc, true, &axis, mesh.get());
    }
    function(module_.snippet);
    for (const auto &f : module_.functions)
      function(*f);
    for (const ShardedTypeDecl &decl : module_.typeDecls)
      sharding(decl.sharding, "sharded type");
  }

private:
  void add(Occurrence::Kind kind, Loc loc, bool definition, const void *target,
           const Mesh *mesh = nullptr, std::string owner = {}) {
    if (loc.known())
      out_.push_back(Occurrence{kind, loc, definition, target, mesh, std::move(owner)});
  }

  void function(const Function &f) {
    if (!f.isSnippet())
      add(Occurrence::Kind::Function, f.loc, true, &f);
    block(f.body, nullptr);
    for (size_t i = 0; i < f.results.size(); ++i)
      if (f.results[i].sharding)
        sharding(*f.results[i].sharding, fmt::format("result {} of @{}", i, f.name));
  }

  /// `manualMesh`: the mesh of the enclosing manual_computation, if any.
  void block(const Block &b, const Mesh *manualMesh) {
    for (const auto &arg : b.args) {
      add(Occurrence::Kind::Value, arg->loc, true, arg.get());
      if (arg->sharding)
        sharding(*arg->sharding, "parameter %" + arg->name);
    }
    for (const auto &op : b.ops)
      operation(*op, manualMesh);
    for (size_t i = 0; i < b.returned.size() && i < b.returnedLocs.size(); ++i)
      if (b.returned[i])
        add(Occurrence::Kind::Value, b.returnedLocs[i], false, b.returned[i]);
  }

  void operation(const Op &op, const Mesh *manualMesh) {
    add(Occurrence::Kind::Op, op.loc, false, &op);
    for (size_t i = 0; i < op.operands.size() && i < op.operandLocs.size(); ++i)
      if (op.operands[i])
        add(Occurrence::Kind::Value, op.operandLocs[i], false, op.operands[i]);
    std::string first = op.results.empty() ? "" : " %" + op.results[0]->name;
    bool constraint = op.kind == OpKind::ShardingConstraint || op.kind == OpKind::Reshard;
    for (const auto &r : op.results) {
      add(Occurrence::Kind::Value, r->loc, true, r.get());
      if (r->sharding)
        sharding(*r->sharding, constraint ? fmt::format("{}{}", op.name(), first)
                                          : "out_sharding of %" + r->name);
    }
    const Mesh *ownMesh = nullptr; // a manual_computation's mesh
    for (const NamedAttribute &attr : op.attrs)
      for (size_t i = 0; i < attr.value.shardings.size(); ++i) {
        const Sharding &s = attr.value.shardings[i];
        sharding(s, fmt::format("{}{} {}[{}]", op.name(), first, attr.name, i));
        if (!ownMesh)
          ownMesh = module_.findMesh(s.meshName);
      }
    const Mesh *axesMesh =
        op.kind == OpKind::ManualComputation ? ownMesh : collectiveMesh(op, module_, manualMesh);
    for (const NamedAttribute &attr : op.attrs)
      if (attr.value.kind == Attribute::Kind::AxisSet)
        for (const AxisRef &a : attr.value.axes)
          axis(a, axesMesh, {});
    if (op.kind == OpKind::ManualComputation && op.body)
      block(*op.body, ownMesh);
    else
      for (Block *region : op.regions())
        block(*region, manualMesh);
  }

  void sharding(const Sharding &s, const std::string &owner) {
    const Mesh *mesh = module_.findMesh(s.meshName);
    add(Occurrence::Kind::Mesh, s.meshLoc, false, mesh);
    for (const DimSharding &dim : s.dims)
      for (const AxisRef &a : dim.axes)
        axis(a, mesh, owner);
    for (const AxisRef &a : s.replicated)
      axis(a, mesh, owner);
  }

  void axis(const AxisRef &a, const Mesh *mesh, const std::string &owner) {
    const MeshAxis *target = mesh ? mesh->findAxis(a.name) : nullptr;
    add(Occurrence::Kind::Axis, a.loc, false, target, mesh, owner);
  }

  const Module &module_;
  std::vector<Occurrence> &out_;
};

/// Every value and function result of `module` by its location.
void mapByLocation(const Module &module, std::map<std::pair<int, int>, const Value *> &values,
                   std::map<std::pair<int, int>, const ResultSpec *> &results) {
  auto key = [](const Loc &loc) { return std::make_pair(loc.line, loc.col); };
  auto addFunction = [&](const Function &f) {
    for (const ResultSpec &spec : f.results)
      results.emplace(key(spec.loc), &spec);
    for (const auto &arg : f.body.args)
      values.emplace(key(arg->loc), arg.get());
    walkOps(f.body, [&](Op &op) {
      for (const auto &r : op.results)
        values.emplace(key(r->loc), r.get());
      for (Block *region : op.regions())
        for (const auto &arg : region->args)
          values.emplace(key(arg->loc), arg.get());
    });
  };
  addFunction(module.snippet);
  for (const auto &f : module.functions)
    addFunction(*f);
}

/// The 1-based line and byte column of `offset` in `file`.
Loc locAt(const SourceFile &file, size_t offset) {
  const std::string &text = file.text();
  int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + offset, '\n'));
  size_t lineStart = text.rfind('\n', offset == 0 ? std::string::npos : offset - 1);
  lineStart = lineStart == std::string::npos ? 0 : lineStart + 1;
  return Loc{&file, line, static_cast<int>(offset - lineStart) + 1, 1};
}

} // namespace

Analysis::Analysis(std::string path, std::string text, const AnalysisOptions &options)
    : explicitMode_(options.explicitMode), autoSharded_(options.autoShard && !explicitMode_),
      file_(std::make_unique<SourceFile>(std::move(path), std::move(text))) {
  // The CLI refuses a buffer that is not text before compiling it.
  if (std::optional<NotText> bad = findNonText(file_->text())) {
    diagnostics_.push_back(Diagnostic{
        Severity::Error, locAt(*file_, bad->offset), "file is not text (" + bad->reason + ")", {}});
    return;
  }

  // 1. the checks, keeping the module for navigation.
  DiagnosticEngine checks;
  checks.setErrorLimit(options.errorLimit);
  CompileOptions checkOptions;
  checkOptions.keepModuleOnError = true;
  checked_ = compile(*file_, checks, checkOptions);
  diagnostics_ = checks.diagnostics();
  if (checked_)
    index(*checked_);
  if (!checked_ || checks.hasErrors())
    return;

  // 2. propagation (or explicit-shardings), with origins; auto-shard first
  // when asked.
  DiagnosticEngine full;
  full.setErrorLimit(options.errorLimit);
  CompileOptions fullOptions;
  fullOptions.throughPropagation = true;
  fullOptions.explicitMode = explicitMode_;
  fullOptions.origins = explicitMode_ ? nullptr : &origins_;
  fullOptions.autoShard = autoSharded_ ? &options.autoShardOptions : nullptr;
  propagated_ = compile(*file_, full, fullOptions);
  diagnostics_ = full.diagnostics();
  if (propagated_)
    mapByLocation(*propagated_, propagatedValues_, propagatedResults_);
}

void Analysis::index(const Module &module) {
  Indexer(module, occurrences_).run();
  std::stable_sort(occurrences_.begin(), occurrences_.end(),
                   [](const Occurrence &a, const Occurrence &b) {
                     return std::tie(a.loc.line, a.loc.col) < std::tie(b.loc.line, b.loc.col);
                   });
}

const Value *Analysis::propagatedValue(const Value &written) const {
  auto it = propagatedValues_.find({written.loc.line, written.loc.col});
  return it == propagatedValues_.end() ? nullptr : it->second;
}

const ResultSpec *Analysis::propagatedResult(const ResultSpec &written) const {
  auto it = propagatedResults_.find({written.loc.line, written.loc.col});
  return it == propagatedResults_.end() ? nullptr : it->second;
}

const Occurrence *Analysis::occurrenceAt(int line, int col) const {
  auto it = std::lower_bound(occurrences_.begin(), occurrences_.end(), line,
                             [](const Occurrence &o, int l) { return o.loc.line < l; });
  const Occurrence *best = nullptr;
  for (; it != occurrences_.end() && it->loc.line == line; ++it)
    if (col >= it->loc.col && col < it->loc.col + std::max(it->loc.length, 1))
      best = &*it; // the last (innermost) one starting at or before `col`
  return best;
}

std::vector<const Occurrence *> Analysis::occurrencesOf(const void *target) const {
  std::vector<const Occurrence *> found;
  if (!target)
    return found;
  for (const Occurrence &o : occurrences_)
    if (o.target == target)
      found.push_back(&o);
  return found;
}

} // namespace shardc::lsp
