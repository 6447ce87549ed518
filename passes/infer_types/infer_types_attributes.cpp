// infer-types helpers shared by the per-op rules: where to point an error
// (operands, attributes, list elements, written types) and how to read the
// attributes a rule requires, reporting `<op> - missing attribute: <name>`
// or a wrong kind in one wording for every op.
#include "passes/infer_types/InferTypesInternal.h"

#include <fmt/format.h>

namespace shardc::infer_types {

Loc operandLoc(const Op &op, size_t i) {
  if (i < op.operandLocs.size() && op.operandLocs[i].known())
    return op.operandLocs[i];
  return op.loc;
}

Loc attrLoc(const Op &op, std::string_view name) {
  const NamedAttribute *attr = op.namedAttr(name);
  if (!attr)
    return op.loc;
  if (attr->value.loc.known())
    return attr->value.loc;
  return attr->nameLoc.known() ? attr->nameLoc : op.loc;
}

Loc attrElementLoc(const Op &op, std::string_view name, size_t index) {
  const Attribute *attr = op.attr(name);
  if (attr && attr->kind == Attribute::Kind::List && index < attr->list.size() &&
      attr->list[index].loc.known())
    return attr->list[index].loc;
  return attrLoc(op, name);
}

Loc writtenTypeLoc(const Op &op) {
  const Value &result = *op.results.front();
  return result.writtenTypeLoc.known() ? result.writtenTypeLoc : op.loc;
}

void noteDefinition(DiagnosticEngine::Builder &diag, const Value &value) {
  diag.note(value.loc, fmt::format("%{} is defined here: {}", value.name, value.type.str()));
}

std::string formatList(const std::vector<int64_t> &values) {
  return fmt::format("[{}]", fmt::join(values, ", "));
}

const char *attrKindDescription(Attribute::Kind kind) {
  switch (kind) {
  case Attribute::Kind::Int:
    return "an integer";
  case Attribute::Kind::Float:
    return "a float";
  case Attribute::Kind::String:
    return "a string";
  case Attribute::Kind::Bool:
    return "a bool";
  case Attribute::Kind::List:
    return "a list";
  case Attribute::Kind::AxisSet:
    return "an axis set";
  case Attribute::Kind::Ident:
    return "a name";
  case Attribute::Kind::Sharding:
    return "a sharding";
  case Attribute::Kind::ShardingList:
    return "a list of shardings";
  case Attribute::Kind::Dense:
    return "a dense literal";
  }
  return "an attribute";
}

namespace {

// Reports the missing attribute; returns null.
const Attribute *findOrReport(const Op &op, InferContext &ctx, std::string_view name) {
  const Attribute *attr = op.attr(name);
  if (!attr)
    ctx.error(op.loc, fmt::format("{} - missing attribute: {}", op.name(), name));
  return attr;
}

void reportKind(const Op &op, InferContext &ctx, std::string_view name, const char *expected,
                const Attribute &attr) {
  ctx.error(attrLoc(op, name), fmt::format("{} - {} must be {}: got {}", op.name(), name, expected,
                                           attrKindDescription(attr.kind)));
}

} // namespace

const Attribute *requireAttr(const Op &op, InferContext &ctx, std::string_view name,
                             Attribute::Kind kind) {
  const Attribute *attr = findOrReport(op, ctx, name);
  if (attr && attr->kind != kind) {
    reportKind(op, ctx, name, attrKindDescription(kind), *attr);
    return nullptr;
  }
  return attr;
}

std::optional<int64_t> requireInt(const Op &op, InferContext &ctx, AttrKey<int64_t> key) {
  const Attribute *attr = requireAttr(op, ctx, key, Attribute::Kind::Int);
  if (!attr)
    return std::nullopt;
  return attr->i;
}

std::optional<std::vector<int64_t>> requireIntList(const Op &op, InferContext &ctx,
                                                   AttrKey<std::vector<int64_t>> key) {
  const std::string_view name = key.name;
  const Attribute *attr = findOrReport(op, ctx, name);
  if (!attr)
    return std::nullopt;
  std::optional<std::vector<int64_t>> values = attr->intList();
  if (!values)
    reportKind(op, ctx, name, "a list of integers", *attr);
  return values;
}

const TensorType *requireWrittenType(const Op &op, InferContext &ctx) {
  const Value &result = *op.results.front();
  if (result.writtenType)
    return &*result.writtenType;
  // Written but not decoded, or written in the wrong number: already reported.
  if (result.writtenTypeLoc.known() || op.typeSpecInvalid)
    return nullptr;
  ctx.error(op.loc, fmt::format("{} - result type required: write ': tensor<...>'", op.name()));
  return nullptr;
}

} // namespace shardc::infer_types
