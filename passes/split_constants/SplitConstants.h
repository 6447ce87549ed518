// The split-constants stage: Shardy's constant-or-scalar splitter, the import
// step that gives every use of a constant its own copy before propagation,
// so that a constant two ops read in different layouts joins neither layout
// to the other (LANGUAGE.md section 6: Shardy's default pipeline).
#pragma once

#include "ir/IR.h"

namespace shardc {

/// split-constants, on every function: each use of a constant expression
/// (a `constant` or `iota`, or a broadcast, reshape, slice or elementwise op
/// of constant expressions) by an op that is not one, or by a `return`,
/// reads a copy of the whole expression of its own, placed before the
/// original ops; so does each use of a broadcast of a rank-0 value. Rank-0
/// values are not copied (they are never sharded). An original whose every
/// use now reads a copy is removed; one nothing read stays. The first copy
/// of a value keeps its name, later ones are `%<name>.<k>`.
void splitConstants(Module &module);

} // namespace shardc
