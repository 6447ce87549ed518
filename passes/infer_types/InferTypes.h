// The infer-types stage: every op result's tensor type from its operands.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"

namespace shardc {

/// infer-types: infers every op result's tensor type from its operands and
/// attributes (numpy/ONNX broadcasting, matmul and einsum dims, reductions
/// with keep_dims, reshape element count, transpose perm, concat, slice and
/// pad bounds, dtype rules) and checks any written result type against it.
/// Returns false when it reported an error.
bool inferTypes(Module &module, DiagnosticEngine &diags);

} // namespace shardc
