// Unit tests for the contraction plans the LLVM backend emits from
// (ir/ContractionPlan.cpp): the label space of matmul and einsum,
// and which two-operand forms become batched GEMMs with which transposes,
// leading dimensions and batch strides, which operands need a scratch copy,
// and which forms are left to loop nests. A random test checks every direct
// matrix of every plan element by element against the operand's layout.
#include "CompileForTest.h"
#include "ir/ContractionPlan.h"
#include "pipeline/Pipeline.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

using namespace shardc;

namespace {

using Labels = std::vector<size_t>;
using Strides = std::vector<int64_t>;

/// The plan of the one contraction in `@main(params) -> result { body }`.
ContractionPlan planOf(const std::string &params, const std::string &body,
                       const std::string &result) {
  const std::string text = "func @main(" + params + ") -> " + result + " {\n" + body + "\n}\n";
  INFO(text);
  std::unique_ptr<Module> module = shardc::testing::compileForTest("contraction.shd", text);
  const Function *main = module->findFunction("main");
  REQUIRE(main);
  for (const std::unique_ptr<Op> &op : main->body.ops)
    if (op->kind == OpKind::Matmul || op->kind == OpKind::Einsum) {
      std::string error;
      std::optional<ContractionPlan> plan = ContractionPlan::of(*op, error);
      INFO(error);
      REQUIRE(plan);
      return *plan;
    }
  FAIL("no contraction in @main");
  return {};
}

/// The plan of `einsum "equation" (%a, %b)` on operands of types `a`, `b`.
ContractionPlan einsum2(const std::string &equation, const std::string &a, const std::string &b,
                        const std::string &result) {
  return planOf("%a: " + a + ", %b: " + b, "%r = einsum \"" + equation + "\" (%a, %b)\nreturn %r",
                result);
}

GemmPlan gemmOf(const ContractionPlan &plan) {
  std::optional<GemmPlan> g = planGemm(plan);
  REQUIRE(g);
  return *g;
}

/// Row-major strides of the output, per label (0 for summed labels).
Strides outputStrides(const ContractionPlan &plan) {
  Strides own = rowMajorStrides(
      std::vector<int64_t>(plan.sizes.begin(), plan.sizes.begin() + plan.outputRank));
  own.resize(plan.sizes.size(), 0);
  return own;
}

/// For every index of the labels of `batch`, `rows` and `cols`: a direct
/// matrix `m` addresses element (row, col) of a batch exactly where the
/// tensor with per-label `strides` holds it, and its leading dimension is
/// one BLAS accepts (row-major: at least the columns, else the rows).
void checkAddresses(const ContractionPlan &plan, const GemmPlan::Matrix &m, const Labels &batch,
                    const Labels &rows, const Labels &cols, const Strides &strides) {
  REQUIRE(m.direct);
  REQUIRE(m.batchStrides.size() == batch.size());
  int64_t rowCount = 1, colCount = 1;
  for (size_t l : rows)
    rowCount *= plan.sizes[l];
  for (size_t l : cols)
    colCount *= plan.sizes[l];
  CHECK(m.ld >= std::max<int64_t>(1, m.transposed ? rowCount : colCount));
  Labels all = batch;
  all.insert(all.end(), rows.begin(), rows.end());
  all.insert(all.end(), cols.begin(), cols.end());
  std::vector<int64_t> index(plan.sizes.size(), 0);
  auto flat = [&](const Labels &group) {
    int64_t at = 0;
    for (size_t l : group)
      at = at * plan.sizes[l] + index[l];
    return at;
  };
  // An odometer over the labels of `all`.
  while (true) {
    int64_t expected = 0, planned = 0;
    for (size_t l : all)
      expected += index[l] * strides[l];
    for (size_t i = 0; i < batch.size(); ++i)
      planned += index[batch[i]] * m.batchStrides[i];
    int64_t r = flat(rows), c = flat(cols);
    planned += m.transposed ? r + c * m.ld : r * m.ld + c;
    if (planned != expected) {
      FAIL_CHECK("row " << r << " col " << c << ": planned offset " << planned << ", tensor offset "
                        << expected);
      return;
    }
    size_t d = all.size();
    while (d > 0 && ++index[all[d - 1]] == plan.sizes[all[d - 1]])
      index[all[--d]] = 0;
    if (d == 0)
      return;
  }
}

} // namespace

