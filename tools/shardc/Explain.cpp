// `--explain`: where every axis of every sharding came from.
//
//   1. scan the module once: every written annotation's locations (axis,
//      dim, whole sharding) -> a description ("parameter %x", "out_sharding
//      of %h", "sharding_constraint %c", "result 0 of @main",
//      "manual_computation %r in_shardings[0]"), and every op's location;
//   2. print one block per value, looking each axis origin's Loc up there.
#include "tools/shardc/Explain.h"

#include "ir/AxisTypes.h"
#include "ir/Printer.h"
#include "ir/ShardingLayout.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

namespace shardc {
namespace {

/// `file:line:col`, or `?` for an unknown location.
std::string locText(Loc loc) {
  if (!loc.known())
    return "?";
  return fmt::format("{}:{}:{}", loc.file->name(), loc.line, loc.col);
}

/// Locations compared by place, not by length.
using LocKey = std::tuple<const SourceFile *, int, int>;
LocKey key(Loc loc) { return {loc.file, loc.line, loc.col}; }

/// Step 1: what was written where.
class AnnotationIndex {
public:
  AnnotationIndex(const Module &module, const ShardingOrigins &origins) : origins_(origins) {
    scanFunction(module.snippet);
    for (const auto &f : module.functions)
      scanFunction(*f);
  }

  /// What the annotation at `loc` is, e.g. `parameter %x`; for a location
  /// that is no annotation (an axis propagation could not trace further) the
  /// op there, else nothing.
  std::string describe(Loc loc) const {
    if (auto it = annotations_.find(key(loc)); it != annotations_.end())
      return it->second;
    if (auto it = ops_.find(key(loc)); it != ops_.end())
      return it->second;
    return {};
  }

private:
  /// Registers the axes of `sharding` that were written on it (all of them
  /// when `written` is null), with their dim and the sharding as fallbacks:
  /// the propagation records the first known of these three.
  void add(const Sharding &sharding, const std::vector<DimOrigins> *written,
           const std::string &what) {
    for (size_t d = 0; d < sharding.dims.size(); ++d) {
      const DimSharding &dim = sharding.dims[d];
      for (const AxisRef &a : dim.axes) {
        if (written) {
          if (d >= written->size())
            continue;
          auto it = (*written)[d].find(originKey(a));
          if (it == (*written)[d].end() || it->second.propagated)
            continue;
          annotations_.emplace(key(it->second.loc), what);
        }
        if (a.loc.known())
          annotations_.emplace(key(a.loc), what);
        else if (dim.loc.known())
          annotations_.emplace(key(dim.loc), what);
        else if (sharding.loc.known())
          annotations_.emplace(key(sharding.loc), what);
      }
    }
  }

  void addValue(const Value &v, const std::string &what) {
    if (!v.sharding)
      return;
    auto it = origins_.values.find(&v);
    // A value without recorded origins had no axes written on it.
    if (it != origins_.values.end())
      add(*v.sharding, &it->second, what);
  }

  void scanBlock(const Block &block, const std::string &paramKind) {
    for (const auto &arg : block.args)
      addValue(*arg, fmt::format("{} %{}", paramKind, arg->name));
    for (const auto &op : block.ops) {
      std::string first = op->results.empty() ? "" : " %" + op->results[0]->name;
      ops_.emplace(key(op->loc), fmt::format("{}{}", op->name(), first));
      bool constraint = op->kind == OpKind::ShardingConstraint || op->kind == OpKind::Reshard;
      for (const auto &r : op->results)
        addValue(*r, constraint ? fmt::format("{}{}", op->name(), first)
                                : fmt::format("out_sharding of %{}", r->name));
      for (const NamedAttribute &attr : op->attrs) {
        if (attr.name != "in_shardings" && attr.name != "out_shardings")
          continue;
        for (size_t i = 0; i < attr.value.shardings.size(); ++i)
          add(attr.value.shardings[i], nullptr,
              fmt::format("{}{} {}[{}]", op->name(), first, attr.name, i));
      }
      for (Block *region : op->regions())
        scanBlock(*region,
                  op->kind == OpKind::ManualComputation ? "body argument" : "region argument");
    }
  }

