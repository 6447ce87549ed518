// The counter-based random numbers of SPMD_CONTRACT.md section 3: a value
// depends only on (seed, linear index, stream), never on the order elements
// are computed in or on how a tensor is sharded, so a per-device program can
// compute exactly the global program's random values.
#pragma once

#include <cstdint>

namespace shardc::interp {

/// 64 random bits for (seed, index, stream): SplitMix64's finalizer applied
/// to a mix of the three.
uint64_t randomBits(uint64_t seed, uint64_t index, uint64_t stream = 0);
/// A double uniform in [0, 1) (53 random bits).
double randomUnit(uint64_t seed, uint64_t index, uint64_t stream = 0);
/// A standard normal sample (Box-Muller over streams 0 and 1).
double randomStandardNormal(uint64_t seed, uint64_t index);

} // namespace shardc::interp
