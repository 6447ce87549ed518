// The back half of the pipeline as the front half sees it: an interface with
// no LLVM types, so that the pipeline description (Pipeline.cpp) can name
// the back-end stages while the language server links only the front half.
// The native backend (backend/llvm/NativeBackend.h) implements it.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"

#include <string>

namespace shardc {

/// One program through the back half: each call is one stage of the
/// pipeline, in order. A stage reports its problems to `diags` and returns
/// false; the pipeline then stops.
class Backend {
public:
  virtual ~Backend() = default;
  /// lower-llvm: the partitioned (per-device) module to the backend's IR.
  virtual bool lower(const Module &spmd, DiagnosticEngine &diags) = 0;
  /// optimize-llvm: the backend's optimization pipeline for the target.
  virtual bool optimize(DiagnosticEngine &diags) = 0;
  /// codegen: the backend's IR to an object file.
  virtual bool emitObject(DiagnosticEngine &diags) = 0;
  /// link: the object file with the runtime into the executable.
  virtual bool link(DiagnosticEngine &diags) = 0;
  /// The backend's IR as text (--emit=llvm, --print-ir-after).
  virtual std::string printIR() const = 0;
  /// One line on what the back half did, for --time-passes; empty if nothing.
  virtual std::string kernelSummary() const { return {}; }
};

} // namespace shardc
