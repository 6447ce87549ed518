// Random argument tensors for --random-inputs and tests, from the
// counter-based generator of support/Random.h (the runtime's --random-inputs
// computes the same values per block).
#include "backend/interpreter/Random.h"

#include "backend/interpreter/Interpreter.h"

namespace shardc::interp {

Tensor randomTensor(const TensorType &type, uint64_t seed, uint64_t index) {
  Tensor t(type);
  // One stream of values per (seed, parameter index).
  uint64_t key = support::randomArgumentKey(seed, index);
  for (int64_t i = 0; i < t.size(); ++i) {
    uint64_t bits = randomBits(key, static_cast<uint64_t>(i));
    if (t.holdsFloats())
      t.setFloat(i, support::randomArgumentFloat(bits));
    else if (t.dtype() == DType::I1)
      t.setInt(i, support::randomArgumentBool(bits));
    else
      t.setInt(i, static_cast<uint64_t>(support::randomArgumentInt(bits)));
  }
  return t;
}

} // namespace shardc::interp
