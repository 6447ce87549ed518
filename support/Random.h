// The counter-based random numbers of random_uniform, random_normal and
// random test inputs: the interpreter computes them with these functions, the
// runtime's --random-inputs too, and the LLVM backend emits IR from these constants.
#pragma once

#include <cstdint>

namespace shardc::support {

// A value depends only on (seed, linear index, stream), never on the order
// elements are computed in or on how a tensor is sharded, so a per-device
// program computes exactly the global program's random values:
//   bits(seed, index, stream) = mix(mix(mix(seed) ^ index) ^ stream)
// where mix is SplitMix64's step (add kSplitMixIncrement, then the finalizer
// below). backend/llvm/ElementalCreation.cpp emits the same arithmetic.

/// SplitMix64's increment (2^64 / golden ratio) and finalizer multipliers.
inline constexpr uint64_t kSplitMixIncrement = 0x9e3779b97f4a7c15ULL;
inline constexpr uint64_t kSplitMixMultiplier1 = 0xbf58476d1ce4e5b9ULL;
inline constexpr uint64_t kSplitMixMultiplier2 = 0x94d049bb133111ebULL;
/// The finalizer's three xor-shifts, in order.
inline constexpr unsigned kSplitMixShift1 = 30, kSplitMixShift2 = 27, kSplitMixShift3 = 31;
/// randomUnit keeps the top 53 bits (a double's mantissa), scaled by 2^-53.
inline constexpr unsigned kUnitShift = 11;
inline constexpr double kUnitScale = 0x1.0p-53;
/// The stream of randomArgumentKey ("parm").
inline constexpr uint64_t kArgumentStream = 0x7061726d;

/// One SplitMix64 step on `x`.
constexpr uint64_t splitMix64(uint64_t x) {
  x += kSplitMixIncrement;
  x = (x ^ (x >> kSplitMixShift1)) * kSplitMixMultiplier1;
  x = (x ^ (x >> kSplitMixShift2)) * kSplitMixMultiplier2;
  return x ^ (x >> kSplitMixShift3);
}

/// 64 random bits for (seed, index, stream).
constexpr uint64_t randomBits(uint64_t seed, uint64_t index, uint64_t stream = 0) {
  return splitMix64(splitMix64(splitMix64(seed) ^ index) ^ stream);
}

/// A double uniform in [0, 1) from 64 random bits (their top 53).
constexpr double unitOfBits(uint64_t bits) {
  return static_cast<double>(bits >> kUnitShift) * kUnitScale;
}

/// A double uniform in [0, 1) for (seed, index, stream).
constexpr double randomUnit(uint64_t seed, uint64_t index, uint64_t stream = 0) {
  return unitOfBits(randomBits(seed, index, stream));
}

/// A standard normal sample: Box-Muller over streams 0 and 1,
/// sqrt(-2 ln(1 - u0)) * cos(2 pi u1).
double randomStandardNormal(uint64_t seed, uint64_t index);

// Random test inputs (shardc --random-inputs, the executables' --random-inputs):
// argument `a` under seed s has key randomArgumentKey(s, a), and its element
// at linear index i the bits randomBits(key, i).

/// The key of argument `argument`'s values under `seed`.
constexpr uint64_t randomArgumentKey(uint64_t seed, uint64_t argument) {
  return randomBits(seed, argument, kArgumentStream);
}
/// A float argument element: uniform in [-1, 1).
constexpr double randomArgumentFloat(uint64_t bits) { return -1.0 + 2.0 * unitOfBits(bits); }
/// An integer argument element: uniform in [-8, 8).
constexpr int64_t randomArgumentInt(uint64_t bits) { return static_cast<int64_t>(bits >> 60) - 8; }
/// An i1 argument element: the top bit.
constexpr bool randomArgumentBool(uint64_t bits) { return (bits >> 63) != 0; }

} // namespace shardc::support