  void scanFunction(const Function &f) {
    scanBlock(f.body, "parameter");
    for (size_t i = 0; i < f.results.size(); ++i) {
      const ResultSpec &spec = f.results[i];
      auto it = origins_.results.find(&spec);
      if (spec.sharding && it != origins_.results.end())
        add(*spec.sharding, &it->second, fmt::format("result {} of @{}", i, f.name));
    }
  }

  const ShardingOrigins &origins_;
  std::map<LocKey, std::string> annotations_;
  std::map<LocKey, std::string> ops_;
};

/// Step 2: the blocks.
class Explainer {
public:
  Explainer(const Module &module, const ShardingOrigins *origins)
      : module_(module), origins_(origins) {
    if (origins)
      index_.emplace(module, *origins);
  }

  std::string run() {
    if (!module_.snippet.body.args.empty() || !module_.snippet.body.ops.empty())
      function(module_.snippet);
    for (const auto &f : module_.functions)
      function(*f);
    if (out_.empty())
      out_ = "no values to explain\n";
    return out_;
  }

private:
  void function(const Function &f) {
    if (!out_.empty())
      out_ += "\n";
    out_ += f.isSnippet() ? "top level\n" : fmt::format("func @{}\n", f.name);
    block(f.body, "");
    for (size_t i = 0; i < f.results.size(); ++i) {
      const ResultSpec &spec = f.results[i];
      if (spec.typeInvalid)
        continue;
      const std::vector<DimOrigins> *dims = nullptr;
      if (origins_)
        if (auto it = origins_->results.find(&spec); it != origins_->results.end())
          dims = &it->second;
      entry(fmt::format("@{} result {}", f.name, i), spec.loc, "function result", spec.type,
            spec.sharding ? &*spec.sharding : nullptr, dims,
            spec.sharding ? spec.sharding->loc : Loc{});
    }
  }

  /// `argOf`: the op whose body `b` is; empty for a function body.
  void block(const Block &b, const std::string &argOf) {
    for (size_t i = 0; i < b.args.size(); ++i)
      value(*b.args[i], argOf.empty() ? fmt::format("parameter {}", i)
                                      : fmt::format("argument {} of {}", i, argOf));
    for (const auto &op : b.ops) {
      for (const auto &r : op->results)
        value(*r, op->results.size() == 1
                      ? op->name()
                      : fmt::format("{} result {}", op->name(), r->resultIndex));
      // Inside auto_axes / explicit_axes the region's axes change type.
      AxisTypeScope outer = scope_;
      if (isAxesRegion(*op))
        scope_ = bodyScope(*op, module_, outer);
      for (Block *region : op->regions())
        block(*region, op->name());
      scope_ = std::move(outer);
    }
  }

  void value(const Value &v, const std::string &what) {
    if (!v.typeKnown)
      return;
    const std::vector<DimOrigins> *dims = nullptr;
    if (origins_)
      if (auto it = origins_->values.find(&v); it != origins_->values.end())
        dims = &it->second;
    // A manual_computation result's sharding is its out_sharding, written
    // on the op.
    Loc writtenAt = v.sharding ? v.sharding->loc : Loc{};
    if (v.definingOp && v.definingOp->kind == OpKind::ManualComputation)
      if (const Attribute *outs = v.definingOp->attr(attrs::outShardings))
        if (static_cast<size_t>(v.resultIndex) < outs->shardings.size())
          writtenAt = outs->shardings[v.resultIndex].loc;
    entry("%" + v.name, v.loc, what, v.type, v.sharding ? &*v.sharding : nullptr, dims, writtenAt);
  }

