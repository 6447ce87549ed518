// The .npy header (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
// read and checked against the tensor the program expects, and written for
// outputs. Versions 1.0, 2.0 and 3.0 are read; 1.0 is written. Element
// types: <f4 <f8 <i4 <i8 |b1 (f32 f64 i32 i64 i1), little-endian, C order.
#pragma once

#include "runtime/shardrt.h"

#include <cstdint>
#include <string>

namespace shardrt {

/// The .npy descr of a dtype: "<f4", "|b1", ...
const char *npyDescr(int64_t dtype);

/// Reads the header of the open file `fd` (of `fileSize` bytes) and checks it
/// against `expected`: magic string, version, header syntax, dtype, shape,
/// and a data length of exactly the array's bytes; `fortranOrder` tells the
/// element order. Returns the offset of the data, or -1 with `error` saying
/// what is wrong (without the file name).
int64_t readNpyHeader(int fd, int64_t fileSize, const shardrt_tensor &expected, std::string &error,
                      bool &fortranOrder);

/// A version 1.0 header for `tensor`, padded so the data starts at a
/// multiple of 64 bytes.
std::string npyHeader(const shardrt_tensor &tensor);

} // namespace shardrt
