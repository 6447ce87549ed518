// Unit tests for the LLVM backend's inline f32 math (ElementalMath.cpp).
// exp (emitExp), JIT-compiled and vectorized, is compared with the correctly
// rounded e^x on floats spread over its whole range (every 97th float from
// -104 to 89), on the edges of that range (overflow to +inf, the last
// normal and subnormal results, underflow to 0) and on NaN, infinities and
// zeros, compiled for the host (2^n by AVX-512's vscalefps) and for AVX2
// (2^n by integer shifts); and the kernel must not call anything for it.
// The f64 exp likewise, on a million doubles from -746 to 710 and the
// thresholds of its range.
// Division by a value computed once per row (emitFloatDiv: a multiplication
// by its reciprocal) is compared with the correctly rounded quotient for divisors
// from the smallest subnormal to the largest float, 0, infinity and NaN.
#include "LlvmElementalHarness.h"
#include "TestHelpers.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/Support/Host.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>

using namespace shardc;
using namespace shardc::testing;

namespace {

/// The sweeps take every 97th float; the sanitizer build every 389th (both
/// prime, so the low mantissa bits still vary).
constexpr uint32_t kFloatStride = shardc::testing::kSampleSweeps ? 389 : 97;

const int64_t kBatch = int64_t(1) << 18;

float floatOfBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint32_t bitsOf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

/// |got - want| in units of the spacing of T's values at `want` (2^-149 for
/// float subnormals and 0, 2^-1074 for double's); infinities only match
/// themselves. The difference is taken in long double, exact for two
/// nearby floats or doubles.
template <typename T> double ulpError(T got, T want) {
  using limits = std::numeric_limits<T>;
  if (std::isinf(want) || std::isinf(got))
    return got == want ? 0 : std::numeric_limits<double>::infinity();
  int exponent;
  std::frexp(want == 0 ? limits::min() : want, &exponent);
  long double spacing = std::ldexp(1.0L, std::max(exponent, limits::min_exponent) - limits::digits);
  return static_cast<double>(std::abs(static_cast<long double>(got) - want) / spacing);
}

/// One f32 unary op (`exp`, `tanh`) over kBatch values, compiled for `cpu`.
class UnaryKernel {
public:
  UnaryKernel(const std::string &cpu, const std::string &op = "exp")
      : kernel_(program("%a: tensor<" + std::to_string(kBatch) + "xf32>",
                        "%r = " + op + " %a\nreturn %r",
                        "tensor<" + std::to_string(kBatch) + "xf32>"),
                cpu) {}

  /// The kernel's op of `xs` (at most kBatch values; the rest is padding).
  std::vector<float> run(const std::vector<float> &xs) {
    std::vector<double> values(kBatch, 0.0);
    for (size_t i = 0; i < xs.size(); ++i)
      values[i] = xs[i];
    interp::Tensor in = interp::makeFloatTensor(TensorType{{kBatch}, DType::F32}, values);
    interp::Tensor out = kernel_.run({in})[0];
    std::vector<float> result(xs.size());
    for (size_t i = 0; i < xs.size(); ++i)
      result[i] = static_cast<float>(out.floatAt(static_cast<int64_t>(i)));
    return result;
  }

  const std::string &ir() const { return kernel_.ir(); }

private:
  ElementalKernel kernel_;
};

/// The largest ulp error of the kernel over `xs` against `reference` (in
/// double, rounded to float), naming the worst input.
double worstError(
    UnaryKernel &kernel, const std::vector<float> &xs, float &worstX,
    double (*reference)(double) = [](double x) { return std::exp(x); }) {
  double worst = 0;
  for (size_t start = 0; start < xs.size(); start += kBatch) {
    std::vector<float> batch(xs.begin() + start,
                             xs.begin() + std::min(xs.size(), start + size_t(kBatch)));
    std::vector<float> got = kernel.run(batch);
    for (size_t i = 0; i < batch.size(); ++i) {
      // The reference in double rounded to float: correctly rounded but for
      // the vanishingly rare double-rounding tie.
      float want = static_cast<float>(reference(double(batch[i])));
      double error = ulpError(got[i], want);
      if (error > worst) {
        worst = error;
        worstX = batch[i];
      }
    }
  }
  return worst;
}

/// The largest ulp error of `out`'s first `count` values, computed from
/// `xs`, against `reference` in x87 extended precision rounded to double
/// (correctly rounded but for the vanishingly rare double-rounding tie),
/// naming the worst input.
double worstDoubleError(const interp::Tensor &out, const std::vector<double> &xs, size_t count,
                        long double (*reference)(long double), double &worstX) {
  double worst = 0;
  for (size_t i = 0; i < count; ++i) {
    double want = static_cast<double>(reference(static_cast<long double>(xs[i])));
    double error = ulpError(out.floatAt(static_cast<int64_t>(i)), want);
    if (error > worst) {
      worst = error;
      worstX = xs[i];
    }
  }
  return worst;
}

} // namespace

