// The LLVM backend's core (backend/llvm/Codegen.h): the shardrt_program
// constant matches what the runtime reads (runtime/shardrt.h), the lowered
// examples verify, the arena reuses the memory of dead values, and what
// cannot be lowered is a CodegenError at the op.
#include "CompileForTest.h"
#include "backend/llvm/Codegen.h"
#include "pipeline/Pipeline.h"

#include <catch2/catch.hpp>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Verifier.h>

#include <fstream>
#include <sstream>

using namespace shardc;

namespace {

std::unique_ptr<Module> partitioned(const std::string &name, const std::string &source,
                                    const char *emit = "spmd") {
  return shardc::testing::compileForTest(name, source, emit);
}

std::string example(const std::string &name) {
  std::ifstream in(std::string(SHARDC_SOURCE_DIR) + "/examples/" + name);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Field `i` of a constant struct.
llvm::Constant *field(llvm::Constant *s, unsigned i) { return s->getAggregateElement(i); }

int64_t intField(llvm::Constant *s, unsigned i) {
  return llvm::cast<llvm::ConstantInt>(field(s, i))->getSExtValue();
}

/// The elements of the constant array a `T *` field points into.
std::vector<llvm::Constant *> pointee(llvm::Constant *pointer) {
  std::vector<llvm::Constant *> out;
  if (llvm::isa<llvm::ConstantPointerNull>(pointer))
    return out;
  auto *gep = llvm::cast<llvm::ConstantExpr>(pointer);
  auto *global = llvm::cast<llvm::GlobalVariable>(gep->getOperand(0)->stripPointerCasts());
  llvm::Constant *init = global->getInitializer();
  if (auto *data = llvm::dyn_cast<llvm::ConstantDataSequential>(init)) {
    for (unsigned i = 0; i < data->getNumElements(); ++i)
      out.push_back(data->getElementAsConstant(i));
    return out;
  }
  for (unsigned i = 0; i < init->getNumOperands(); ++i)
    out.push_back(llvm::cast<llvm::Constant>(init->getOperand(i)));
  return out;
}

std::vector<int64_t> ints(llvm::Constant *pointer) {
  std::vector<int64_t> out;
  for (llvm::Constant *c : pointee(pointer))
    out.push_back(llvm::cast<llvm::ConstantInt>(c)->getSExtValue());
  return out;
}

std::string text(llvm::Constant *pointer) {
  auto *global = llvm::cast<llvm::GlobalVariable>(pointer->stripPointerCasts());
  return llvm::cast<llvm::ConstantDataArray>(global->getInitializer())->getAsCString().str();
}

llvm::Constant *programOf(llvm::Module &m) {
  llvm::GlobalVariable *program = m.getGlobalVariable("shardc.program", /*AllowInternal=*/true);
  REQUIRE(program);
  return program->getInitializer();
}

/// The size the kernel asks shardrt_alloc for (its arena).
int64_t arenaBytes(llvm::Module &m) {
  for (llvm::Function &f : m)
    for (llvm::BasicBlock &block : f)
      for (llvm::Instruction &inst : block)
        if (auto *call = llvm::dyn_cast<llvm::CallInst>(&inst))
          if (call->getCalledFunction() && call->getCalledFunction()->getName() == "shardrt_alloc")
            return llvm::cast<llvm::ConstantInt>(call->getArgOperand(1))->getSExtValue();
  FAIL("no shardrt_alloc call");
  return -1;
}

int countCalls(llvm::Module &m, const std::string &name) {
  int count = 0;
  for (llvm::Function &f : m)
    for (llvm::BasicBlock &block : f)
      for (llvm::Instruction &inst : block)
        if (auto *call = llvm::dyn_cast<llvm::CallInst>(&inst))
          count += call->getCalledFunction() && call->getCalledFunction()->getName() == name;
  return count;
}

} // namespace

TEST_CASE("llvm program: two_meshes' description matches the runtime's structs", "[llvm]") {
  auto spmd = partitioned("two_meshes.shd", example("two_meshes.shd"));
  llvm::LLVMContext context;
  auto lowered = llvmgen::lowerProgram(*spmd, context, "two_meshes");
  auto &m = lowered.driver;
  REQUIRE_FALSE(llvm::verifyModule(*m, &llvm::errs()));
  llvm::Constant *program = programOf(*m);
  CHECK(text(field(program, 0)) == "two_meshes");
  CHECK(intField(program, 1) == 8); // num_devices
  REQUIRE(intField(program, 2) == 2);
  std::vector<llvm::Constant *> meshes = pointee(field(program, 3));
  REQUIRE(meshes.size() == 2);
  CHECK(text(field(meshes[0], 0)) == "row");
  CHECK(intField(meshes[0], 1) == 2);
  CHECK(text(pointee(field(meshes[0], 2))[1]) == "y");
  CHECK(ints(field(meshes[0], 3)) == std::vector<int64_t>{2, 4});
  CHECK(llvm::isa<llvm::ConstantPointerNull>(field(meshes[0], 4)));
  CHECK(ints(field(meshes[1], 4)) == std::vector<int64_t>{0, 4, 1, 5, 2, 6, 3, 7});

  // inputs: %x on @row [{"x"}, {"y"}], %w on @col [{"a"}, {}]
  REQUIRE(intField(program, 4) == 2);
  std::vector<llvm::Constant *> inputs = pointee(field(program, 5));
  CHECK(text(field(inputs[0], 0)) == "x");
  CHECK(intField(inputs[0], 1) == 0); // SHARDRT_F32
  CHECK(ints(field(inputs[0], 3)) == std::vector<int64_t>{16, 64});
  CHECK(intField(inputs[0], 4) == 0);
  CHECK(ints(field(inputs[0], 5)) == std::vector<int64_t>{1, 1});
  std::vector<llvm::Constant *> axes = pointee(field(inputs[0], 6));
  REQUIRE(axes.size() == 2);
  CHECK(intField(axes[1], 0) == 1); // "y"
  CHECK(intField(axes[1], 1) == 1);
  CHECK(intField(axes[1], 2) == 4);
  CHECK(text(field(inputs[1], 0)) == "w");
  CHECK(intField(inputs[1], 4) == 1);
  CHECK(ints(field(inputs[1], 5)) == std::vector<int64_t>{1, 0});

  // the output, a result: no name
  REQUIRE(intField(program, 6) == 1);
  llvm::Constant *output = pointee(field(program, 7))[0];
  CHECK(llvm::isa<llvm::ConstantPointerNull>(field(output, 0)));
  CHECK(ints(field(output, 3)) == std::vector<int64_t>{16, 32});

  // the matmul's all_reduce over "a" of @col is a listed group
  std::vector<llvm::Constant *> groups = pointee(field(program, 9));
  REQUIRE(groups.size() == 1);
  CHECK(intField(groups[0], 0) == 1);
  CHECK(intField(groups[0], 1) == 1);
  CHECK(intField(pointee(field(groups[0], 2))[0], 2) == 4);

  // op names label the profile; the reshard between meshes is one of them
  std::vector<std::string> names;
  for (llvm::Constant *name : pointee(field(program, 11)))
    names.push_back(text(name));
  CHECK(std::find(names.begin(), names.end(), "%m = reshard (two_meshes.shd:22:8)") != names.end());
  CHECK(countCalls(*m, "shardrt_redistribute") == 1);
  CHECK(m->getFunction("main"));
}

TEST_CASE("llvm program: the examples lower to modules that verify", "[llvm]") {
  for (const char *name : {"mlp.shd", "two_meshes.shd", "reductions.shd", "reshape_subaxes.shd"}) {
    INFO(name);
    auto spmd = partitioned(name, example(name));
    llvm::LLVMContext context;
    auto lowered = llvmgen::lowerProgram(*spmd, context, name);
    REQUIRE_FALSE(llvm::verifyModule(*lowered.driver, &llvm::errs()));
    CHECK(countCalls(*lowered.driver, "shardrt_main") == 1);
    for (const llvmgen::KernelUnit &kernel : lowered.kernels)
      REQUIRE_FALSE(llvm::verifyModule(*kernel.module, &llvm::errs()));
  }
}

TEST_CASE("llvm program: the arena reuses the memory of values no longer read", "[llvm]") {
  // Five 4 KiB values in a chain: each is dead once the next is computed.
  auto spmd = partitioned("chain.shd", R"(@mesh = <["x"=2]>
func @main(%a: tensor<2048xf32> sharding<@mesh, [{"x"}]>) -> tensor<2048xf32> sharding<@mesh, [{"x"}]> {
  %r = manual_computation (%a) in_shardings=[sharding<@mesh, [{"x"}]>]
      out_shardings=[sharding<@mesh, [{"x"}]>] manual_axes={"x"} (%l: tensor<1024xf32>) {
    %s1 = all_reduce %l {axes = {"x"}} : tensor<1024xf32>
    %s2 = all_reduce %s1 {axes = {"x"}} : tensor<1024xf32>
    %s3 = all_reduce %s2 {axes = {"x"}} : tensor<1024xf32>
    %s4 = all_reduce %s3 {axes = {"x"}} : tensor<1024xf32>
    %s5 = all_reduce %s4 {axes = {"x"}} : tensor<1024xf32>
    return %s5 : tensor<1024xf32>
  } : tensor<2048xf32>
  return %r
}
)");
  llvm::LLVMContext context;
  auto lowered = llvmgen::lowerProgram(*spmd, context, "chain");
  REQUIRE_FALSE(llvm::verifyModule(*lowered.driver, &llvm::errs()));
  // Five calls of one kernel (the same all_reduce on other buffers).
  REQUIRE(lowered.kernels.size() == 1);
  CHECK(lowered.kernelCalls == 5);
  CHECK(countCalls(*lowered.kernels[0].module, "shardrt_all_reduce") == 1);
  // Two live at a time (operand and result): 8 KiB, not 20.
  CHECK(arenaBytes(*lowered.driver) == 2 * 4096);
}

TEST_CASE("llvm program: a partial manual_computation is an error at the op", "[llvm]") {
  // Not partitioned (partitioning makes every axis manual): the checked program.
  auto spmd = partitioned("partial.shd", R"(@mesh = <["x"=2, "y"=2]>
func @main(%a: tensor<8xf32> sharding<@mesh, [{"x"}]>) -> tensor<8xf32> sharding<@mesh, [{"x"}]> {
  %r = manual_computation (%a) in_shardings=[sharding<@mesh, [{"x"}]>]
      out_shardings=[sharding<@mesh, [{"x"}]>] manual_axes={"x"} (%l: tensor<4xf32>) {
    %e = exp %l : tensor<4xf32>
    return %e : tensor<4xf32>
  } : tensor<8xf32>
  return %r
}
)",
                          "ir");
  llvm::LLVMContext context;
  try {
    llvmgen::lowerProgram(*spmd, context, "partial");
    FAIL("no CodegenError");
  } catch (const llvmgen::CodegenError &e) {
    CHECK(std::string(e.what()).find("every axis of mesh @mesh") != std::string::npos);
    CHECK(e.loc.line == 3);
  }
}
