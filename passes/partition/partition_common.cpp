// Helpers every partitioner file uses: fresh names, emitting ops into a
// per-device body, attribute builders, layout comparisons.
#include "passes/partition/PartitionInternal.h"

#include <fmt/format.h>

#include <utility>

namespace shardc::partition {

void NameTable::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 1024 : 2 * old.size(), Slot{});
  const size_t mask = slots_.size() - 1;
  for (const Slot &entry : old)
    if (entry.name != 0) {
      size_t i = entry.hash & mask;
      while (slots_[i].name != 0)
        i = (i + 1) & mask;
      slots_[i] = entry;
    }
}

size_t NameTable::probe(std::string_view name, size_t hash) const {
  const size_t mask = slots_.size() - 1;
  size_t i = hash & mask;
  while (slots_[i].name != 0 && (slots_[i].hash != hash || names_[slots_[i].name - 1] != name))
    i = (i + 1) & mask;
  return i;
}

NameTable::Slot &NameTable::slot(std::string_view name) {
  if (2 * (names_.size() + 1) > slots_.size())
    grow();
  const size_t hash = std::hash<std::string_view>{}(name);
  Slot &entry = slots_[probe(name, hash)];
  if (entry.name == 0) {
    names_.emplace_back(name);
    entry.hash = hash;
    entry.name = static_cast<uint32_t>(names_.size());
  }
  return entry;
}

bool NameTable::take(std::string_view name) {
  Slot &entry = slot(name);
  return !std::exchange(entry.taken, true);
}

bool NameTable::contains(std::string_view name) const {
  return !slots_.empty() && slots_[probe(name, std::hash<std::string_view>{}(name))].taken;
}

std::string NameTable::fresh(const std::string &hint) {
  // %c, then %c_1, %c_2, ...: a hint that is itself numbered (%c_1) counts on
  // from its base rather than growing %c_1_1.
  std::string base = hint.empty() ? "v" : hint;
  size_t cut = base.find_last_not_of("0123456789");
  if (cut != std::string::npos && cut + 1 < base.size() && base[cut] == '_' && cut > 0 &&
      contains(base))
    base = base.substr(0, cut);
  std::string name = hint.empty() ? base : hint;
  Slot *named = &slot(name);
  if (!std::exchange(named->taken, true))
    return name;
  // Usually the hint is the base: its slot is at hand.
  Slot *counted = name == base ? named : &slot(base);
  int next = counted->counter;
  const size_t stem = base.size() + 1;
  const size_t slots = slots_.size();
  name.assign(base).push_back('_');
  do {
    name.resize(stem);
    name += std::to_string(++next); // (fmt::format: twice the time here)
  } while (!take(name));
  // (Taking names may have grown the table and moved the slot.)
  if (slots_.size() != slots)
    counted = &slot(base);
  counted->counter = next;
  return name;
}

Value *Body::emit(OpKind kind, std::vector<Value *> operands, std::vector<NamedAttribute> attrs,
                  const TensorType &type, Loc loc, const std::string &hint) {
  auto op = std::make_unique<Op>();
  op->kind = kind;
  op->loc = loc;
  op->operands = std::move(operands);
  op->operandLocs.assign(op->operands.size(), loc);
  op->attrs = std::move(attrs);
  auto result = std::make_unique<Value>();
  result->name = names.fresh(hint);
  result->type = type;
  result->loc = loc;
  result->definingOp = op.get();
  result->writtenType = type;
  Value *out = result.get();
  op->results.push_back(std::move(result));
  block.ops.push_back(std::move(op));
  return out;
}

const Local &Body::local(const Value *global, Loc loc) const {
  auto it = locals.find(global);
  if (it == locals.end())
    throw Unsupported(loc, "operand %" + (global ? global->name : std::string("?")) +
                               " has no per-device value");
  return it->second;
}

NamedAttribute intAttr(const std::string &name, int64_t value) {
  Attribute a;
  a.kind = Attribute::Kind::Int;
  a.i = value;
  return NamedAttribute{name, a, {}};
}

NamedAttribute intListAttr(const std::string &name, const std::vector<int64_t> &values) {
  Attribute a;
  a.kind = Attribute::Kind::List;
  for (int64_t v : values)
    a.list.push_back(intAttr("", v).value);
  return NamedAttribute{name, a, {}};
}

NamedAttribute axesAttr(const std::string &name, const std::vector<AxisRef> &axes) {
  Attribute a;
  a.kind = Attribute::Kind::AxisSet;
  a.axes = axes;
  return NamedAttribute{name, a, {}};
}

NamedAttribute stringAttr(const std::string &name, const std::string &value) {
  Attribute a;
  a.kind = Attribute::Kind::String;
  a.s = value;
  return NamedAttribute{name, a, {}};
}

NamedAttribute splatAttr(const Scalar &value) {
  Attribute a;
  a.kind = Attribute::Kind::Dense;
  a.dense.splat = true;
  a.dense.elements.push_back(value);
  return NamedAttribute{"value", a, {}};
}

NamedAttribute splatAttr(double value, DType dtype) {
  Scalar s;
  s.isFloat = isFloat(dtype);
  s.isBool = dtype == DType::I1;
  if (s.isFloat)
    s.f = value;
  else
    s.i = static_cast<int64_t>(value);
  return splatAttr(s);
}

Value *emitScalar(Body &body, double value, DType dtype, Loc loc, const std::string &hint) {
  return body.emit(OpKind::Constant, {}, {splatAttr(value, dtype)}, TensorType{{}, dtype}, loc,
                   hint);
}

} // namespace shardc::partition
