// Kernels as modules of their own: emitting one op's kernel with its
// arguments, keeping one module per structural key, and the driver's call.
#include "backend/llvm/KernelUnit.h"

#include "backend/llvm/Codegen.h"
#include "backend/llvm/KernelEmitter.h"

#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/SHA1.h>
#include <llvm/Support/raw_ostream.h>

namespace shardc::llvmgen {
std::string kernelKey(const llvm::Module &module) {
  // The module's bitcode, without the symbol table a bitcode file carries:
  // as exact as the printed IR, which it replaced because printing took a
  // fifth of a 10,000-op build (the assembly writer tracks the column of
  // every character it writes).
  llvm::SmallVector<char, 0> bitcode;
  llvm::BitcodeWriter writer(bitcode);
  writer.writeModule(module);
  writer.writeStrtab();
  return std::string(bitcode.data(), bitcode.size());
}

std::string sha1Hex(const std::string &text) {
  llvm::SHA1 hash;
  hash.update(text);
  std::string hex;
  for (uint8_t byte : hash.final()) {
    static const char digits[] = "0123456789abcdef";
    hex += digits[byte >> 4];
    hex += digits[byte & 15];
  }
  return hex;
}

KernelUnit KernelEmitter::emitKernel(llvm::LLVMContext &context,
                                     std::unique_ptr<llvm::LLVMContext> owned,
                                     const std::function<void(KernelLowering &)> &body,
                                     std::vector<KernelArgument> &arguments) {
  KernelUnit unit;
  unit.context = std::move(owned);
  unit.module = std::make_unique<llvm::Module>("shardc.kernel", context);
  llvm::IRBuilder<> b(context);
  auto *i8p = b.getInt8PtrTy();
  auto *type = llvm::FunctionType::get(b.getVoidTy(), {i8p, i8p->getPointerTo()}, false);
  auto *fn =
      llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, "kernel", *unit.module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->setVisibility(llvm::GlobalValue::HiddenVisibility);
  auto *entry = llvm::BasicBlock::Create(context, "entry", fn);
  auto *start = llvm::BasicBlock::Create(context, "start", fn);
  b.SetInsertPoint(entry);
  llvm::BranchInst *toStart = b.CreateBr(start);
  b.SetInsertPoint(start);

  // Arguments are loaded at the entry, numbered in the order first used.
  arguments.clear();
  auto argument = [&](KernelArgument a) -> llvm::Value * {
    size_t i = 0;
    while (i < arguments.size() && arguments[i] != a)
      ++i;
    llvm::IRBuilder<> at(toStart);
    llvm::Value *slot = at.CreateConstInBoundsGEP1_64(i8p, fn->getArg(1), i);
    if (i == arguments.size())
      arguments.push_back(a);
    return at.CreateLoad(i8p, slot, "arg" + std::to_string(i));
  };
  KernelLowering k(context, *unit.module, b, program_, fn->getArg(0));
  k.meshIndices = k_->meshIndices;
  k.vectorBytes = k_->vectorBytes;
  k.setFusion(&k_->fusion());
  k.setCurrentMesh(k_->currentMesh());
  k.bufferSource = [&](const Value *v) -> llvm::Value * {
    if (!plan_.hasStorage(v))
      return nullptr;
    return argument({plan_.storageOf(v), nullptr});
  };
  k.externalPointer = [&](llvm::Constant *c) { return argument({nullptr, c}); };
  // An i64 passed as an argument (a constant pointer of that value in the
  // driver), read back at the entry.
  auto integerArgument = [&](int64_t value, const char *name) -> llvm::Value * {
    auto *constant = llvm::ConstantExpr::getIntToPtr(
        builder_.getInt64(static_cast<uint64_t>(value)), builder_.getInt8PtrTy());
    llvm::Value *pointer = argument({nullptr, constant});
    llvm::IRBuilder<> at(toStart);
    return at.CreatePtrToInt(pointer, at.getInt64Ty(), name);
  };
  k.opIdValue = [&](const Op &op) { return integerArgument(k_->opId(op), "op_id"); };
  k.externalInt = [&](int64_t value) { return integerArgument(value, "size"); };
  k.groupIndex = [&](const std::vector<AxisRef> &axes) -> llvm::Value * {
    const Mesh *mesh = k.currentMesh();
    if (!mesh)
      throw CodegenError(Loc{}, "a device's group index outside a manual_computation");
    llvm::Value *group = argument({nullptr, description_.group(*mesh, axes)});
    llvm::IRBuilder<> at(toStart);
    llvm::FunctionCallee index = unit.module->getOrInsertFunction(
        "shardrt_group_index", llvm::FunctionType::get(at.getInt64Ty(), {i8p, i8p}, false));
    return at.CreateCall(index, {fn->getArg(0), group}, "group_index");
  };
  body(k);
  b.CreateRetVoid();
  unit.key = kernelKey(*unit.module);
  return unit;
}

void KernelEmitter::emitKernelCall(const std::function<void(KernelLowering &)> &body) {
  // A candidate in the scratch context first: when its key is known, it is
  // dropped; when new, it is emitted again in a context of its own (kernels
  // compile on threads), which must give the same key.
  const bool discardNames = module_.getContext().shouldDiscardValueNames();
  if (!scratch_) {
    scratch_ = std::make_unique<llvm::LLVMContext>();
    scratch_->setDiscardValueNames(discardNames);
  }
  std::vector<KernelArgument> arguments;
  std::string key = emitKernel(*scratch_, nullptr, body, arguments).key;
  auto [known, added] = kernelByKey_.emplace(std::move(key), kernels_.size());
  if (added) {
    auto context = std::make_unique<llvm::LLVMContext>();
    context->setDiscardValueNames(discardNames);
    llvm::LLVMContext &own = *context;
    KernelUnit unit = emitKernel(own, std::move(context), body, arguments);
    if (unit.key != known->first)
      throw std::logic_error("the LLVM backend emitted one kernel two ways");
    std::string problems;
    llvm::raw_string_ostream out(problems);
    if (llvm::verifyModule(*unit.module, &out))
      throw std::logic_error("the LLVM backend produced an invalid kernel: " + out.str());
    unit.symbol = "shardc_kernel_" + sha1Hex(unit.key);
    unit.module->getFunction("kernel")->setName(unit.symbol);
    kernels_.push_back(std::move(unit));
  }
  KernelUnit &kernel = kernels_[known->second];
  ++kernel.calls;
  const std::string &symbol = kernel.symbol;

  // The call: the arguments into the driver's array, computed here.
  ++kernelCalls_;
  mostKernelArgs_ = std::max(mostKernelArgs_, arguments.size());
  auto *driverI8p = builder_.getInt8PtrTy();
  k_->resetBuffers();
  for (size_t i = 0; i < arguments.size(); ++i) {
    const Value *stored = arguments[i].first;
    llvm::Value *value = nullptr;
    if (const SliceChain::View *view = stored ? plan_.viewOf(stored) : nullptr)
      value = builder_.CreateInBoundsGEP(builder_.getInt8Ty(), k_->buffer(view->original),
                                         sliceOffsets_.at(stored)); // this slice of it
    else if (stored)
      value = k_->buffer(stored);
    else
      value = llvm::ConstantExpr::getPointerCast(arguments[i].second, driverI8p);
    builder_.CreateStore(value, builder_.CreateConstInBoundsGEP1_64(driverI8p, kernelArgs_, i));
  }
  llvm::FunctionCallee callee = module_.getOrInsertFunction(
      symbol,
      llvm::FunctionType::get(builder_.getVoidTy(), {driverI8p, driverI8p->getPointerTo()}, false));
  builder_.CreateCall(callee, {kernelContext_, kernelArgs_});
}

} // namespace shardc::llvmgen
