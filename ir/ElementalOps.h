// Which ops are computed element by element: the LLVM backend fuses them into
// one loop, and auto-sharding's pricing charges no memory traffic for the
// values such fusion never stores. One description for both.
#pragma once

#include "ir/Ops.h"

namespace shardc {

/// True for ops lowered element by element (backend/llvm/Elemental*.cpp can
/// compute any element of their result from its index): unary, binary,
/// convert, select, broadcast, reshape, transpose, concat, slice, pad,
/// constant, iota, random_*, reduce_* (a reduction's element loops over the
/// reduced dims), and all_slice, which needs no communication: a device's
/// block of a value built whole (iota, random values) computes only that
/// block.
bool isElementalOp(OpKind kind);

} // namespace shardc
