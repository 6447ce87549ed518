// Counter-based random numbers, and random argument tensors for tests.
#include "backend/interpreter/Random.h"

#include "backend/interpreter/Interpreter.h"

#include <cmath>

namespace shardc::interp {
namespace {

uint64_t splitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

} // namespace

uint64_t randomBits(uint64_t seed, uint64_t index, uint64_t stream) {
  return splitMix64(splitMix64(splitMix64(seed) ^ index) ^ stream);
}

double randomUnit(uint64_t seed, uint64_t index, uint64_t stream) {
  return static_cast<double>(randomBits(seed, index, stream) >> 11) * 0x1.0p-53;
}

double randomStandardNormal(uint64_t seed, uint64_t index) {
  double u1 = 1.0 - randomUnit(seed, index, 0); // (0, 1]: log is finite
  double u2 = randomUnit(seed, index, 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

Tensor randomTensor(const TensorType &type, uint64_t seed, uint64_t index) {
  Tensor t(type);
  // One stream of values per (seed, parameter index).
  uint64_t key = randomBits(seed, index, 0x7061726d); // "parm"
  for (int64_t i = 0; i < t.size(); ++i) {
    uint64_t bits = randomBits(key, static_cast<uint64_t>(i));
    if (t.holdsFloats())
      t.setFloat(i, -1.0 + 2.0 * static_cast<double>(bits >> 11) * 0x1.0p-53);
    else if (t.dtype() == DType::I1)
      t.setInt(i, bits >> 63);
    else
      t.setInt(i, static_cast<uint64_t>(static_cast<int64_t>(bits >> 60) - 8));
  }
  return t;
}

} // namespace shardc::interp
