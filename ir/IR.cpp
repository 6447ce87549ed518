// Module, Op and Attribute helpers, and the walkers every pass uses.
#include "ir/IR.h"

#include <algorithm>

namespace shardc {

std::optional<std::vector<int64_t>> Attribute::intList() const {
  if (kind != Kind::List)
    return std::nullopt;
  std::vector<int64_t> out;
  for (const Attribute &a : list) {
    if (a.kind != Kind::Int)
      return std::nullopt;
    out.push_back(a.i);
  }
  return out;
}

bool decodeAttribute(const Attribute &a, int64_t &out) {
  if (a.kind != Attribute::Kind::Int)
    return false;
  out = a.i;
  return true;
}

bool decodeAttribute(const Attribute &a, double &out) {
  if (!a.isNumber())
    return false;
  out = a.number();
  return true;
}

bool decodeAttribute(const Attribute &a, bool &out) {
  if (a.kind != Attribute::Kind::Bool)
    return false;
  out = a.b;
  return true;
}

bool decodeAttribute(const Attribute &a, std::string &out) {
  if (a.kind != Attribute::Kind::String)
    return false;
  out = a.s;
  return true;
}

bool decodeAttribute(const Attribute &a, std::vector<int64_t> &out) {
  std::optional<std::vector<int64_t>> values = a.intList();
  if (!values)
    return false;
  out = std::move(*values);
  return true;
}

bool decodeAttribute(const Attribute &a, std::vector<std::pair<int64_t, int64_t>> &out) {
  if (a.kind != Attribute::Kind::List)
    return false;
  out.clear();
  for (const Attribute &pair : a.list) {
    std::optional<std::vector<int64_t>> ends = pair.intList();
    if (!ends || ends->size() != 2)
      return false;
    out.emplace_back((*ends)[0], (*ends)[1]);
  }
  return true;
}

bool decodeAttribute(const Attribute &a, std::vector<AxisRef> &out) {
  if (a.kind != Attribute::Kind::AxisSet)
    return false;
  out = a.axes;
  return true;
}

bool decodeAttribute(const Attribute &a, Sharding &out) {
  if (a.kind != Attribute::Kind::Sharding || a.shardings.size() != 1)
    return false;
  out = a.shardings.front();
  return true;
}

bool decodeAttribute(const Attribute &a, std::vector<Sharding> &out) {
  if (a.kind != Attribute::Kind::ShardingList)
    return false;
  out = a.shardings;
  return true;
}

bool decodeAttribute(const Attribute &a, DenseLiteral &out) {
  if (a.kind != Attribute::Kind::Dense)
    return false;
  out = a.dense;
  return true;
}

const NamedAttribute *Op::namedAttr(std::string_view name) const {
  for (const NamedAttribute &a : attrs)
    if (a.name == name)
      return &a;
  return nullptr;
}

const Attribute *Op::attr(std::string_view name) const {
  const NamedAttribute *a = namedAttr(name);
  return a ? &a->value : nullptr;
}

void Op::setAttr(std::string name, Attribute value) {
  for (NamedAttribute &a : attrs)
    if (a.name == name) {
      a.value = std::move(value);
      return;
    }
  attrs.push_back(NamedAttribute{std::move(name), std::move(value), {}});
}

const Mesh *Module::findMesh(std::string_view name) const {
  for (const auto &m : meshes)
    if (m->name == name)
      return m.get();
  return nullptr;
}

Function *Module::findFunction(std::string_view name) const {
  for (const auto &f : functions)
    if (f->name == name)
      return f.get();
  return nullptr;
}

int64_t Module::deviceCount() const {
  for (const auto &m : meshes)
    if (!m->isEmpty() && !m->isMaximal())
      return m->deviceCount();
  // Only one-device (and empty) meshes: a device for every id they name.
  int64_t count = 1;
  for (const auto &m : meshes)
    for (int64_t id : m->deviceIds)
      count = std::max(count, id + 1);
  return count;
}

std::vector<std::string> Module::meshNames() const {
  std::vector<std::string> names;
  for (const auto &m : meshes)
    names.push_back(m->name);
  return names;
}

ManualComputationParts manualComputationParts(const Op &op) {
  static const std::vector<Sharding> kNoShardings;
  static const std::vector<AxisRef> kNoAxes;
  const Attribute *ins = op.attr(attrs::inShardings);
  const Attribute *outs = op.attr(attrs::outShardings);
  const Attribute *axes = op.attr(attrs::manualAxes);
  return {ins ? ins->shardings : kNoShardings, outs ? outs->shardings : kNoShardings,
          axes ? axes->axes : kNoAxes};
}

const Mesh *collectiveMesh(const Op &op, const Module &module, const Mesh *enclosingManualMesh) {
  if (enclosingManualMesh)
    return enclosingManualMesh;
  for (const Value *v : op.operands)
    if (v && v->sharding)
      if (const Mesh *m = module.findMesh(v->sharding->meshName))
        return m;
  for (const auto &r : op.results)
    if (r->sharding)
      if (const Mesh *m = module.findMesh(r->sharding->meshName))
        return m;
  const Mesh *only = nullptr;
  for (const auto &m : module.meshes)
    if (!m->axes.empty()) {
      if (only)
        return nullptr;
      only = m.get();
    }
  return only;
}

RegionList Op::regions() const {
  RegionList out;
  for (Block *b : {cond.get(), body.get(), elseBody.get()})
    if (b)
      out.push_back(b);
  return out;
}

std::vector<Value *> Op::carriedArgs(const Op &op, const Block &region) {
  std::vector<Value *> out;
  size_t first = op.kind == OpKind::For && &region == op.body.get() ? 1 : 0;
  for (size_t i = first; i < region.args.size(); ++i)
    out.push_back(region.args[i].get());
  return out;
}

void walkOps(const Block &block, const std::function<void(Op &)> &fn) {
  for (const auto &op : block.ops) {
    fn(*op);
    for (Block *region : op->regions())
      walkOps(*region, fn);
  }
}

bool anyOp(const Block &block, const std::function<bool(const Op &)> &pred) {
  for (const auto &op : block.ops) {
    if (pred(*op))
      return true;
    for (Block *region : op->regions())
      if (anyOp(*region, pred))
        return true;
  }
  return false;
}

bool hasAnySharding(const Function &f) {
  auto sharded = [](const auto &value) { return value->sharding.has_value(); };
  return std::any_of(f.body.args.begin(), f.body.args.end(), sharded) ||
         anyOp(f.body, [&](const Op &op) {
           return std::any_of(op.results.begin(), op.results.end(), sharded);
         });
}

void walkBlocks(Module &module, const std::function<void(Block &)> &fn) {
  std::function<void(Block &)> visit = [&](Block &block) {
    fn(block);
    for (const auto &op : block.ops)
      for (Block *region : op->regions())
        visit(*region);
  };
  visit(module.snippet.body);
  for (const auto &f : module.functions)
    visit(f->body);
}

} // namespace shardc