TEST_CASE("contraction plan: matmul labels are the output's dims, then K; broadcast batch "
          "dims have stride 0",
          "[llvm]") {
  ContractionPlan p = planOf("%a: tensor<2x1x6x8xf32>, %b: tensor<3x8x5xf32>",
                             "%r = matmul %a, %b\nreturn %r", "tensor<2x3x6x5xf32>");
  CHECK(p.sizes == Strides{2, 3, 6, 5, 8});
  CHECK(p.outputRank == 4);
  REQUIRE(p.strides.size() == 2);
  CHECK(p.strides[0] == Strides{48, 0, 8, 0, 1});
  CHECK(p.strides[1] == Strides{0, 40, 0, 1, 5});
}

TEST_CASE("contraction plan: einsum labels are the output's, then the summed ones in order of "
          "appearance",
          "[llvm]") {
  ContractionPlan p = einsum2("ij,kl->ki", "tensor<6x8xf32>", "tensor<5x7xf32>", "tensor<5x6xf32>");
  CHECK(p.sizes == Strides{5, 6, 8, 7}); // k, i, j, l
  CHECK(p.outputRank == 2);
  CHECK(p.strides[0] == Strides{0, 8, 1, 0});
  CHECK(p.strides[1] == Strides{7, 0, 0, 1});
}

TEST_CASE("gemm plan: a plain matmul reads every matrix in place, row-major", "[llvm]") {
  ContractionPlan p = planOf("%a: tensor<6x10xf32>, %b: tensor<10x7xf32>",
                             "%r = matmul %a, %b\nreturn %r", "tensor<6x7xf32>");
  GemmPlan g = gemmOf(p);
  CHECK(g.M == 6);
  CHECK(g.N == 7);
  CHECK(g.K == 10);
  CHECK(g.batch.empty());
  for (const GemmPlan::Matrix *m : {&g.a, &g.b, &g.c}) {
    CHECK(m->direct);
    CHECK_FALSE(m->transposed);
  }
  CHECK(g.a.ld == 10);
  CHECK(g.b.ld == 7);
  CHECK(g.c.ld == 7);
}

TEST_CASE("gemm plan: transposed operands are read in place as column-major", "[llvm]") {
  SECTION("ij,kj->ik: B transposed") {
    GemmPlan g =
        gemmOf(einsum2("ij,kj->ik", "tensor<6x8xf32>", "tensor<10x8xf32>", "tensor<6x10xf32>"));
    CHECK((g.a.direct && !g.a.transposed && g.a.ld == 8));
    CHECK((g.b.direct && g.b.transposed && g.b.ld == 8));
    CHECK((g.c.direct && !g.c.transposed && g.c.ld == 10));
  }
  SECTION("ji,jk->ik: A transposed") {
    GemmPlan g =
        gemmOf(einsum2("ji,jk->ik", "tensor<8x6xf32>", "tensor<8x10xf32>", "tensor<6x10xf32>"));
    CHECK((g.a.direct && g.a.transposed && g.a.ld == 6));
    CHECK((g.b.direct && !g.b.transposed && g.b.ld == 10));
    CHECK((g.c.direct && !g.c.transposed));
  }
  SECTION("ji,kj->ik: both transposed") {
    GemmPlan g =
        gemmOf(einsum2("ji,kj->ik", "tensor<8x6xf32>", "tensor<10x8xf32>", "tensor<6x10xf32>"));
    CHECK((g.a.direct && g.a.transposed && g.a.ld == 6));
    CHECK((g.b.direct && g.b.transposed && g.b.ld == 8));
    CHECK((g.c.direct && !g.c.transposed));
  }
}

