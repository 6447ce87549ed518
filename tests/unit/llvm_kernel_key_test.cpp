// Kernels compiled once (backend/llvm/KernelUnit.h): the structural key of a
// kernel ignores buffer addresses and names and changes with any op, shape,
// dtype or sharding (but the sizes a GEMM's kernel passes to BLAS, which it
// takes as arguments); a program that repeats a layer lowers to one kernel per
// distinct computation; the kernel cache (KernelCache.h) returns what it
// stored, and an entry that is corrupt or truncated is never trusted.
#include "CompileForTest.h"
#include "backend/llvm/Codegen.h"
#include "backend/llvm/KernelCache.h"
#include "pipeline/Pipeline.h"

#include <catch2/catch.hpp>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <set>

using namespace shardc;

namespace {

/// The keys of the kernels `source` lowers to, in the order first called.
std::vector<std::string> kernelKeys(const std::string &source, int64_t *calls = nullptr) {
  std::unique_ptr<Module> spmd = shardc::testing::compileForTest("key.shd", source, "spmd");
  llvm::LLVMContext context;
  llvmgen::LoweredProgram lowered = llvmgen::lowerProgram(*spmd, context, "key");
  std::vector<std::string> keys;
  for (const llvmgen::KernelUnit &kernel : lowered.kernels)
    keys.push_back(kernel.key);
  if (calls)
    *calls = lowered.kernelCalls;
  return keys;
}

/// A program of one layer (matmul, then tanh(m) * c - m fused) on `mesh`, its
/// rows sharded as `rowsSharding`, of the given shape and dtype; `op` replaces
/// tanh and `name` the matmul result's name.
std::string layer(const std::string &mesh, const std::string &rowsSharding, int rows, int cols,
                  const std::string &dtype = "f32", const std::string &op = "tanh",
                  const std::string &name = "m") {
  std::string t = "tensor<" + std::to_string(rows) + "x" + std::to_string(cols) + "x" + dtype + ">";
  std::string w = "tensor<" + std::to_string(cols) + "x" + std::to_string(cols) + "x" + dtype + ">";
  std::string s = "sharding<@mesh, [" + rowsSharding + ", {}]>";
  return mesh + "\nfunc @main(%x: " + t + " " + s + ", %w: " + w +
         " sharding<@mesh, [{}, {}]>, %c: " + t + " " + s + ") -> " + t + " " + s + " {\n  %" +
         name + " = matmul %x, %w\n  %t = " + op + " %" + name +
         "\n  %p = mul %t, %c\n  %r = sub %p, %" + name + "\n  return %r\n}\n";
}

const char *kMesh = "@mesh = <[\"x\"=2, \"y\"=4]>";

} // namespace

TEST_CASE("kernel key: equal computations on other buffers have equal keys", "[llvm][cache]") {
  // The same layer with other value names, and its kernels called at other
  // arena offsets (a value computed first shifts every buffer).
  auto a = kernelKeys(layer(kMesh, "{\"x\"}", 8, 16));
  auto b = kernelKeys(layer(kMesh, "{\"x\"}", 8, 16, "f32", "tanh", "renamed"));
  REQUIRE(a.size() == 2); // the matmul and the fused tanh * c - m
  CHECK(a == b);
}