/// The targets the exp is checked on: the host (with AVX-512, 2^n by
/// vscalefps) and AVX2 (2^n by integer shifts), which runs on any host
/// these tests run on.
const char *const kExpTargets[] = {"native", "x86-64-v3"};

/// Whether the host has AVX-512F, so that "native" kernels use it.
bool hostHasAvx512() {
  llvm::StringMap<bool> features;
  return llvm::sys::getHostCPUFeatures(features) && features["avx512f"];
}

TEST_CASE("llvm math: f32 exp is inline and within 1 ulp of e^x from -104 to 89", "[llvm]") {
  const std::string cpu = GENERATE(from_range(std::begin(kExpTargets), std::end(kExpTargets)));
  INFO("target " << cpu);
  UnaryKernel kernel(cpu);
  // No call: neither libmvec's vector exp nor libm's nor the intrinsic.
  for (const char *call : {"@_ZGV", "@expf", "@llvm.exp", "@shardc.exp"})
    CHECK(kernel.ir().find(call) == std::string::npos);
  const bool scalef = cpu == "native" && hostHasAvx512();
  CHECK(kernel.ir().find(scalef ? "<16 x float>" : "<8 x float>") != std::string::npos);
  CHECK((kernel.ir().find("@llvm.x86.avx512.mask.scalef.ps.512") != std::string::npos) == scalef);
  CHECK((kernel.ir().find("shl <") != std::string::npos) == !scalef);

  std::vector<float> xs;
  // Every 97th float (kFloatStride) of each sign, up to 89 and down to -104.
  for (uint32_t bits = 0; bits <= bitsOf(89.0f); bits += kFloatStride)
    xs.push_back(floatOfBits(bits));
  for (uint32_t bits = 0x80000000u; bits <= bitsOf(-104.0f); bits += kFloatStride)
    xs.push_back(floatOfBits(bits));
  float worstX = 0;
  double worst = worstError(kernel, xs, worstX);
  INFO("worst: " << worst << " ulp at x = " << worstX << " over " << xs.size() << " floats");
  CHECK(worst <= 1.0);
}

TEST_CASE("llvm math: f32 exp overflow, underflow, subnormals and special values", "[llvm]") {
  const std::string cpu = GENERATE(from_range(std::begin(kExpTargets), std::end(kExpTargets)));
  INFO("target " << cpu);
  UnaryKernel kernel(cpu);
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> edges;
  // Around the last finite result (ln FLT_MAX = 88.7228...), the smallest
  // normal one (-87.336...), the smallest subnormal one and 0 (-103.97...):
  // 2000 consecutive floats on each side of each.
  for (float center :
       {88.72283935546875f, -87.33654022216797f, -103.27892303466797f, -103.97207641601562f}) {
    uint32_t bits = bitsOf(center);
    for (uint32_t d = 0; d < 2000; ++d) {
      edges.push_back(floatOfBits(bits + d));
      edges.push_back(floatOfBits(bits - d));
    }
  }
  for (float x : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-45f, 89.0f, 100.0f, 1e30f, 3.4e38f, -104.0f,
                  -150.0f, -1e30f, -3.4e38f})
    edges.push_back(x);
  float worstX = 0;
  double worst = worstError(kernel, edges, worstX);
  INFO("worst: " << worst << " ulp at x = " << worstX);
  CHECK(worst <= 1.0);

  std::vector<float> got = kernel.run({inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                                       -std::numeric_limits<float>::quiet_NaN(), 89.0f, -104.0f});
  CHECK(got[0] == inf);
  CHECK(got[1] == 0.0f);
  CHECK(std::isnan(got[2]));
  CHECK(std::isnan(got[3]));
  CHECK(got[4] == inf);
  CHECK(got[5] == 0.0f);
}