TEST_CASE("gemm plan: a transposed output is computed in scratch (BLAS writes C row-major)",
          "[llvm]") {
  GemmPlan g =
      gemmOf(einsum2("ij,jk->ki", "tensor<6x8xf32>", "tensor<8x10xf32>", "tensor<10x6xf32>"));
  CHECK(g.a.direct);
  CHECK(g.b.direct);
  CHECK_FALSE(g.c.direct);
}

TEST_CASE("gemm plan: batch dims inside the operands are read in place with a leading "
          "dimension and batch stride",
          "[llvm]") {
  // i=6, b=4, j=8, k=10: "b" is a batch label in every matrix.
  ContractionPlan p =
      einsum2("ibj,bjk->ibk", "tensor<6x4x8xf32>", "tensor<4x8x10xf32>", "tensor<6x4x10xf32>");
  GemmPlan g = gemmOf(p);
  CHECK(g.batch == Labels{1});
  CHECK((g.M == 6 && g.N == 10 && g.K == 8));
  CHECK((g.a.direct && !g.a.transposed && g.a.ld == 32 && g.a.batchStrides == Strides{8}));
  CHECK((g.b.direct && !g.b.transposed && g.b.ld == 10 && g.b.batchStrides == Strides{80}));
  CHECK((g.c.direct && !g.c.transposed && g.c.ld == 40 && g.c.batchStrides == Strides{10}));
}

TEST_CASE("gemm plan: rows that do not flatten in the operand's order are copied", "[llvm]") {
  // "b" is only in A and the output: a row label with "i"; the output orders
  // them (b, i), A (i, b), so A's rows do not flatten in place.
  ContractionPlan p =
      einsum2("ibj,jk->bik", "tensor<6x4x8xf32>", "tensor<8x10xf32>", "tensor<4x6x10xf32>");
  GemmPlan g = gemmOf(p);
  CHECK(g.batch.empty());
  CHECK(g.m == Labels{0, 1});
  CHECK((g.M == 24 && g.N == 10 && g.K == 8));
  CHECK_FALSE(g.a.direct);
  CHECK(g.b.direct);
  CHECK((g.c.direct && g.c.ld == 10));
  // In the operand's order the same rows flatten: no copy.
  GemmPlan same =
      gemmOf(einsum2("ibj,jk->ibk", "tensor<6x4x8xf32>", "tensor<8x10xf32>", "tensor<6x4x10xf32>"));
  CHECK((same.a.direct && same.a.ld == 8 && same.M == 24));
}

TEST_CASE("gemm plan: a leading dimension wider than BLAS's int is copied, not truncated",
          "[llvm]") {
  // i=2, b=2^20, j=2^12, k=2: A's rows are 2^32 elements apart (only types:
  // nothing is allocated); B and C have small leading dims and stay in place.
  ContractionPlan p = einsum2("ibj,bjk->ibk", "tensor<2x1048576x4096xf32>",
                              "tensor<1048576x4096x2xf32>", "tensor<2x1048576x2xf32>");
  GemmPlan g = gemmOf(p);
  CHECK_FALSE(g.a.direct);
  CHECK((g.b.direct && g.b.ld == 2));
  CHECK((g.c.direct && g.c.ld == 2097152));
}

