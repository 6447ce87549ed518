// Helpers the interpreter's unit tests share: run a program's @main from
// source text, build tensors inline, read their values.
#pragma once

#include "CompileForTest.h"
#include "backend/interpreter/Interpreter.h"
#include "pipeline/Pipeline.h"

#include <catch2/catch.hpp>

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace shardc::testing {

using interp::Tensor;

/// Compiles `source` (it must be valid) and runs its @main on `args`. The
/// sources and modules stay alive for the whole run: locations point into them.
inline std::vector<Tensor> run(const std::string &source, const std::vector<Tensor> &args = {}) {
  static std::deque<std::unique_ptr<Module>> modules;
  modules.push_back(compileForTest("test.shd", source));
  return interp::runFunction(*modules.back(), *modules.back()->findFunction("main"), args);
}

/// The message of the Error running `source` throws.
inline std::string runError(const std::string &source, const std::vector<Tensor> &args = {}) {
  try {
    run(source, args);
  } catch (const interp::Error &e) {
    return e.what();
  }
  return "(no error)";
}

inline Tensor f32(std::vector<int64_t> shape, std::vector<double> v) {
  return interp::makeFloatTensor(TensorType{std::move(shape), DType::F32}, v);
}
inline Tensor f64(std::vector<int64_t> shape, std::vector<double> v) {
  return interp::makeFloatTensor(TensorType{std::move(shape), DType::F64}, v);
}
inline Tensor i32(std::vector<int64_t> shape, std::vector<int64_t> v) {
  return interp::makeIntTensor(TensorType{std::move(shape), DType::I32}, v);
}
inline Tensor i64(std::vector<int64_t> shape, std::vector<int64_t> v) {
  return interp::makeIntTensor(TensorType{std::move(shape), DType::I64}, v);
}

/// Every element as a double.
inline std::vector<double> values(const Tensor &t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.size(); ++i)
    out.push_back(t.asDouble(i));
  return out;
}

/// 0, 1, 2, ... in a tensor of `shape`.
inline Tensor iotaF32(std::vector<int64_t> shape) {
  Tensor t(TensorType{std::move(shape), DType::F32});
  for (int64_t i = 0; i < t.size(); ++i)
    t.setFloat(i, static_cast<double>(i));
  return t;
}

} // namespace shardc::testing
