// Unit tests for the counter-based generator (support/Random.h): SplitMix64's
// published outputs, the argument helpers' ranges, and the LLVM backend's
// emitted random_uniform / random_normal against the support functions.
#include "LlvmElementalHarness.h"
#include "support/Random.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

using namespace shardc;
using namespace shardc::testing;

TEST_CASE("support random: splitMix64 is SplitMix64's step", "[support]") {
  // The first three outputs of SplitMix64 seeded with 0 (the state advances
  // by the increment each time; splitMix64(x) is the output after state x).
  uint64_t state = 0;
  CHECK(support::splitMix64(state) == 0xe220a8397b1dcdafULL);
  state += support::kSplitMixIncrement;
  CHECK(support::splitMix64(state) == 0x6e789e6aa1b965f4ULL);
  state += support::kSplitMixIncrement;
  CHECK(support::splitMix64(state) == 0x06c45d188009454fULL);
  static_assert(support::randomBits(1, 2, 3) ==
                support::splitMix64(support::splitMix64(support::splitMix64(1) ^ 2) ^ 3));
}

TEST_CASE("support random: values depend on seed, index and stream only", "[support]") {
  CHECK(support::randomBits(7, 10) == support::randomBits(7, 10, 0));
  CHECK(support::randomBits(7, 10) != support::randomBits(7, 11));
  CHECK(support::randomBits(7, 10) != support::randomBits(8, 10));
  CHECK(support::randomBits(7, 10, 0) != support::randomBits(7, 10, 1));
  CHECK(support::unitOfBits(0) == 0.0);
  CHECK(support::unitOfBits(~uint64_t(0)) == 1.0 - 0x1.0p-53);
  double sum = 0;
  for (uint64_t i = 0; i < 10000; ++i) {
    double u = support::randomUnit(3, i);
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    sum += u;
  }
  CHECK(sum / 10000 == Approx(0.5).margin(0.02));
}

TEST_CASE("support random: argument helpers cover their ranges", "[support]") {
  CHECK(support::randomArgumentKey(3, 1) == support::randomBits(3, 1, 0x7061726d));
  CHECK(support::randomArgumentFloat(0) == -1.0);
  CHECK(support::randomArgumentFloat(~uint64_t(0)) < 1.0);
  CHECK(support::randomArgumentInt(0) == -8);
  CHECK(support::randomArgumentInt(~uint64_t(0)) == 7);
  CHECK_FALSE(support::randomArgumentBool(uint64_t(1) << 62));
  CHECK(support::randomArgumentBool(uint64_t(1) << 63));
}

TEST_CASE("support random: the LLVM backend's random ops compute the support functions",
          "[support][llvm]") {
  // 2^16 counters per seed; f64 uniform on [0, 1) is low + 1.0 * u = u, bit
  // for bit, so every emitted constant and shift is checked exactly.
  const int64_t n = 65536;
  std::string type = "tensor<" + std::to_string(n) + "xf64>";
  for (uint64_t seed : {uint64_t(0), uint64_t(7), uint64_t(123456789), uint64_t(1) << 40}) {
    INFO("seed " << seed);
    ElementalKernel uniform(program(
        "", "%r = random_uniform {seed = " + std::to_string(seed) + "} : " + type + "\nreturn %r",
        type));
    interp::Tensor u = uniform.run({})[0];
    REQUIRE(u.size() == n);
    int64_t mismatches = 0;
    for (int64_t i = 0; i < n; ++i)
      mismatches += u.floatAt(i) != support::randomUnit(seed, static_cast<uint64_t>(i));
    CHECK(mismatches == 0);

    // random_normal goes through log and cos (libmvec's vector versions in
    // the kernel): equal to a few ulps.
    ElementalKernel normal(program(
        "", "%r = random_normal {seed = " + std::to_string(seed) + "} : " + type + "\nreturn %r",
        type));
    interp::Tensor z = normal.run({})[0];
    int64_t far = 0;
    for (int64_t i = 0; i < n; ++i) {
      double want = support::randomStandardNormal(seed, static_cast<uint64_t>(i));
      far += std::abs(z.floatAt(i) - want) > 1e-12 * std::max(1.0, std::abs(want));
    }
    CHECK(far == 0);
  }
}
