// allClose: the comparison the differential tests and shardc-npy-compare use.
#include "backend/interpreter/Interpreter.h"

#include <fmt/format.h>

#include <cmath>

namespace shardc::interp {
namespace {

std::string indexText(const std::vector<int64_t> &shape, int64_t linear) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? linear % shape[d] : 0;
    linear = shape[d] ? linear / shape[d] : 0;
  }
  return fmt::format("[{}]", fmt::join(index, ", "));
}

bool floatsClose(double a, double b, double rtol, double atol) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b))
    return a == b;
  return std::fabs(a - b) <= atol + rtol * std::fabs(b);
}

} // namespace

bool allClose(const Tensor &a, const Tensor &b, double rtol, double atol, std::string *why) {
  if (a.type() != b.type()) {
    if (why)
      *why = fmt::format("types differ: {} vs {}", a.type().str(), b.type().str());
    return false;
  }
  for (int64_t i = 0; i < a.size(); ++i) {
    bool same = a.holdsFloats() ? floatsClose(a.floatAt(i), b.floatAt(i), rtol, atol)
                                : a.intAt(i) == b.intAt(i);
    if (same)
      continue;
    if (why)
      *why = a.holdsFloats()
                 ? fmt::format("at {}: {} vs {} (difference {:g})", indexText(a.shape(), i),
                               a.floatAt(i), b.floatAt(i), std::fabs(a.floatAt(i) - b.floatAt(i)))
                 : fmt::format("at {}: {} vs {}", indexText(a.shape(), i), a.intAt(i), b.intAt(i));
    return false;
  }
  return true;
}

} // namespace shardc::interp