TEST_CASE("llvm math: f32 tanh is inline and within 2 ulp of tanh(x)", "[llvm]") {
  // tanh is written with the inline exp: (1 - e^-2|x|) / (1 + e^-2|x|) with
  // x's sign, an odd polynomial below |x| = 0.4.
  const std::string cpu = GENERATE(from_range(std::begin(kExpTargets), std::end(kExpTargets)));
  INFO("target " << cpu);
  UnaryKernel kernel(cpu, "tanh");
  for (const char *call : {"@_ZGV", "@tanhf", "@expf", "@llvm.exp", "@shardc.exp"})
    CHECK(kernel.ir().find(call) == std::string::npos);

  // Every 97th float (kFloatStride) of each sign from 0 to 10 (beyond 9.01 tanh rounds to
  // +-1), subnormals included, and the floats around the switch at 0.4.
  std::vector<float> xs;
  for (uint32_t sign : {0u, 0x80000000u}) {
    for (uint32_t bits = 0; bits <= bitsOf(10.0f); bits += kFloatStride)
      xs.push_back(floatOfBits(sign | bits));
    for (uint32_t d = 0; d < 2000; ++d) {
      xs.push_back(floatOfBits(sign | (bitsOf(0.4f) + d)));
      xs.push_back(floatOfBits(sign | (bitsOf(0.4f) - d)));
    }
  }
  float worstX = 0;
  double worst = worstError(kernel, xs, worstX, [](double x) { return std::tanh(x); });
  INFO("worst: " << worst << " ulp at x = " << worstX << " over " << xs.size() << " floats");
  CHECK(worst <= 2.0);

  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> got = kernel.run({0.0f, -0.0f, 1e-45f, -1e-45f, 9.1f, -9.1f, 1e30f, inf, -inf,
                                       std::numeric_limits<float>::quiet_NaN()});
  CHECK((got[0] == 0.0f && !std::signbit(got[0])));
  CHECK((got[1] == 0.0f && std::signbit(got[1])));
  CHECK(got[2] == 1e-45f);
  CHECK(got[3] == -1e-45f);
  CHECK(got[4] == 1.0f);
  CHECK(got[5] == -1.0f);
  CHECK(got[6] == 1.0f);
  CHECK(got[7] == 1.0f);
  CHECK(got[8] == -1.0f);
  CHECK(std::isnan(got[9]));
}

TEST_CASE("llvm math: f64 tanh is inline and within 2 ulp of tanh(x)", "[llvm]") {
  const std::string cpu = GENERATE(from_range(std::begin(kExpTargets), std::end(kExpTargets)));
  INFO("target " << cpu);
  const int64_t batch = int64_t(1) << 20;
  const std::string type = "tensor<" + std::to_string(batch) + "xf64>";
  ElementalKernel kernel(program("%a: " + type, "%r = tanh %a\nreturn %r", type), cpu);
  for (const char *call : {"@_ZGV", "@tanh(", "@exp(", "@llvm.exp", "@shardc.exp"})
    CHECK(kernel.ir().find(call) == std::string::npos);
  // Spread over [-20, 20] (tanh rounds to +-1 from 19.06) with irregular low
  // bits, then denser over [-0.6, 0.6], across the switch between the
  // polynomial and the quotient at |x| = 0.3.
  std::vector<double> xs;
  const int64_t spread = batch / 2;
  for (int64_t i = 0; i < spread; ++i)
    xs.push_back(-20.0 + 40.0 * (static_cast<double>(i) + 0.318309886183791 * (i % 7)) /
                             static_cast<double>(spread));
  for (int64_t i = 0; static_cast<int64_t>(xs.size()) < batch - 16; ++i)
    xs.push_back(0.6 * (static_cast<double>(i) + 0.5) / static_cast<double>(spread) *
                 (i % 2 ? -1 : 1));
  for (double x : {0.0, -0.0, 1e-300, -5e-324, 0.3, -0.3, std::nextafter(0.3, 0.0),
                   std::nextafter(-0.3, 0.0), 19.1, -19.1, 1e300})
    xs.push_back(x);
  std::vector<double> values = xs;
  values.resize(static_cast<size_t>(batch), 0.0);
  interp::Tensor out =
      kernel.run({interp::makeFloatTensor(TensorType{{batch}, DType::F64}, values)})[0];
  double worstX = 0;
  double worst = worstDoubleError(
      out, xs, xs.size(), [](long double x) { return std::tanh(x); }, worstX);
  INFO("worst: " << worst << " ulp at x = " << worstX << " over " << xs.size() << " doubles");
  CHECK(worst <= 2.0);
  CHECK(std::signbit(out.floatAt(static_cast<int64_t>(xs.size()) - 10))); // -0
  CHECK(out.floatAt(static_cast<int64_t>(xs.size()) - 1) == 1.0);
}

