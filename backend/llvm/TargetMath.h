// Math helpers with a portable body that the emitter calls and, on targets
// with a better instruction, vector bodies the loop vectorizer calls instead
// and that are inlined once it is done (LLVM's vectorizer cannot widen a
// target's own vector intrinsics written in scalar code).
#pragma once

#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/MCSubtargetInfo.h>

namespace shardc::llvmgen {

/// `T shardc.exp.scale[.f64](T p, T n, T shifted)` for T `type` (float or
/// double): p * 2^n rounded once, for p in [0.5, 2], n an integer in
/// [-150, 128] ([-1076, 1024] for double) and `shifted` the sum whose low 9
/// (12) bits are n + 254 (n + 2046), twice the exponent bias (how exp
/// rounds n; see emitExp). Results beyond the type's range are +inf or a
/// subnormal or 0, as the exact product rounds. Created in `module` on first
/// use; the portable body works from `shifted`'s bits, AVX-512's
/// vscalefps / vscalefpd from `n`.
llvm::Function *expScaleFunction(llvm::Module &module, llvm::Type *type);

/// Before the optimization pipeline: on targets with AVX-512F, keeps the
/// module's helpers out of line and gives the vectorizer their vector bodies
/// (through `libraryInfo`); elsewhere marks them to be inlined at once.
void prepareTargetMath(llvm::Module &module, llvm::TargetLibraryInfoImpl &libraryInfo,
                       const llvm::MCSubtargetInfo *subtarget);

/// After the pipeline: inlines the helpers' calls (scalar and vector) and
/// removes the helpers.
void finishTargetMath(llvm::Module &module);

} // namespace shardc::llvmgen
