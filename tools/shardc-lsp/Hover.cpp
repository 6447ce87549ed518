// textDocument/hover. For a value: what `shardc --explain` says about it, as
// markdown: the global type, the sharding propagation gave it (seed syntax
// and JAX style), the per-device shape with its padding, and for each axis
// the annotation it came from. For an op: its summary and its results. For
// a mesh: its axes, sizes and device order; for an axis: its mesh and size.
#include "tools/shardc-lsp/Features.h"

#include "ir/AxisTypes.h"
#include "ir/Printer.h"
#include "ir/ShardingLayout.h"

#include <fmt/format.h>

namespace shardc::lsp {
namespace {

std::string code(const std::string &text) { return "```shd\n" + text + "\n```\n"; }

/// `tensor<32x128xf32>` on 8 devices, with a note per padded dim.
std::string perDevice(const TensorType &type, const Sharding &sharding, const Mesh &mesh) {
  TensorType local = type;
  local.shape = localShape(type.shape, sharding, mesh);
  std::string text = fmt::format("per device: `{}` on {} device{}", printType(local),
                                 mesh.deviceCount(), mesh.deviceCount() == 1 ? "" : "s");
  for (size_t d = 0; d < type.rank() && d < sharding.dims.size(); ++d) {
    int64_t shards = shardCount(sharding.dims[d], mesh);
    if (shards > 1 && type.shape[d] % shards != 0)
      text += fmt::format("; dim {}: {} over {} shards, padded by {}", d, type.shape[d], shards,
                          local.shape[d] * shards - type.shape[d]);
  }
  return text + "\n";
}

class HoverWriter {
public:
  explicit HoverWriter(const Analysis &analysis) : analysis_(analysis) {}

  /// A value: the propagated sharding when propagation ran, else the written one.
  std::string value(const Value &v, const std::string &what) {
    std::string out = fmt::format("**%{}** · {}\n\n", v.name, what);
    if (!v.typeKnown)
      return out + "type unknown (a declaration with a sharding but no type)\n";
    const Value *after = analysis_.propagatedValue(v);
    const Value &shown = after ? *after : v;
    const std::vector<DimOrigins> *dims = nullptr;
    if (after && analysis_.origins())
      if (auto it = analysis_.origins()->values.find(after);
          it != analysis_.origins()->values.end())
        dims = &it->second;
    // The axis types where the value is, as written (regions change them).
    AxisTypeScope scope =
        analysis_.module() ? scopeOfValue(v, *analysis_.module()) : AxisTypeScope{};
    return out +
           tensor(shown.type, shown.sharding ? &*shown.sharding : nullptr, dims, after, scope);
  }

  std::string result(const Function &f, size_t i) {
    const ResultSpec &spec = f.results[i];
    std::string out = fmt::format("**result {} of @{}**\n\n", i, f.name);
    if (spec.typeInvalid)
      return out;
    const ResultSpec *after = analysis_.propagatedResult(spec);
    const ResultSpec &shown = after ? *after : spec;
    const std::vector<DimOrigins> *dims = nullptr;
    if (after && analysis_.origins())
      if (auto it = analysis_.origins()->results.find(after);
          it != analysis_.origins()->results.end())
        dims = &it->second;
    return out + tensor(shown.type, shown.sharding ? &*shown.sharding : nullptr, dims, after);
  }

  std::string op(const Op &op) {
    std::string out = fmt::format("**{}** · {}\n", op.name(),
                                  opInfo(op.kind).summary ? opInfo(op.kind).summary : "");
    for (const auto &r : op.results)
      out += "\n---\n\n" + value(*r, fmt::format("result {}", r->resultIndex));
    return out;
  }

  static std::string mesh(const Mesh &m) {
    std::string out = fmt::format("**@{}** · mesh of {} device{}\n\n", m.name, m.deviceCount(),
                                  m.deviceCount() == 1 ? "" : "s");
    if (m.isEmpty())
      return out + "empty mesh: no axes, no devices of its own\n";
    if (m.isMaximal())
      return out + fmt::format("maximal mesh: everything on device {}\n", m.deviceIds[0]);
    out += "| axis | size |\n|---|---|\n";
    for (const MeshAxis &a : m.axes)
      out += fmt::format("| \"{}\" | {} |\n", a.name, a.size);
    if (m.hasExplicitAxis())
      out += "\naxis types: " + m.axisTypesText() + "\n";
    out += "\n";
    if (m.deviceIdsWritten) {
      out += "device order (row-major over the axes): [";
      for (size_t i = 0; i < m.deviceIds.size(); ++i)
        out += fmt::format("{}{}", i ? ", " : "", m.deviceIds[i]);
      out += "]\n";
    } else {
      out += fmt::format("device order: 0..{}, row-major over the axes (the default)\n",
                         m.deviceCount() - 1);
    }
    return out;
  }

  static std::string axis(const MeshAxis &a, const Mesh &m) {
    int index = m.axisIndex(a.name);
    return fmt::format("**\"{}\"** · axis {} of @{}, size {} (mesh of {} devices)\n", a.name, index,
                       m.name, a.size, m.deviceCount());
  }

