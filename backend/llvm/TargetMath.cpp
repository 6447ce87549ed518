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

/// A vector body of an exp.scale helper: vscalefps / vscalefpd computes
/// p * 2^floor(n) rounded once, +inf on overflow, subnormals and 0 below,
/// for every lane at once (the portable body's shifts, subtraction and two
/// multiplications). The 128- and 256-bit forms need AVX-512VL.
struct VectorVariant {
  const char *name;
  unsigned lanes;
  llvm::Intrinsic::ID scalef;
  bool needsVl;
};

/// An exp.scale helper of one element type and its vector bodies.
struct Helper {
  const char *name;
  bool isDouble;
  VectorVariant variants[3];
};

const Helper kHelpers[] = {
    {"shardc.exp.scale",
     false,
     {{"shardc.exp.scale.v16", 16, llvm::Intrinsic::x86_avx512_mask_scalef_ps_512, false},
      {"shardc.exp.scale.v8", 8, llvm::Intrinsic::x86_avx512_mask_scalef_ps_256, true},
      {"shardc.exp.scale.v4", 4, llvm::Intrinsic::x86_avx512_mask_scalef_ps_128, true}}},
    {"shardc.exp.scale.f64",
     true,
     {{"shardc.exp.scale.f64.v8", 8, llvm::Intrinsic::x86_avx512_mask_scalef_pd_512, false},
      {"shardc.exp.scale.f64.v4", 4, llvm::Intrinsic::x86_avx512_mask_scalef_pd_256, true},
      {"shardc.exp.scale.f64.v2", 2, llvm::Intrinsic::x86_avx512_mask_scalef_pd_128, true}}},
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
  const bool wide = f.getReturnType()->getPrimitiveSizeInBits() == 512;
  std::vector<llvm::Value *> args = {f.getArg(0), f.getArg(1),
                                     llvm::Constant::getNullValue(f.getReturnType()),
                                     b.getIntN(variant.lanes < 8 ? 8 : variant.lanes, -1)};
  if (wide)
    args.push_back(b.getInt32(4)); // the current rounding mode
  llvm::Function *scalef = llvm::Intrinsic::getDeclaration(&module, variant.scalef);
  b.CreateRet(b.CreateCall(scalef, args));
}

/// Gives exp.scale its portable body: 2^n as two normal powers, 2^h with
/// h = floor(n / 2) and 2^(n - h), so that 2^128 (2^1024) overflows to +inf
/// and 2^-150 (2^-1076) rounds to a subnormal or 0 in the last
/// multiplication alone (one rounding). Their biased exponents h + bias and
/// n - h + bias are the low 9 (12) bits of bits >> 1 and bits - (bits >> 1)
/// (bits: `shifted`'s), which the shift into place keeps.
void defineExpScale(llvm::Function &f) {
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(f.getContext(), "entry", &f));
  llvm::Type *floatType = f.getReturnType();
  const bool isDouble = floatType->isDoubleTy();
  llvm::Value *bits = b.CreateBitCast(f.getArg(2), isDouble ? b.getInt64Ty() : b.getInt32Ty());
  llvm::Value *half = b.CreateLShr(bits, 1);
  auto power = [&](llvm::Value *biased) {
    return b.CreateBitCast(b.CreateShl(biased, isDouble ? 52 : 23), floatType);
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

llvm::Function *expScaleFunction(llvm::Module &module, llvm::Type *type) {
  const Helper &helper = kHelpers[type->isDoubleTy() ? 1 : 0];
  if (llvm::Function *f = module.getFunction(helper.name))
    return f;
  auto *f = llvm::Function::Create(llvm::FunctionType::get(type, {type, type, type}, false),
                                   llvm::Function::InternalLinkage, helper.name, module);
  markPure(*f);
  f->addFnAttr(llvm::Attribute::AlwaysInline); // prepareTargetMath may keep it
  defineExpScale(*f);
  return f;
}

void prepareTargetMath(llvm::Module &module, llvm::TargetLibraryInfoImpl &libraryInfo,
                       const llvm::MCSubtargetInfo *subtarget) {
  if (!subtarget || !subtarget->checkFeatures("+avx512f"))
    return; // the portable bodies, inlined by the pipeline's first inliner
  const bool vl = subtarget->checkFeatures("+avx512vl");
  std::vector<llvm::VecDesc> descs;
  for (const Helper &helper : kHelpers) {
    llvm::Function *f = module.getFunction(helper.name);
    if (!f)
      continue;
    // A declaration until the vectorizer has replaced the calls in vector
    // loops by calls to the vector bodies (which it declares): with a body,
    // the interprocedural passes would see that the portable one ignores n
    // and pass undef for it.
    f->deleteBody();
    f->removeFnAttr(llvm::Attribute::AlwaysInline);
    for (const VectorVariant &variant : helper.variants)
      if (!variant.needsVl || vl)
        descs.push_back({helper.name, variant.name, llvm::ElementCount::getFixed(variant.lanes)});
  }
  libraryInfo.addVectorizableFunctions(descs);
}

void finishTargetMath(llvm::Module &module) {
  std::vector<llvm::Function *> found;
  for (const Helper &helper : kHelpers) {
    if (llvm::Function *f = module.getFunction(helper.name)) {
      if (f->isDeclaration())
        defineExpScale(*f);
      found.push_back(f);
    }
    for (const VectorVariant &variant : helper.variants)
      if (llvm::Function *f = module.getFunction(variant.name)) {
        if (f->isDeclaration())
          defineVariant(*f, variant);
        found.push_back(f);
      }
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
