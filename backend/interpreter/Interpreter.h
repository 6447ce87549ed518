// The reference interpreter (SPMD_CONTRACT.md section 4): runs a checked
// module's function on global values. It is the oracle that `--simulate`
// and the differential tests compare against, so it is written to be
// obviously right rather than fast: every op computes every element from its
// definition, with the numerics of Tensor.h.
//
// manual_computation runs its body once per instance (one per combination
// of coordinates of the manual axes), all instances in lockstep, op by op,
// so that a collective sees every instance's operand (ManualComputation.cpp,
// Collectives.cpp).
#pragma once

#include "backend/interpreter/Tensor.h"
#include "ir/IR.h"

#include <string>
#include <vector>

namespace shardc::interp {

/// Runs `fn` on global argument values, one per parameter (types must match
/// the parameters'), and returns its results. Throws Error on a runtime
/// problem (a wrong argument, a collective over an axis that is not manual,
/// ...), with the op's location when there is one.
std::vector<Tensor> runFunction(const Module &module, const Function &fn,
                                const std::vector<Tensor> &args);

/// A deterministic pseudo-random value for parameter `index` of type `type`:
/// floats uniform in [-1, 1), integers in [-8, 8), i1 0 or 1.
Tensor randomTensor(const TensorType &type, uint64_t seed, uint64_t index);

/// Exact equality for integers and i1; for floats |a - b| <= atol + rtol*|b|,
/// NaN equal to NaN and infinities equal to themselves. Types must match. On
/// a mismatch `why` (when given) says where: the first index and both values.
bool allClose(const Tensor &a, const Tensor &b, double rtol, double atol,
              std::string *why = nullptr);

} // namespace shardc::interp