TEST_CASE("gemm plan: forms without a GEMM are left to loop nests", "[llvm]") {
  SECTION("a label summed in one operand only") {
    CHECK_FALSE(
        planGemm(einsum2("ij,jk->k", "tensor<6x8xf32>", "tensor<8x10xf32>", "tensor<10xf32>")));
    CHECK_FALSE(
        planGemm(einsum2("ij,kl->ik", "tensor<6x8xf32>", "tensor<5x7xf32>", "tensor<6x5xf32>")));
  }
  SECTION("one operand") {
    CHECK_FALSE(planGemm(planOf("%a: tensor<6x8xf32>", "%r = einsum \"ij->ji\" (%a)\nreturn %r",
                                "tensor<8x6xf32>")));
  }
  SECTION("three operands") {
    CHECK_FALSE(planGemm(planOf("%a: tensor<6x8xf32>, %b: tensor<8x5xf32>, %c: tensor<5x7xf32>",
                                "%r = einsum \"ij,jk,kl->il\" (%a, %b, %c)\nreturn %r",
                                "tensor<6x7xf32>")));
  }
  SECTION("but a size-1 label summed in one operand only is no obstacle") {
    ContractionPlan p =
        einsum2("ij,jk->k", "tensor<1x8xf32>", "tensor<8x10xf32>", "tensor<10xf32>");
    GemmPlan g = gemmOf(p);
    CHECK((g.M == 1 && g.N == 10 && g.K == 8));
    checkAddresses(p, g.a, g.batch, g.m, g.k, p.strides[0]);
    checkAddresses(p, g.b, g.batch, g.k, g.n, p.strides[1]);
    checkAddresses(p, g.c, g.batch, g.m, g.n, outputStrides(p));
  }
}

TEST_CASE("gemm plan: vectors, outer products and size-1 dims stay in place", "[llvm]") {
  struct Case {
    const char *equation, *a, *b, *out;
  };
  for (const Case &c : {
           Case{"ij,jk->ik", "tensor<1x8xf32>", "tensor<8x6xf32>", "tensor<1x6xf32>"},
           Case{"ij,jk->ik", "tensor<6x1xf32>", "tensor<1x5xf32>", "tensor<6x5xf32>"},
           Case{"i,k->ik", "tensor<6xf32>", "tensor<5xf32>", "tensor<6x5xf32>"},
           Case{"i,i->", "tensor<8xf32>", "tensor<8xf32>", "tensor<f32>"},
           Case{"ij,j->i", "tensor<6x8xf32>", "tensor<8xf32>", "tensor<6xf32>"},
           Case{"j,jk->k", "tensor<8xf32>", "tensor<8x6xf32>", "tensor<6xf32>"},
           Case{"ji,j->i", "tensor<8x6xf32>", "tensor<8xf32>", "tensor<6xf32>"},
           Case{"ij,kj->ik", "tensor<1x8xf32>", "tensor<1x8xf32>", "tensor<1x1xf32>"},
           Case{"ib,bk->ibk", "tensor<6x1xf32>", "tensor<1x5xf32>", "tensor<6x1x5xf32>"},
           Case{"bij,bjk->bik", "tensor<1x6x8xf32>", "tensor<1x8x5xf32>", "tensor<1x6x5xf32>"},
       }) {
    INFO(c.equation << " " << c.a << " " << c.b);
    ContractionPlan p = einsum2(c.equation, c.a, c.b, c.out);
    GemmPlan g = gemmOf(p);
    checkAddresses(p, g.a, g.batch, g.m, g.k, p.strides[0]);
    checkAddresses(p, g.b, g.batch, g.k, g.n, p.strides[1]);
    checkAddresses(p, g.c, g.batch, g.m, g.n, outputStrides(p));
  }
}

