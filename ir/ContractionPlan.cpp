// Label spaces of matmul and einsum, and their GEMM form.
#include "ir/ContractionPlan.h"

#include "ir/OpAttributes.h"
#include "support/Einsum.h"

#include <algorithm>
#include <limits>

namespace shardc {

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

namespace {

using Shapes = std::vector<std::vector<int64_t>>;

std::optional<ContractionPlan> matmulPlan(const Shapes &operands, const std::vector<int64_t> &out,
                                          std::string &error) {
  if (operands.size() != 2 || operands[0].size() < 2 || operands[1].size() < 2 || out.size() < 2) {
    error = "matmul operands must have rank 2 or more";
    return std::nullopt;
  }
  const std::vector<int64_t> &lhs = operands[0];
  // Labels: the output's dims (batch..., m, n), then k.
  ContractionPlan plan;
  plan.sizes = out;
  plan.sizes.push_back(lhs.back());
  plan.outputRank = out.size();
  const size_t batchRank = out.size() - 2, kLabel = out.size();
  for (size_t operand = 0; operand < 2; ++operand) {
    const std::vector<int64_t> &shape = operands[operand];
    std::vector<int64_t> own = rowMajorStrides(shape);
    std::vector<int64_t> s(plan.sizes.size(), 0);
    std::vector<size_t> labels(shape.size(), ContractionPlan::kNoLabel);
    size_t tb = shape.size() - 2;
    if (tb > batchRank) {
      error = "matmul operand has more batch dims than its result";
      return std::nullopt;
    }
    for (size_t d = 0; d < tb; ++d) // batch dims aligned from the right
      if (shape[d] != 1) {
        s[batchRank - tb + d] = own[d];
        labels[d] = batchRank - tb + d;
      }
    bool isLhs = operand == 0;
    labels[tb] = isLhs ? batchRank : kLabel;         // m, or k of rhs
    labels[tb + 1] = isLhs ? kLabel : batchRank + 1; // k of lhs, or n
    s[labels[tb]] = own[tb];
    s[labels[tb + 1]] = own[tb + 1];
    plan.strides.push_back(s);
    plan.operandLabels.push_back(labels);
  }
  return plan;
}

std::optional<ContractionPlan> einsumPlan(const Op &op, const Shapes &operands,
                                          std::string &error) {
  const Attribute *attr = op.attr(attrs::equation);
  if (!attr || attr->kind != Attribute::Kind::String) {
    error = "einsum needs an `equation`";
    return std::nullopt;
  }
  support::EinsumParse parsed = support::parseEinsum(attr->s);
  if (!parsed.ok()) {
    error = "einsum " + parsed.message(attr->s);
    return std::nullopt;
  }
  const support::EinsumEquation &eq = parsed.equation;
  ContractionPlan plan;
  plan.outputRank = eq.output.labels.size();
  if (eq.inputs.size() != operands.size()) {
    error = "einsum terms do not match its operands";
    return std::nullopt;
  }
  std::string labels = eq.labelsOutputFirst();
  plan.sizes.assign(labels.size(), 1);
  for (size_t i = 0; i < eq.inputs.size(); ++i) {
    const std::string &term = eq.inputs[i].labels;
    const std::vector<int64_t> &shape = operands[i];
    if (term.size() != shape.size()) {
      error = "einsum term rank does not match its operand";
      return std::nullopt;
    }
    std::vector<int64_t> own = rowMajorStrides(shape);
    std::vector<int64_t> s(labels.size(), 0);
    std::vector<size_t> dimLabels;
    for (size_t d = 0; d < term.size(); ++d) {
      size_t label = labels.find(term[d]);
      plan.sizes[label] = shape[d];
      s[label] += own[d];
      dimLabels.push_back(label);
    }
    plan.strides.push_back(s);
    plan.operandLabels.push_back(dimLabels);
  }
  return plan;
}

/// Whether the labels of `group` (sizes > 1 only) flatten into one index
/// with the given strides: each stride is the next one times its size.
/// Returns the flattened stride (of the innermost label), or nullopt.
std::optional<int64_t> flatStride(const ContractionPlan &plan, const std::vector<size_t> &group,
                                  const std::vector<int64_t> &strides) {
  std::optional<int64_t> inner;
  int64_t expected = -1;
  for (size_t i = group.size(); i-- > 0;) {
    size_t l = group[i];
    if (plan.sizes[l] == 1)
      continue;
    if (expected >= 0 && strides[l] != expected)
      return std::nullopt;
    if (!inner)
      inner = strides[l];
    expected = strides[l] * plan.sizes[l];
  }
  return inner ? inner : std::optional<int64_t>(0);
}

/// How BLAS can read a rows x cols matrix whose row and column indices
/// flatten `rowGroup` and `colGroup` of an operand with `strides`.
GemmPlan::Matrix matrixOf(const ContractionPlan &plan, const std::vector<size_t> &rowGroup,
                          const std::vector<size_t> &colGroup, const std::vector<size_t> &batch,
                          const std::vector<int64_t> &strides, int64_t rows, int64_t cols) {
  GemmPlan::Matrix m;
  for (size_t l : batch)
    m.batchStrides.push_back(strides[l]);
  std::optional<int64_t> rs = flatStride(plan, rowGroup, strides);
  std::optional<int64_t> cs = flatStride(plan, colGroup, strides);
  if (!rs || !cs)
    return m;
  // Row-major (cols contiguous), or column-major (rows contiguous).
  if ((cols == 1 || *cs == 1) && (rows == 1 || *rs >= cols)) {
    m.direct = true;
    m.ld = rows == 1 ? std::max<int64_t>(cols, 1) : *rs;
  } else if ((rows == 1 || *rs == 1) && (cols == 1 || *cs >= rows)) {
    m.direct = true;
    m.transposed = true;
    m.ld = cols == 1 ? std::max<int64_t>(rows, 1) : *cs;
  }
  return m;
}

} // namespace

std::optional<ContractionPlan> ContractionPlan::of(const Op &op, const Shapes &operandShapes,
                                                   const std::vector<int64_t> &resultShape,
                                                   std::string &error) {
  std::optional<ContractionPlan> plan = op.kind == OpKind::Matmul
                                            ? matmulPlan(operandShapes, resultShape, error)
                                            : einsumPlan(op, operandShapes, error);
  if (plan) {
    std::vector<int64_t> own = rowMajorStrides(
        std::vector<int64_t>(plan->sizes.begin(), plan->sizes.begin() + plan->outputRank));
    plan->resultStrides.assign(plan->sizes.size(), 0);
    std::copy(own.begin(), own.end(), plan->resultStrides.begin());
  }
  return plan;
}

std::optional<ContractionPlan> ContractionPlan::of(const Op &op, std::string &error) {
  Shapes operands;
  for (const Value *v : op.operands)
    operands.push_back(v->type.shape);
  return of(op, operands, op.result()->type.shape, error);
}

std::optional<GemmPlan> planGemm(const ContractionPlan &plan) {
  if (plan.strides.size() != 2)
    return std::nullopt;
  const std::vector<int64_t> &a = plan.strides[0], &b = plan.strides[1];
  GemmPlan g;
  for (size_t l = 0; l < plan.sizes.size(); ++l) {
    bool inA = a[l] != 0, inB = b[l] != 0, out = l < plan.outputRank;
    if (plan.sizes[l] == 1) // any group will do; keep it out of the way
      (out ? g.batch : g.k).push_back(l);
    else if (out && inA && inB)
      g.batch.push_back(l);
    else if (out && inA)
      g.m.push_back(l);
    else if (out && inB)
      g.n.push_back(l);
    else if (!out && inA && inB)
      g.k.push_back(l);
    else if (out) // a broadcast batch label: both operands read it with stride 0
      g.batch.push_back(l);
    else
      return std::nullopt; // summed in one operand only
  }
  for (size_t l : g.m)
    g.M *= plan.sizes[l];
  for (size_t l : g.n)
    g.N *= plan.sizes[l];
  for (size_t l : g.k)
    g.K *= plan.sizes[l];
  g.a = matrixOf(plan, g.m, g.k, g.batch, a, g.M, g.K);
  g.b = matrixOf(plan, g.k, g.n, g.batch, b, g.K, g.N);
  g.c = matrixOf(plan, g.m, g.n, g.batch, plan.resultStrides, g.M, g.N);
  if (g.c.transposed) // BLAS writes C row-major here
    g.c.direct = false;
  // BLAS takes leading dimensions as int: a wider one (a batch dim inside a
  // matrix of 2^31 elements or more) would be truncated, so that matrix is
  // copied to its canonical layout, whose leading dim is K or N.
  for (GemmPlan::Matrix *m : {&g.a, &g.b, &g.c})
    if (m->ld > std::numeric_limits<int32_t>::max())
      m->direct = false;
  return g;
}

} // namespace shardc
