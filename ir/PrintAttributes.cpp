// The spelling of the printer's leaves (../shared/LANGUAGE.md section 7):
// scalars and floats in their shortest exact form, axes, shardings, dense
// literals, mesh bodies and attribute values. ir/Printer.cpp arranges them
// into a module.
#include "ir/Printer.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace shardc {

std::string printStringLiteral(const std::string &s) { return "\"" + s + "\""; }

namespace {

/// The shortest decimal text that reads back as exactly `v`, always with a
/// `.` or an exponent so the lexer sees a FLOAT: `1.0`, `1.5`, `1.0e-30`.
/// Infinities print as an overflowing literal (`1.0e999`).
std::string formatFloat(double v) {
  if (std::isnan(v))
    return "nan"; // no literal spells NaN; never produced by the frontend
  if (std::isinf(v))
    return v < 0 ? "-1.0e999" : "1.0e999";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  size_t e = s.find_first_of("eE");
  std::string mantissa = e == std::string::npos ? s : s.substr(0, e);
  std::string exponent = e == std::string::npos ? "" : s.substr(e);
  if (mantissa.find('.') == std::string::npos)
    mantissa += ".0";
  if (!exponent.empty()) {
    // to_chars writes `e-05` or `e+20`: drop the `+` and leading zeros.
    bool negative = exponent.size() > 1 && exponent[1] == '-';
    size_t digits = exponent.find_first_not_of("eE+-");
    std::string value = exponent.substr(digits);
    value.erase(0, std::min(value.find_first_not_of('0'), value.size() - 1));
    exponent = std::string("e") + (negative ? "-" : "") + value;
  }
  return mantissa + exponent;
}

std::string printScalar(const Scalar &s) {
  if (s.isBool)
    return s.i ? "true" : "false";
  if (s.isFloat)
    return formatFloat(s.f);
  return std::to_string(s.i);
}

std::string printAxisRef(const AxisRef &a) {
  std::string out = printStringLiteral(a.name);
  if (a.isSubAxis())
    out += ":(" + std::to_string(a.preSize) + ")" + std::to_string(a.size);
  return out;
}

} // namespace

std::string printAxisSet(const std::vector<AxisRef> &axes) {
  std::string out = "{";
  for (size_t i = 0; i < axes.size(); ++i) {
    if (i)
      out += ", ";
    out += printAxisRef(axes[i]);
  }
  return out + "}";
}

namespace {

std::string printIntList(const std::vector<int64_t> &xs) {
  std::string out = "[";
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i)
      out += ", ";
    out += std::to_string(xs[i]);
  }
  return out + "]";
}

} // namespace

std::string printShardingBody(const Sharding &s) {
  std::string out = "<@" + s.meshName + ", [";
  for (size_t d = 0; d < s.dims.size(); ++d) {
    const DimSharding &dim = s.dims[d];
    if (d)
      out += ", ";
    out += "{";
    for (size_t i = 0; i < dim.axes.size(); ++i) {
      if (i)
        out += ", ";
      out += printAxisRef(dim.axes[i]);
    }
    if (dim.open)
      out += dim.axes.empty() ? "?" : ", ?";
    out += "}";
    if (dim.priority)
      out += "p" + std::to_string(*dim.priority);
  }
  out += "]";
  if (!s.replicated.empty())
    out += ", replicated=" + printAxisSet(s.replicated);
  return out + ">";
}

namespace {

/// The nested list for dims `dim..` of a dense literal, consuming elements
/// from `next` in row-major order.
void printDenseElements(const DenseLiteral &d, size_t dim, size_t &next, std::string &out) {
  if (dim == d.shape.size()) {
    out += next < d.elements.size() ? printScalar(d.elements[next]) : "0";
    ++next;
    return;
  }
  out += "[";
  for (int64_t i = 0; i < d.shape[dim]; ++i) {
    if (i)
      out += ", ";
    printDenseElements(d, dim + 1, next, out);
  }
  out += "]";
}

} // namespace

std::string printDense(const DenseLiteral &d) {
  std::string out = "dense<";
  if (d.splat) {
    out += d.elements.empty() ? "0" : printScalar(d.elements.front());
  } else {
    size_t next = 0;
    printDenseElements(d, 0, next, out);
  }
  return out + ">";
}

std::string printType(const TensorType &type) {
  std::string out = "tensor<";
  for (int64_t d : type.shape)
    out += std::to_string(d) + "x";
  return out + dtypeName(type.dtype) + ">";
}

std::string printSharding(const Sharding &sharding) {
  return "sharding" + printShardingBody(sharding);
}

std::string printMeshBody(const Mesh &mesh) {
  std::string out = "<[";
  for (size_t i = 0; i < mesh.axes.size(); ++i) {
    if (i)
      out += ", ";
    out += printStringLiteral(mesh.axes[i].name) + "=" + std::to_string(mesh.axes[i].size);
  }
  out += "]";
  // A mesh without axes keeps its ids: `<[], device_ids=[0]>` is a maximal
  // mesh, `<[]>` the empty one. (deviceCount saturates: an unverified mesh,
  // printed by --print-ir-after before the verifier, may overflow.)
  bool iota =
      !mesh.axes.empty() && static_cast<int64_t>(mesh.deviceIds.size()) == mesh.deviceCount();
  for (size_t i = 0; iota && i < mesh.deviceIds.size(); ++i)
    iota = mesh.deviceIds[i] == static_cast<int64_t>(i);
  if (!mesh.deviceIds.empty() && !iota)
    out += ", device_ids=" + printIntList(mesh.deviceIds);
  if (mesh.hasExplicitAxis()) {
    out += ", axis_types=[";
    for (size_t i = 0; i < mesh.axes.size(); ++i)
      out += std::string(i ? ", " : "") + axisTypeName(mesh.axes[i].type);
    out += "]";
  }
  return out + ">";
}

std::string printAttribute(const Attribute &attr) {
  switch (attr.kind) {
  case Attribute::Kind::Int:
    return std::to_string(attr.i);
  case Attribute::Kind::Float:
    return formatFloat(attr.f);
  case Attribute::Kind::String:
    return printStringLiteral(attr.s);
  case Attribute::Kind::Bool:
    return attr.b ? "true" : "false";
  case Attribute::Kind::List: {
    std::string out = "[";
    for (size_t i = 0; i < attr.list.size(); ++i)
      out += (i ? ", " : "") + printAttribute(attr.list[i]);
    return out + "]";
  }
  case Attribute::Kind::AxisSet:
    return printAxisSet(attr.axes);
  case Attribute::Kind::Ident:
    return attr.s;
  case Attribute::Kind::Sharding:
    return attr.shardings.empty() ? "sharding<@?, []>" : printSharding(attr.shardings.front());
  case Attribute::Kind::ShardingList: {
    // Shardy's per-value spelling; a bracketed list would read back as a
    // List of Sharding attributes.
    std::string out = "<[";
    for (size_t i = 0; i < attr.shardings.size(); ++i)
      out += (i ? ", " : "") + printShardingBody(attr.shardings[i]);
    return out + "]>";
  }
  case Attribute::Kind::Dense:
    return printDense(attr.dense);
  }
  return "";
}

} // namespace shardc