TEST_CASE("llvm math: f64 exp is inline and within 1 ulp of e^x from -746 to 710", "[llvm]") {
  const std::string cpu = GENERATE(from_range(std::begin(kExpTargets), std::end(kExpTargets)));
  INFO("target " << cpu);
  const int64_t batch = int64_t(1) << 20;
  const std::string type = "tensor<" + std::to_string(batch) + "xf64>";
  ElementalKernel kernel(program("%a: " + type, "%r = exp %a\nreturn %r", type), cpu);
  const std::string &ir = kernel.ir();
  for (const char *call : {"@_ZGV", "@exp(", "@llvm.exp", "@shardc.exp"})
    CHECK(ir.find(call) == std::string::npos);
  const bool scalef = cpu == "native" && hostHasAvx512();
  CHECK((ir.find("@llvm.x86.avx512.mask.scalef.pd.512") != std::string::npos) == scalef);

  // Evenly spread over the range with irregular low bits, then 2000
  // consecutive doubles on each side of the last finite result (ln
  // DBL_MAX), the smallest normal one, the smallest subnormal one and the
  // last one rounding to it rather than 0; then specials.
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> xs;
  for (int64_t i = 0; static_cast<int64_t>(xs.size()) < batch - 16100; ++i)
    xs.push_back(-746.0 + 1456.0 * (static_cast<double>(i) + 0.318309886183791 * (i % 7)) /
                              static_cast<double>(batch - 16100));
  for (double center :
       {709.782712893384, -708.3964185322641, -744.4400719213812, -745.1332191019411}) {
    for (int d = 0; d < 2000; ++d) {
      xs.push_back(std::nextafter(center + 0.0, inf) + d * std::ldexp(1.0, -43));
      xs.push_back(center - d * std::ldexp(1.0, -43));
    }
  }
  for (double x : {0.0, -0.0, 1e-300, -1e-300, 5e-324, 1.0, -1.0, 709.0, 710.0, 1e300, -746.0,
                   -1e300, 0.5 * std::log(2.0), -0.5 * std::log(2.0)})
    xs.push_back(x);
  REQUIRE(static_cast<int64_t>(xs.size()) <= batch - 4);
  xs.push_back(inf);
  xs.push_back(-inf);
  xs.push_back(std::numeric_limits<double>::quiet_NaN());
  const size_t specials = xs.size() - 3;
  std::vector<double> values = xs;
  values.resize(static_cast<size_t>(batch), 0.0);
  interp::Tensor out =
      kernel.run({interp::makeFloatTensor(TensorType{{batch}, DType::F64}, values)})[0];

  double worstX = 0;
  double worst = worstDoubleError(
      out, xs, specials, [](long double x) { return std::exp(x); }, worstX);
  INFO("worst: " << worst << " ulp at x = " << worstX << " over " << specials << " doubles");
  CHECK(worst <= 1.0);
  CHECK(out.floatAt(static_cast<int64_t>(specials)) == inf);
  CHECK(out.floatAt(static_cast<int64_t>(specials + 1)) == 0.0);
  CHECK(std::isnan(out.floatAt(static_cast<int64_t>(specials + 2))));
}

