// The counter-based random numbers of SPMD_CONTRACT.md section 3, as the
// interpreter names them: the generator itself is support/Random.h, shared
// with the runtime and (as constants) with the LLVM backend.
#pragma once

#include "support/Random.h"

namespace shardc::interp {

/// 64 random bits for (seed, index, stream) (support::randomBits).
using support::randomBits;
/// A double uniform in [0, 1) (53 random bits) (support::randomUnit).
using support::randomUnit;
/// A standard normal sample (Box-Muller over streams 0 and 1).
using support::randomStandardNormal;

} // namespace shardc::interp
