// A harness for the LLVM backend's elemental lowering on its own: compiles a
// .shd @main whose ops are all elemental into one JIT-compiled function
// (`void kernel(i8 **buffers)`: one buffer per materialized value, in the
// order arguments, then op results), optimizes it with the driver's pipeline
// (optimizeModule: O3 for the host, libmvec's vector math), runs it on
// interpreter tensors and returns @main's results.
#pragma once

#include "CompileForTest.h"
#include "backend/interpreter/Interpreter.h"
#include "backend/llvm/Lowering.h"
#include "backend/llvm/Target.h"
#include "pipeline/Pipeline.h"

#include <catch2/catch.hpp>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace shardc::testing {

class ElementalKernel {
public:
  /// Compiles `source` (valid, @main all elemental) to a JIT-compiled kernel,
  /// optimized for `cpu` (run on the host: it must not need more).
  explicit ElementalKernel(const std::string &source, const std::string &cpu = "native")
      : cpu_(cpu) {
    program_ = compileForTest("elemental.shd", source);
    main_ = program_->findFunction("main");
    REQUIRE(main_);
    plan_ = llvmgen::planFusion(main_->body);
    build();
  }

  /// @main's results on `args`, computed by the kernel.
  std::vector<interp::Tensor> run(const std::vector<interp::Tensor> &args) {
    std::vector<std::vector<char>> memory;
    std::vector<void *> pointers;
    for (const Value *v : slots_) {
      memory.emplace_back(static_cast<size_t>(v->type.bytes()) + 1);
      pointers.push_back(memory.back().data());
    }
    for (size_t i = 0; i < args.size(); ++i)
      toBytes(args[i], memory[i].data());
    kernel_(pointers.data());
    std::vector<interp::Tensor> results;
    for (const Value *v : main_->body.returned)
      results.push_back(fromBytes(v->type, memory[slotOf(v)].data()));
    return results;
  }

  /// The interpreter's results on the same arguments.
  std::vector<interp::Tensor> interpret(const std::vector<interp::Tensor> &args) const {
    return interp::runFunction(*program_, *main_, args);
  }

  /// Random arguments (the interpreter's randomTensor) for every parameter.
  std::vector<interp::Tensor> randomArgs(uint64_t seed) const {
    std::vector<interp::Tensor> args;
    for (size_t i = 0; i < main_->body.args.size(); ++i)
      args.push_back(interp::randomTensor(main_->body.args[i]->type, seed, i));
    return args;
  }

  const llvmgen::FusionPlan &plan() const { return plan_; }
  const Function &main() const { return *main_; }
  /// The optimized IR of the kernel.
  const std::string &ir() const { return ir_; }

private:
  std::string cpu_;
  std::unique_ptr<Module> program_;
  const Function *main_ = nullptr;
  llvmgen::FusionPlan plan_;
  std::vector<const Value *> slots_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  void (*kernel_)(void **) = nullptr;
  std::string ir_;

  size_t slotOf(const Value *v) const {
    for (size_t i = 0; i < slots_.size(); ++i)
      if (slots_[i] == v)
        return i;
    FAIL("no buffer for %" << v->name);
    return 0;
  }

  void build() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    // libmvec's vector functions, for the vectorized math calls.
    llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1");
    auto context = std::make_unique<llvm::LLVMContext>();
    auto module = std::make_unique<llvm::Module>("elemental", *context);
    llvm::IRBuilder<> builder(*context);
    auto *fnType = llvm::FunctionType::get(builder.getVoidTy(),
                                           {builder.getInt8PtrTy()->getPointerTo()}, false);
    auto *fn =
        llvm::Function::Create(fnType, llvm::Function::ExternalLinkage, "kernel", module.get());
    builder.SetInsertPoint(llvm::BasicBlock::Create(*context, "entry", fn));
    llvmgen::KernelLowering k(*context, *module, builder, *program_, nullptr);
    k.setFusion(&plan_);
    auto bind = [&](const Value *v) {
      llvm::Value *slot =
          builder.CreateConstInBoundsGEP1_64(builder.getInt8PtrTy(), fn->getArg(0), slots_.size());
      k.setBuffer(v, builder.CreateLoad(builder.getInt8PtrTy(), slot));
      slots_.push_back(v);
    };
    for (const auto &arg : main_->body.args)
      bind(arg.get());
    for (const auto &op : main_->body.ops)
      for (const auto &result : op->results)
        if (plan_.isMaterialized(result.get())) {
          REQUIRE(shardc::isElementalOp(op->kind));
          bind(result.get());
          llvmgen::emitElementalOp(k, result.get());
        }
    builder.CreateRetVoid();
    std::string errors;
    llvm::raw_string_ostream errorStream(errors);
    INFO(errors);
    REQUIRE_FALSE(llvm::verifyModule(*module, &errorStream));

