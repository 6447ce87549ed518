// The program description printed in the language's seed syntax, for
// `./prog --help`, the output summary and error messages.
#pragma once

#include "runtime/shardrt.h"

#include <string>

namespace shardrt {

/// `<["x"=2, "y"=4]>`, `<["a"=2], device_ids=[1, 0]>`, `<[]>`.
std::string meshText(const shardrt_mesh &mesh);
/// `tensor<7x4xf32>`, `tensor<i1>`.
std::string typeText(const shardrt_tensor &tensor);
/// `sharding<@mesh, [{"x"}, {"y":(2)2}]>`.
/// " sharding<@mesh, [...]>" (with the leading space), or "" on the unnamed
/// mesh of a program without meshes.
std::string shardingText(const shardrt_program &program, const shardrt_tensor &tensor);
/// `(7, 4)`: a shape as .npy headers and NumPy print it.
std::string shapeText(const int64_t *shape, int64_t ndims);

} // namespace shardrt
