// Copies of ops and blocks with their regions, and use replacement: what
// inlining a call and rewriting regions need.
#pragma once

#include "ir/IR.h"

#include <map>
#include <memory>

namespace shardc {

/// Old value -> its copy. Operands found here are remapped; others (values
/// defined outside what is copied) are kept as they are.
using ValueMap = std::map<const Value *, Value *>;

/// A deep copy of `op`: attributes, results (recorded in `map`) and regions.
std::unique_ptr<Op> cloneOp(const Op &op, ValueMap &map);
/// Copies `from`'s arguments, ops and return into the empty block `to`.
void cloneBlockInto(const Block &from, Block &to, ValueMap &map);

/// Makes every use of `from` in `block` (operands and returns, in nested
/// regions too) a use of `to`.
void replaceAllUses(Block &block, const Value *from, Value *to);

} // namespace shardc