  static std::string function(const Function &f) {
    std::string sig = fmt::format("func @{}(", f.name);
    for (size_t i = 0; i < f.body.args.size(); ++i) {
      const Value &arg = *f.body.args[i];
      sig += fmt::format("{}%{}: {}", i ? ", " : "", arg.name, printType(arg.type));
      if (arg.sharding)
        sig += " " + printSharding(*arg.sharding);
    }
    sig += ")";
    if (!f.results.empty()) {
      sig += " -> ";
      for (size_t i = 0; i < f.results.size(); ++i) {
        sig += fmt::format("{}{}", i ? ", " : "", printType(f.results[i].type));
        if (f.results[i].sharding)
          sig += " " + printSharding(*f.results[i].sharding);
      }
    }
    return fmt::format("**@{}** · function\n\n", f.name) + code(sig);
  }

private:
  /// `propagated`: whether `sharding` is the result of propagation.
  std::string tensor(const TensorType &type, const Sharding *sharding,
                     const std::vector<DimOrigins> *dims, bool propagated,
                     const AxisTypeScope &scope = {}) {
    std::string out = code(printType(type) + (sharding ? " " + printSharding(*sharding) : ""));
    const Module *module = analysis_.propagated() ? analysis_.propagated() : analysis_.module();
    const Mesh *mesh = module && sharding ? module->findMesh(sharding->meshName) : nullptr;
    // Each axis's type beside the type when the mesh has an explicit axis
    // (where the value is).
    out += fmt::format("JAX: `{}`{}\n\n", jaxType(type, sharding),
                       mesh && (mesh->hasExplicitAxis() || scope.anyExplicit(*mesh))
                           ? " (" + scope.text(*mesh) + ")"
                           : "");
    if (!propagated)
      out += analysis_.module() && analysis_.propagated() == nullptr
                 ? "as written: propagation did not run (the file has errors)\n\n"
                 : "";
    if (!sharding)
      return out + (propagated ? "replicated: no sharding reached it\n" : "no sharding written\n");
    if (mesh && sharding->dims.size() == type.rank())
      out += perDevice(type, *sharding, *mesh) + "\n";
    if (propagated && analysis_.explicitMode())
      return out + "explicit mode: every sharding is computed by its op's rule\n";
    if (!propagated)
      return out;
    std::string origins;
    for (size_t d = 0; d < sharding->dims.size(); ++d)
      for (const AxisRef &a : sharding->dims[d].axes) {
        const AxisOrigin *origin = nullptr;
        if (dims && d < dims->size())
          if (auto it = (*dims)[d].find(originKey(a)); it != (*dims)[d].end())
            origin = &it->second;
        origins += fmt::format("- dim {} {}: {}\n", d, a.str(), originText(origin));
      }
    return out + (origins.empty() ? "replicated on every dim\n" : "origin:\n" + origins);
  }

  /// `from parameter %x at 12:49, propagated, priority 0`.
  std::string originText(const AxisOrigin *origin) const {
    if (!origin)
      return "origin not recorded";
    std::string from;
    if (const Occurrence *o = analysis_.occurrenceAt(origin->loc.line, origin->loc.col)) {
      if (!o->owner.empty())
        from = o->owner + " ";
      else if (o->kind == Occurrence::Kind::Op)
        from = std::string(static_cast<const Op *>(o->target)->name()) + " ";
    }
    return fmt::format("from {}at {}:{}, {}, priority {}", from, origin->loc.line, origin->loc.col,
                       originKind(*origin), origin->priority);
  }

  const Analysis &analysis_;
};

/// What a value is, for its hover title.
std::string describeValue(const Value &v, const Module &module) {
  if (!v.isParameter())
    return fmt::format("result {} of `{}`", v.resultIndex, v.definingOp->name());
  auto inBlock = [&](const Block &b) -> int {
    for (size_t i = 0; i < b.args.size(); ++i)
      if (b.args[i].get() == &v)
        return static_cast<int>(i);
    return -1;
  };
  for (const auto &f : module.functions)
    if (int i = inBlock(f->body); i >= 0)
      return fmt::format("parameter {} of @{}", i, f->name);
  return module.snippet.body.args.empty() || inBlock(module.snippet.body) < 0
             ? "block argument"
             : "top-level declaration";
}

} // namespace

nlohmann::json hover(const Analysis &analysis, const TextDocument &doc, Position at) {
  const Module *module = analysis.module();
  if (!module)
    return nullptr;
  int col = doc.lines().byteColumn(at);
  HoverWriter writer(analysis);
  std::string text;
  Loc range;
  if (const Occurrence *o = analysis.occurrenceAt(at.line + 1, col)) {
    range = o->loc;
    switch (o->kind) {
    case Occurrence::Kind::Value: {
      const auto &v = *static_cast<const Value *>(o->target);
      text = writer.value(v, describeValue(v, *module));
      break;
    }
    case Occurrence::Kind::Op:
      text = writer.op(*static_cast<const Op *>(o->target));
      break;
    case Occurrence::Kind::Mesh:
      if (o->target)
        text = HoverWriter::mesh(*static_cast<const Mesh *>(o->target));
      break;
    case Occurrence::Kind::Axis:
      if (o->target && o->mesh)
        text = HoverWriter::axis(*static_cast<const MeshAxis *>(o->target), *o->mesh);
      break;
    case Occurrence::Kind::Function:
      text = HoverWriter::function(*static_cast<const Function *>(o->target));
      break;
    }
  } else {
    // A function's declared result: hover on its type.
    for (const auto &f : module->functions)
      for (size_t i = 0; i < f->results.size(); ++i) {
        const Loc &loc = f->results[i].loc;
        if (loc.line == at.line + 1 && col >= loc.col && col < loc.col + loc.length) {
          range = loc;
          text = writer.result(*f, i);
        }
      }
  }
  if (text.empty())
    return nullptr;
  return {{"contents", {{"kind", "markdown"}, {"value", text}}}, {"range", doc.range(range)}};
}

} // namespace shardc::lsp
