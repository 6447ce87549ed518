// Normal samples of the counter-based generator (Random.h), for the
// interpreter's random_normal; the LLVM backend emits the same formula.
#include "support/Random.h"

#include <cmath>

namespace shardc::support {

double randomStandardNormal(uint64_t seed, uint64_t index) {
  double u1 = 1.0 - randomUnit(seed, index, 0); // (0, 1]: log is finite
  double u2 = randomUnit(seed, index, 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

} // namespace shardc::support
