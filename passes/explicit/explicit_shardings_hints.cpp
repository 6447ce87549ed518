// --explicit mode: comparing shardings and writing the concrete fixes that
// its errors suggest (an out_sharding on the op, or a reshard of an operand),
// and a manual_computation body's view of its in/out shardings.
#include "ir/AxisAlgebra.h"
#include "ir/Printer.h"
#include "passes/explicit/ExplicitShardingsInternal.h"

namespace shardc::explicit_shardings {

bool sameDim(const DimSharding &a, const DimSharding &b) { return sameAxisList(a.axes, b.axes); }

DimSharding closedDim(std::vector<AxisRef> axes) {
  DimSharding dim;
  dim.axes = std::move(axes);
  return dim;
}

Sharding makeSharding(const std::string &mesh, std::vector<DimSharding> dims) {
  Sharding s;
  s.meshName = mesh;
  s.dims = std::move(dims);
  return s;
}

std::optional<AxisRef> duplicateAxis(const Sharding &sharding) {
  std::vector<AxisRef> seen;
  for (const DimSharding &dim : sharding.dims)
    for (const AxisRef &axis : dim.axes) {
      for (const AxisRef &other : seen)
        if (overlaps(axis, other))
          return axis;
      seen.push_back(axis);
    }
  return std::nullopt;
}

Sharding withoutDuplicateAxes(Sharding sharding) {
  std::vector<AxisRef> seen;
  for (DimSharding &dim : sharding.dims) {
    std::vector<AxisRef> kept;
    for (const AxisRef &axis : dim.axes) {
      bool used = false;
      for (const AxisRef &other : seen)
        used |= overlaps(axis, other);
      if (!used) {
        kept.push_back(axis);
        seen.push_back(axis);
      }
    }
    dim.axes = std::move(kept);
  }
  return sharding;
}

Sharding withDim(Sharding sharding, size_t d, const DimSharding &dim) {
  for (size_t other = 0; other < sharding.dims.size(); ++other) {
    if (other == d)
      continue;
    std::vector<AxisRef> kept;
    for (const AxisRef &axis : sharding.dims[other].axes) {
      bool used = false;
      for (const AxisRef &mine : dim.axes)
        used |= overlaps(axis, mine);
      if (!used)
        kept.push_back(axis);
    }
    sharding.dims[other].axes = std::move(kept);
  }
  if (d < sharding.dims.size())
    sharding.dims[d].axes = dim.axes;
  sharding.replicated.clear();
  return sharding;
}

std::string valueName(const Value &value) { return "%" + value.name; }

std::string exampleOutSharding(const Op &op, const Sharding &sharding) {
  std::string text = valueName(*op.result()) + " = " + op.name();
  std::string operands;
  for (size_t i = 0; i < op.operands.size(); ++i)
    operands += (i ? ", " : "") + valueName(*op.operands[i]);
  const Attribute *equation = op.attr(attrs::equation);
  const Attribute *value = op.attr(attrs::dense);
  if (op.kind == OpKind::Einsum && equation) {
    text += " \"" + equation->s + "\" (" + operands + ")";
  } else if (op.kind == OpKind::Constant && value) {
    text += " " + printAttribute(*value);
  } else {
    if (!operands.empty())
      text += " " + operands;
    std::string attrs;
    for (const NamedAttribute &a : op.attrs)
      attrs += (attrs.empty() ? "" : ", ") + a.name + " = " + printAttribute(a.value);
    if (!attrs.empty() || op.operands.empty())
      text += " {" + attrs + "}";
  }
  return text + " : " + printType(op.result()->type) + " " + printSharding(sharding);
}

std::string exampleReshard(const Value &value, const Sharding &sharding) {
  return valueName(value) + "2 = reshard " + valueName(value) + " " + printSharding(sharding);
}

std::string outShardingNote(const Op &op, const Sharding &sharding) {
  return "write an out_sharding, e.g. " + exampleOutSharding(op, sharding);
}

std::string reshardNote(const Value &value, const Sharding &sharding) {
  return "reshard an operand first, e.g. " + exampleReshard(value, sharding);
}

namespace {

bool isManualAxis(const AxisRef &axis, const std::vector<AxisRef> &manual) {
  for (const AxisRef &m : manual)
    if (m.name == axis.name)
      return true;
  return false;
}

} // namespace

Sharding withoutManualAxes(const Sharding &sharding, const std::vector<AxisRef> &manual) {
  Sharding local = makeSharding(sharding.meshName, {});
  for (const DimSharding &dim : sharding.dims) {
    DimSharding kept = closedDim();
    for (const AxisRef &axis : dim.axes)
      if (!isManualAxis(axis, manual))
        kept.axes.push_back(axis);
    local.dims.push_back(kept);
  }
  return local;
}

Sharding withFreeAxes(const Sharding &outer, const Sharding &body,
                      const std::vector<AxisRef> &manual) {
  Sharding out = makeSharding(outer.meshName, {});
  for (size_t d = 0; d < outer.dims.size(); ++d) {
    DimSharding dim = closedDim();
    for (const AxisRef &axis : outer.dims[d].axes)
      if (isManualAxis(axis, manual))
        dim.axes.push_back(axis);
    if (d < body.dims.size())
      for (const AxisRef &axis : body.dims[d].axes)
        if (!isManualAxis(axis, manual))
          dim.axes.push_back(axis);
    out.dims.push_back(dim);
  }
  return out;
}

std::string axisSet(const std::vector<AxisRef> &axes) {
  std::string out = "{";
  for (size_t i = 0; i < axes.size(); ++i)
    out += (i ? ", " : "") + axes[i].str();
  return out + "}";
}

} // namespace shardc::explicit_shardings