    // The driver's pipeline: O3 for the host with libmvec's vector math.
    std::string error;
    std::unique_ptr<llvm::TargetMachine> machine = llvmgen::createTargetMachine(cpu_, error);
    REQUIRE(machine);
    llvmgen::optimizeModule(*module, *machine);
    auto machineBuilder = llvm::cantFail(llvm::orc::JITTargetMachineBuilder::detectHost());
    llvm::raw_string_ostream irStream(ir_);
    module->print(irStream, nullptr);
    jit_ = llvm::cantFail(
        llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(machineBuilder).create());
    jit_->getMainJITDylib().addGenerator(
        llvm::cantFail(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
            jit_->getDataLayout().getGlobalPrefix())));
    // optimizeModule's constructor sets OpenBLAS to one thread; never run here.
    static void (*const noBlas)(int) = [](int) {};
    llvm::cantFail(jit_->getMainJITDylib().define(llvm::orc::absoluteSymbols(
        {{jit_->mangleAndIntern("openblas_set_num_threads"),
          llvm::JITEvaluatedSymbol(llvm::pointerToJITTargetAddress(noBlas),
                                   llvm::JITSymbolFlags::Exported)}})));
    llvm::cantFail(
        jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context))));
    kernel_ =
        reinterpret_cast<void (*)(void **)>(llvm::cantFail(jit_->lookup("kernel")).getAddress());
  }

  static void toBytes(const interp::Tensor &t, char *out) {
    for (int64_t i = 0; i < t.size(); ++i) {
      switch (t.dtype()) {
      case DType::F32: {
        float f = static_cast<float>(t.floatAt(i));
        std::memcpy(out + 4 * i, &f, 4);
        break;
      }
      case DType::F64:
        std::memcpy(out + 8 * i, &t.floats()[i], 8);
        break;
      case DType::I32: {
        int32_t v = static_cast<int32_t>(t.intAt(i));
        std::memcpy(out + 4 * i, &v, 4);
        break;
      }
      case DType::I64:
        std::memcpy(out + 8 * i, &t.ints()[i], 8);
        break;
      case DType::I1:
        out[i] = static_cast<char>(t.intAt(i) != 0);
        break;
      }
    }
  }

  static interp::Tensor fromBytes(const TensorType &type, const char *in) {
    interp::Tensor t(type);
    for (int64_t i = 0; i < t.size(); ++i) {
      switch (type.dtype) {
      case DType::F32: {
        float f;
        std::memcpy(&f, in + 4 * i, 4);
        t.setFloat(i, f);
        break;
      }
      case DType::F64: {
        double d;
        std::memcpy(&d, in + 8 * i, 8);
        t.setFloat(i, d);
        break;
      }
      case DType::I32: {
        int32_t v;
        std::memcpy(&v, in + 4 * i, 4);
        t.setInt(i, static_cast<uint64_t>(static_cast<int64_t>(v)));
        break;
      }
      case DType::I64: {
        int64_t v;
        std::memcpy(&v, in + 8 * i, 8);
        t.setInt(i, static_cast<uint64_t>(v));
        break;
      }
      case DType::I1:
        CHECK((in[i] == 0 || in[i] == 1)); // i1 in memory is one byte, 0 or 1
        t.setInt(i, static_cast<uint64_t>(in[i]));
        break;
      }
    }
    return t;
  }
};

/// The kernel's results equal the interpreter's on `args` (floats within
/// rtol/atol, integers exactly).
inline void checkAgainstInterpreter(ElementalKernel &kernel,
                                    const std::vector<interp::Tensor> &args, double rtol = 1e-6,
                                    double atol = 1e-7) {
  std::vector<interp::Tensor> expected = kernel.interpret(args);
  std::vector<interp::Tensor> actual = kernel.run(args);
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    std::string why;
    bool close = interp::allClose(actual[i], expected[i], rtol, atol, &why);
    INFO("result " << i << ": " << why);
    CHECK(close);
  }
}

/// `func @main(params) -> result { body }`.
inline std::string program(const std::string &params, const std::string &body,
                           const std::string &result) {
  return "func @main(" + params + ") -> " + result + " {\n" + body + "\n}\n";
}

/// Compiles `source` and compares it with the interpreter on random inputs
/// for a few seeds.
inline void checkRandom(const std::string &source, double rtol = 1e-6, double atol = 1e-7) {
  INFO(source);
  ElementalKernel kernel(source);
  for (uint64_t seed : {1, 2, 3})
    checkAgainstInterpreter(kernel, kernel.randomArgs(seed), rtol, atol);
}

/// Whether `ir` (optimized) computes an exp inline on vectors: its 2^n by
/// integer shifts, or by AVX-512's vscalefps / vscalefpd (TargetMath.h).
inline bool hasInlineVectorExp(const std::string &ir) {
  return ir.find("shl <") != std::string::npos ||
         ir.find("@llvm.x86.avx512.mask.scalef.p") != std::string::npos;
}

} // namespace shardc::testing
