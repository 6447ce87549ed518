// The math helpers of TargetMath.h: their portable bodies, AVX-512's vector
// bodies with the vectorizer's mapping to them, and their late inlining.
#include "backend/llvm/TargetMath.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include <algorithm>
#include <string>
#include <vector>

namespace shardc::llvmgen {
namespace {

const char kExpScale[] = "shardc.exp.scale";

/// The vector bodies of exp.scale: vscalefps computes p * 2^floor(n) rounded
/// once, +inf on overflow, subnormals and 0 below, for every lane at once
/// (the portable body's shifts, subtraction and two multiplications). The
/// 128- and 256-bit forms need AVX-512VL.
struct VectorVariant {
  const char *name;
  unsigned lanes;
  llvm::Intrinsic::ID scalef;
  bool needsVl;
};
const VectorVariant kVariants[] = {
    {"shardc.exp.scale.v16", 16, llvm::Intrinsic::x86_avx512_mask_scalef_ps_512, false},
    {"shardc.exp.scale.v8", 8, llvm::Intrinsic::x86_avx512_mask_scalef_ps_256, true},
    {"shardc.exp.scale.v4", 4, llvm::Intrinsic::x86_avx512_mask_scalef_ps_128, true},
};

/// Attributes of a helper: no memory, no side effects, so that calls to it
/// vectorize and move like arithmetic.
void markPure(llvm::Function &f) {
  f.setDoesNotAccessMemory();
  f.setDoesNotThrow();
  f.setWillReturn();
  f.setDoesNotFreeMemory();
  f.addFnAttr(llvm::Attribute::NoSync);
}

/// Gives the vector body `f` (declared by the vectorizer's mapping) its
/// vscalefps.
void defineVariant(llvm::Function &f, const VectorVariant &variant) {
  llvm::Module &module = *f.getParent();
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(module.getContext(), "entry", &f));
  std::vector<llvm::Value *> args = {f.getArg(0), f.getArg(1),
                                     llvm::Constant::getNullValue(f.getReturnType()),
                                     b.getIntN(variant.lanes < 8 ? 8 : variant.lanes, -1)};
  if (variant.lanes == 16)
    args.push_back(b.getInt32(4)); // the current rounding mode
  llvm::Function *scalef = llvm::Intrinsic::getDeclaration(&module, variant.scalef);
  b.CreateRet(b.CreateCall(scalef, args));
}

/// Gives exp.scale its portable body: 2^n as two normal powers, 2^h with
/// h = floor(n / 2) and 2^(n - h), so that 2^128 overflows to +inf and
/// 2^-150 rounds to a subnormal or 0 in the last multiplication alone (one
/// rounding). Their biased exponents h + 127 and n - h + 127 are the low 9
/// bits of bits >> 1 and bits - (bits >> 1) (bits: `shifted`'s), which the
/// shift into place keeps.
void defineExpScale(llvm::Function &f) {
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(f.getContext(), "entry", &f));
  llvm::Type *floatType = f.getReturnType();
  llvm::Value *bits = b.CreateBitCast(f.getArg(2), b.getInt32Ty());
  llvm::Value *half = b.CreateLShr(bits, 1);
  auto power = [&](llvm::Value *biased) {
    return b.CreateBitCast(b.CreateShl(biased, 23), floatType);
  };
  b.CreateRet(b.CreateFMul(b.CreateFMul(f.getArg(0), power(half)), power(b.CreateSub(bits, half))));
}

/// Removes `gone` from llvm.compiler.used, keeping the other entries.
void removeFromCompilerUsed(llvm::Module &module, const std::vector<llvm::Function *> &gone) {
  llvm::GlobalVariable *used = module.getGlobalVariable("llvm.compiler.used");
  if (!used || !used->hasInitializer())
    return;
  std::vector<llvm::GlobalValue *> kept;
  if (auto *array = llvm::dyn_cast<llvm::ConstantArray>(used->getInitializer()))
    for (llvm::Value *entry : array->operand_values()) {
      auto *value = llvm::cast<llvm::GlobalValue>(entry->stripPointerCasts());
      if (std::find(gone.begin(), gone.end(), value) == gone.end())
        kept.push_back(value);
    }
  used->eraseFromParent();
  if (!kept.empty())
    llvm::appendToCompilerUsed(module, kept);
}

} // namespace

llvm::Function *expScaleFunction(llvm::Module &module) {
  if (llvm::Function *f = module.getFunction(kExpScale))
    return f;
  auto *floatType = llvm::Type::getFloatTy(module.getContext());
  auto *f = llvm::Function::Create(
      llvm::FunctionType::get(floatType, {floatType, floatType, floatType}, false),
      llvm::Function::InternalLinkage, kExpScale, module);
  markPure(*f);
  f->addFnAttr(llvm::Attribute::AlwaysInline); // prepareTargetMath may keep it
  defineExpScale(*f);
  return f;
}

void prepareTargetMath(llvm::Module &module, llvm::TargetLibraryInfoImpl &libraryInfo,
                       const llvm::MCSubtargetInfo *subtarget) {
  llvm::Function *expScale = module.getFunction(kExpScale);
  if (!expScale || !subtarget || !subtarget->checkFeatures("+avx512f"))
    return; // the portable body, inlined by the pipeline's first inliner
  // A declaration until the vectorizer has replaced the calls in vector
  // loops by calls to the vector bodies (which it declares): with a body,
  // the interprocedural passes would see that the portable one ignores n and
  // pass undef for it.
  expScale->deleteBody();
  expScale->removeFnAttr(llvm::Attribute::AlwaysInline);
  const bool vl = subtarget->checkFeatures("+avx512vl");
  std::vector<llvm::VecDesc> descs;
  for (const VectorVariant &variant : kVariants)
    if (!variant.needsVl || vl)
      descs.push_back({kExpScale, variant.name, llvm::ElementCount::getFixed(variant.lanes)});
  libraryInfo.addVectorizableFunctions(descs);
}

void finishTargetMath(llvm::Module &module) {
  std::vector<llvm::Function *> found;
  if (llvm::Function *f = module.getFunction(kExpScale)) {
    if (f->isDeclaration())
      defineExpScale(*f);
    found.push_back(f);
  }
  for (const VectorVariant &variant : kVariants)
    if (llvm::Function *f = module.getFunction(variant.name)) {
      if (f->isDeclaration())
        defineVariant(*f, variant);
      found.push_back(f);
    }
  if (found.empty())
    return;
  removeFromCompilerUsed(module, found);
  for (llvm::Function *f : found) {
    f->setLinkage(llvm::Function::InternalLinkage);
    std::vector<llvm::CallBase *> calls;
    for (llvm::User *user : f->users())
      if (auto *call = llvm::dyn_cast<llvm::CallBase>(user); call && call->getCalledFunction() == f)
        calls.push_back(call);
    for (llvm::CallBase *call : calls) {
      llvm::InlineFunctionInfo info;
      llvm::InlineFunction(*call, info);
    }
  }
  for (llvm::Function *f : found) {
    f->removeDeadConstantUsers(); // the casts of the old compiler.used
    if (f->use_empty())
      f->eraseFromParent();
  }
}

} // namespace shardc::llvmgen
