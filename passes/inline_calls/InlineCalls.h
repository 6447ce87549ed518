// The inline-calls stage: `call` means what inlining the callee would mean
// (LANGUAGE.md section 9), so each call is replaced by a copy of the callee's
// body before shardings are decided.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"

namespace shardc {

/// inline-calls: replaces every `call @f(...)` by a copy of @f's body
/// (nested calls too; infer-types has rejected recursion). A parameter or
/// result sharding written in @f's signature is kept at the call site as a
/// `sharding_constraint` (a `reshard` when `explicitMode`), so the caller's
/// value is resharded where it differs. Copied values are named
/// `%<callee>.<name>`; a returned op result takes the call result's name.
void inlineCalls(Module &module, bool explicitMode);

} // namespace shardc