TEST_CASE("kernel key: any change of shape, dtype, sharding or op changes it, but a GEMM's sizes",
          "[llvm][cache]") {
  auto base = kernelKeys(layer(kMesh, "{\"x\"}", 8, 16));
  REQUIRE(base.size() == 2);
  auto differs = [&](const std::vector<std::string> &other) {
    REQUIRE(other.size() == base.size());
    std::set<std::string> baseSet(base.begin(), base.end());
    for (const std::string &key : other)
      CHECK(baseSet.count(key) == 0);
  };
  // A GEMM's sizes are arguments of its kernel (Contraction.cpp): the
  // matmul's kernel stays the same, the fused loop's changes.
  auto gemmShared = [&](const std::vector<std::string> &other) {
    REQUIRE(other.size() == base.size());
    CHECK(other[0] == base[0]);
    CHECK(other[1] != base[1]);
  };
  SECTION("shape") { gemmShared(kernelKeys(layer(kMesh, "{\"x\"}", 8, 32))); }
  SECTION("dtype") { differs(kernelKeys(layer(kMesh, "{\"x\"}", 8, 16, "f64"))); }
  // Rows split 4 ways instead of 2: each device's block has other shapes.
  SECTION("sharding") { gemmShared(kernelKeys(layer(kMesh, "{\"y\"}", 8, 16))); }
  SECTION("op") {
    auto other = kernelKeys(layer(kMesh, "{\"x\"}", 8, 16, "f32", "exp"));
    REQUIRE(other.size() == 2);
    CHECK(other[0] == base[0]); // the matmul is the same
    CHECK(other[1] != base[1]);
  }
}

TEST_CASE("kernel key: repeated layers lower to one kernel per distinct computation",
          "[llvm][cache]") {
  std::string program = std::string(kMesh) +
                        "\nfunc @main(%x: tensor<8x16xf32> sharding<@mesh, [{\"x\"}, {}]>, "
                        "%w: tensor<16x16xf32> sharding<@mesh, [{}, {}]>) -> tensor<8x16xf32> "
                        "sharding<@mesh, [{\"x\"}, {}]> {\n";
  std::string h = "%x";
  for (int i = 0; i < 20; ++i) {
    std::string n = std::to_string(i);
    program += "  %m" + n + " = matmul " + h + ", %w\n  %h" + n + " = tanh %m" + n + "\n";
    h = "%h" + n;
  }
  program += "  return " + h + "\n}\n";
  int64_t calls = 0;
  auto keys = kernelKeys(program, &calls);
  CHECK(keys.size() == 2);
  CHECK(calls == 40);
}

TEST_CASE("kernel cache: a stored entry comes back; a damaged one never does", "[llvm][cache]") {
  llvm::SmallString<128> dir;
  REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("shardc-cache-test", dir));
  llvmgen::KernelCache cache(dir.str().str(), "test-target");
  const std::string object = std::string("\x7f"
                                         "ELF object code\0with a zero",
                                         28);
  CHECK_FALSE(cache.load("key one"));
  REQUIRE(cache.store("key one", object));
  CHECK(cache.load("key one") == object);
  CHECK_FALSE(cache.load("key two"));
  // Another target never shares an entry.
  CHECK_FALSE(llvmgen::KernelCache(dir.str().str(), "other-target").load("key one"));

  const std::string path = cache.entryPath("key one");
  auto rewrite = [&](const std::string &content) {
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    REQUIRE_FALSE(ec);
    out << content;
  };
  auto original = llvm::MemoryBuffer::getFile(path);
  REQUIRE(original);
  std::string entry = (*original)->getBuffer().str();
  SECTION("truncated") {
    rewrite(entry.substr(0, entry.size() - 3));
    CHECK_FALSE(cache.load("key one"));
  }
  SECTION("a flipped byte") {
    entry[entry.size() - 5] ^= 1;
    rewrite(entry);
    CHECK_FALSE(cache.load("key one"));
  }
  SECTION("empty") {
    rewrite("");
    CHECK_FALSE(cache.load("key one"));
  }
  SECTION("stored again after damage") {
    rewrite("garbage");
    REQUIRE(cache.store("key one", object));
    CHECK(cache.load("key one") == object);
  }
  llvm::sys::fs::remove_directories(dir);
}

TEST_CASE("kernel cache: an unwritable directory stores nothing and is no error", "[llvm][cache]") {
  llvmgen::KernelCache cache("/proc/shardc-no-such-dir", "test-target");
  CHECK_FALSE(cache.store("key", "object"));
  CHECK_FALSE(cache.load("key"));
  llvmgen::KernelCache none("", "test-target");
  CHECK_FALSE(none.store("key", "object"));
}