TEST_CASE("llvm math: f32 division by a row's value is within 2 ulp, specials exact", "[llvm]") {
  // The divisor is a row sum (a row group's per-row member, computed before
  // the loop along the row): one reciprocal per row, no vector division.
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> divisors = {1.0f,     3.0f,  -7.0f,    0.1f,  1e-45f, -3e-45f, 1e-39f,
                                 1.2e-38f, 3e38f, -3.4e38f, 1e30f, 1e-30f, 0.0f,    inf,
                                 -inf,     nan,   6.0f,     0.75f, 2e20f,  5e-20f};
  std::vector<float> numerators = {1.0f,    -1.0f,  0.0f,    -0.0f,   3.0f, 1e-45f,
                                   -5e-40f, 1e-38f, 3.4e38f, -1e38f,  inf,  -inf,
                                   nan,     0.3f,   1e30f,   -2e-30f, 0.1f, 7.0f};
  const int64_t rows = static_cast<int64_t>(divisors.size()), width = 1000;
  std::string x = "tensor<" + std::to_string(rows) + "x" + std::to_string(width) + "xf32>";
  ElementalKernel kernel(program("%x: " + x + ", %d: " + x,
                                 "%s = reduce_sum %d {dims = [1], keep_dims = true}\n"
                                 "%q = div %x, %s\nreturn %q",
                                 x));
  INFO(kernel.ir());
  CHECK(kernel.ir().find("fdiv <") == std::string::npos);
  CHECK(kernel.ir().find("fmul <") != std::string::npos); // vectorized (8 or 16 floats)

  // Row r: the divisor once (then zeros, so the sum is exactly it), and
  // numerators cycling through the specials and a spread of magnitudes.
  std::vector<double> xs, ds;
  std::vector<float> numeratorOf;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < width; ++j) {
      float a = j < static_cast<int64_t>(numerators.size())
                    ? numerators[j]
                    : static_cast<float>(std::ldexp(1.0 + j * 0.000731, int(j % 200) - 100) *
                                         (j % 3 ? 1 : -1));
      xs.push_back(a);
      ds.push_back(j == 0 ? divisors[r] : 0.0);
      numeratorOf.push_back(a);
    }
  TensorType type{{rows, width}, DType::F32};
  interp::Tensor q =
      kernel.run({interp::makeFloatTensor(type, xs), interp::makeFloatTensor(type, ds)})[0];
  double worst = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < width; ++j) {
      int64_t i = r * width + j;
      float got = static_cast<float>(q.floatAt(i));
      float want = static_cast<float>(double(numeratorOf[i]) / double(divisors[r]));
      INFO(numeratorOf[i] << " / " << divisors[r] << ": " << got << ", want " << want);
      if (std::isnan(want)) {
        CHECK(std::isnan(got));
      } else if (std::isinf(want) || want == 0 || std::isinf(divisors[r]) || divisors[r] == 0) {
        CHECK(got == want);
        CHECK(std::signbit(got) == std::signbit(want));
      } else {
        double error = ulpError(got, want);
        worst = std::max(worst, error);
        CHECK(error <= 2.0);
      }
    }
  INFO("worst " << worst << " ulp");
  CHECK(worst > 0); // the quotients are not all exact: the test sees the multiplication
}

namespace {

/// Per basic block of `ir` with vector stores of f32: how many vector
/// `fmul`s of f32 it has per such store (at the target's width: 16 floats
/// with AVX-512, 8 with AVX2; the loop may be unrolled, the ratio stays).
std::vector<double> multiplicationsPerStore(const std::string &ir) {
  std::vector<double> ratios;
  size_t stores = 0, multiplications = 0;
  auto endBlock = [&] {
    if (stores > 0)
      ratios.push_back(double(multiplications) / double(stores));
    stores = multiplications = 0;
  };
  size_t start = 0;
  while (start < ir.size()) {
    size_t end = ir.find('\n', start);
    std::string line = ir.substr(start, end == std::string::npos ? end : end - start);
    start = end == std::string::npos ? ir.size() : end + 1;
    if (!line.empty() && line[0] != ' ' && line.find(':') != std::string::npos)
      endBlock(); // a label starts the next block
    bool f32Vector = line.find(" x float>") != std::string::npos;
    if (f32Vector && line.find("store <") != std::string::npos)
      ++stores;
    if (f32Vector && line.find("fmul <") != std::string::npos)
      ++multiplications;
  }
  endBlock();
  return ratios;
}

} // namespace

TEST_CASE("llvm math: f32 division by a row's value is one multiplication per element when the "
          "reciprocal is a normal float",
          "[llvm]") {
  // The general form multiplies twice (by the f32 reciprocal, then by its
  // power-of-two scale); the loop has a copy without the scale, entered when
  // the scale is 1 (the test above runs both copies: its divisors from 1e-45
  // to 3.4e38 need scales 2^64 and 2^-64 too).
  std::string x = "tensor<8x512xf32>";
  ElementalKernel kernel(program("%x: " + x,
                                 "%s = reduce_sum %x {dims = [1], keep_dims = true}\n"
                                 "%q = div %x, %s\nreturn %q",
                                 x));
  std::vector<double> ratios = multiplicationsPerStore(kernel.ir());
  INFO(kernel.ir());
  CHECK(std::count(ratios.begin(), ratios.end(), 1.0) > 0);
  CHECK(std::count(ratios.begin(), ratios.end(), 2.0) > 0);

  // A constant divisor: its reciprocal is known, so no copy and no scale.
  ElementalKernel byConstant(program("%x: " + x,
                                     "%c = constant dense<3.0> : " + x +
                                         "\n"
                                         "%q = div %x, %c\nreturn %q",
                                     x));
  ratios = multiplicationsPerStore(byConstant.ir());
  INFO(byConstant.ir());
  CHECK(!ratios.empty());
  CHECK(std::count(ratios.begin(), ratios.end(), 1.0) == static_cast<long>(ratios.size()));
}