TEST_CASE("gemm plan: random two-operand einsums address every element of every direct matrix "
          "where the tensor holds it",
          "[llvm]") {
  // Each label gets a role: batch (A, B, output), M (A, output), N (B,
  // output), K (A, B), or summed in A only; each term and the output lists
  // its labels in a random order.
  enum Role { Batch, Row, Col, Sum, SumA, kRoles };
  std::mt19937 rng(20261122);
  int gemms = 0, copies = 0, loops = 0;
  for (int trial = 0; trial < 400; ++trial) {
    size_t count = 1 + rng() % 5;
    std::string a, b, out;
    std::vector<int64_t> size(count);
    bool oneSided = false;
    for (size_t l = 0; l < count; ++l) {
      char label = static_cast<char>('a' + l);
      Role role = static_cast<Role>(rng() % (trial % 4 == 0 ? kRoles : SumA));
      size[l] = 1 + rng() % 4;
      oneSided |= role == SumA && size[l] != 1;
      if (role != Col)
        a += label;
      if (role == Batch || role == Col || role == Sum)
        b += label;
      if (role == Batch || role == Row || role == Col)
        out += label;
    }
    if (a.empty() || b.empty())
      continue;
    for (std::string *term : {&a, &b, &out})
      std::shuffle(term->begin(), term->end(), rng);
    auto type = [&](const std::string &term) {
      std::string t = "tensor<";
      for (char label : term)
        t += std::to_string(size[label - 'a']) + "x";
      return t + "f32>";
    };
    std::string equation = a + "," + b + "->" + out;
    INFO(equation << " " << type(a) << " " << type(b));
    ContractionPlan p = einsum2(equation, type(a), type(b), type(out));
    std::optional<GemmPlan> g = planGemm(p);
    CHECK(g.has_value() == !oneSided);
    if (!g) {
      ++loops;
      continue;
    }
    ++gemms;
    // Every label in exactly one group; M, N, K their groups' products.
    Labels all = g->batch;
    for (const Labels *group : {&g->m, &g->n, &g->k})
      all.insert(all.end(), group->begin(), group->end());
    std::sort(all.begin(), all.end());
    Labels expected(p.sizes.size());
    for (size_t l = 0; l < expected.size(); ++l)
      expected[l] = l;
    CHECK(all == expected);
    auto product = [&](const Labels &group) {
      int64_t n = 1;
      for (size_t l : group)
        n *= p.sizes[l];
      return n;
    };
    CHECK((g->M == product(g->m) && g->N == product(g->n) && g->K == product(g->k)));
    if (g->a.direct)
      checkAddresses(p, g->a, g->batch, g->m, g->k, p.strides[0]);
    if (g->b.direct)
      checkAddresses(p, g->b, g->batch, g->k, g->n, p.strides[1]);
    if (g->c.direct) {
      CHECK_FALSE(g->c.transposed);
      checkAddresses(p, g->c, g->batch, g->m, g->n, outputStrides(p));
    }
    copies += !g->a.direct + !g->b.direct + !g->c.direct;
  }
  // The generator reaches every kind of plan.
  CHECK(gemms > 100);
  CHECK(copies > 50);
  CHECK(loops > 10);
}

TEST_CASE("contraction plan: the label of each operand dim, and the result's strides", "[llvm]") {
  // matmul: labels (batch, m, n, k); a broadcast batch dim of size 1 has none.
  ContractionPlan m = planOf("%a: tensor<1x4x6xf32>, %b: tensor<3x6x5xf32>",
                             "%r = matmul %a, %b\nreturn %r", "tensor<3x4x5xf32>");
  REQUIRE(m.operandLabels.size() == 2);
  CHECK(m.operandLabels[0] == Labels{ContractionPlan::kNoLabel, 1, 3});
  CHECK(m.operandLabels[1] == Labels{0, 3, 2});
  CHECK(m.resultStrides == Strides{20, 5, 1, 0});
  // einsum: labels output first (b, i, k), then the summed j.
  ContractionPlan e =
      einsum2("ibj,jbk->kbi", "tensor<4x2x3xf64>", "tensor<3x2x5xf64>", "tensor<5x2x4xf64>");
  CHECK(e.operandLabels[0] == Labels{2, 1, 3});
  CHECK(e.operandLabels[1] == Labels{3, 1, 0});
  CHECK(e.resultStrides == Strides{8, 4, 1, 0});
  // A piece writing into part of a larger result keeps its strides: the
  // GEMM form reads them (a column block of a 4x10 result, ld 10).
  ContractionPlan piece = planOf("%a: tensor<4x6xf32>, %b: tensor<6x5xf32>",
                                 "%r = matmul %a, %b\nreturn %r", "tensor<4x5xf32>");
  piece.resultStrides = {10, 1, 0};
  GemmPlan g = gemmOf(piece);
  CHECK(g.c.direct);
  CHECK(g.c.ld == 10);
}