  /// `writtenAt`: where a sharding without axes was written, if it was.
  void entry(const std::string &name, Loc loc, const std::string &what, const TensorType &type,
             const Sharding *sharding, const std::vector<DimOrigins> *dims, Loc writtenAt) {
    out_ += fmt::format("\n{}  {}  {}\n", name, locText(loc), what);
    const Mesh *mesh = sharding ? module_.findMesh(sharding->meshName) : nullptr;
    // A mesh with an explicit axis (here): each axis's type beside the type,
    // as jax.typeof with get_abstract_mesh shows it.
    std::string axisTypes = mesh && (mesh->hasExplicitAxis() || scope_.anyExplicit(*mesh))
                                ? "   (" + scope_.text(*mesh) + ")"
                                : "";
    out_ +=
        fmt::format("  type      {}   {}{}\n", printType(type), jaxType(type, sharding), axisTypes);
    if (!sharding) {
      out_ += "  sharding  replicated (no sharding reached it)\n";
      return;
    }
    out_ += fmt::format("  sharding  {}\n", printSharding(*sharding));
    if (mesh && sharding->dims.size() == type.rank())
      out_ += fmt::format("  local     {}\n", local(type, *sharding, *mesh));
    if (!origins_) {
      out_ += "  origin    explicit mode: computed by op rules\n";
      return;
    }

    // One line per axis: `dim 0 "x"` padded to the widest label.
    std::vector<std::pair<std::string, std::string>> lines;
    for (size_t d = 0; d < sharding->dims.size(); ++d)
      for (const AxisRef &a : sharding->dims[d].axes) {
        const AxisOrigin *origin = nullptr;
        if (dims && d < dims->size())
          if (auto it = (*dims)[d].find(originKey(a)); it != (*dims)[d].end())
            origin = &it->second;
        lines.emplace_back(fmt::format("dim {} {}", d, a.str()), originText(origin));
      }
    if (lines.empty()) {
      out_ += writtenAt.known()
                  ? fmt::format("  origin    replicated, written at {}\n", locText(writtenAt))
                  : "  origin    replicated (no sharding reached it)\n";
      return;
    }
    size_t width = 0;
    for (const auto &line : lines)
      width = std::max(width, line.first.size());
    for (const auto &[label, text] : lines)
      out_ += fmt::format("  {:<{}}  {}\n", label, width, text);
  }

  std::string originText(const AxisOrigin *origin) const {
    if (!origin)
      return "origin not recorded";
    std::string from = index_->describe(origin->loc);
    return fmt::format("from {}{}{}, {}, priority {}", from, from.empty() ? "" : " at ",
                       locText(origin->loc), originKind(*origin), origin->priority);
  }

  /// `tensor<32x128xf32> per device (8 devices)`, with a note per padded dim.
  static std::string local(const TensorType &type, const Sharding &sharding, const Mesh &mesh) {
    TensorType localType = type;
    localType.shape = localShape(type.shape, sharding, mesh);
    std::string notes =
        fmt::format("{} device{}", mesh.deviceCount(), mesh.deviceCount() == 1 ? "" : "s");
    for (size_t d = 0; d < type.rank(); ++d) {
      int64_t shards = shardCount(sharding.dims[d], mesh);
      if (shards <= 1 || type.shape[d] % shards == 0)
        continue;
      notes += fmt::format("; dim {}: {} over {} shards, padded by {}", d, type.shape[d], shards,
                           localShape(type.shape, sharding, mesh)[d] * shards - type.shape[d]);
    }
    return fmt::format("{} per device ({})", printType(localType), notes);
  }

  const Module &module_;
  /// The axis types where the values being explained are.
  AxisTypeScope scope_;
  const ShardingOrigins *origins_;
  std::optional<AnnotationIndex> index_;
  std::string out_;
};

} // namespace

std::string explainModule(const Module &module, const ShardingOrigins *origins) {
  return Explainer(module, origins).run();
}

} // namespace shardc
