// infer-types rules for contractions (matmul, einsum) and reductions.
//
// Decisions, where numpy offers more than the later stages handle:
//   - matmul takes operands of rank >= 2 (numpy's 2-D and batched N-D forms,
//     batch dims broadcast); numpy's 1-D promotion is rejected: write a
//     reshape to 1xK or Kx1, which keeps every dim explicit for sharding.
//   - einsum needs an explicit `->`, one letter per dim, no `...`, and no
//     letter twice in one term (numpy's diagonals/traces).
//   - reduction dims are 0..rank-1 (no negative dims), each at most once.
#include "passes/infer_types/InferTypesInternal.h"
#include "support/Einsum.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace shardc::infer_types {
namespace {

bool checkOperandDTypes(const Op &op, InferContext &ctx) {
  DType dtype = op.operands[0]->type.dtype;
  for (size_t i = 1; i < op.operands.size(); ++i) {
    DType other = op.operands[i]->type.dtype;
    if (other != dtype) {
      auto diag =
          ctx.error(operandLoc(op, i), fmt::format("{} - operand element types differ: {} vs {}",
                                                   op.name(), dtypeName(dtype), dtypeName(other)));
      noteDefinition(diag, *op.operands[i]);
      return false;
    }
  }
  return checkElementType(op, ctx, operandLoc(op, 0), dtype, isNumeric(dtype), "integer or float");
}

std::optional<TensorType> inferMatmul(Op &op, InferContext &ctx) {
  const TensorType &lhs = op.operands[0]->type;
  const TensorType &rhs = op.operands[1]->type;
  if (!checkOperandDTypes(op, ctx))
    return std::nullopt;
  for (size_t i = 0; i < 2; ++i) {
    const TensorType &type = op.operands[i]->type;
    if (type.rank() >= 2)
      continue;
    ctx.error(operandLoc(op, i),
              fmt::format("matmul - operand {} must have rank 2 or more: {}", i, type.str()))
        .note(Loc{}, "reshape a vector to a 1xK or Kx1 matrix first");
    return std::nullopt;
  }
  int64_t lhsK = lhs.shape[lhs.rank() - 1], rhsK = rhs.shape[rhs.rank() - 2];
  if (lhsK != rhsK) {
    auto diag = ctx.error(op.loc, fmt::format("matmul - contracting dims don't "
                                              "match: {} != {}",
                                              lhsK, rhsK));
    noteDefinition(diag, *op.operands[0]);
    noteDefinition(diag, *op.operands[1]);
    return std::nullopt;
  }
  std::vector<int64_t> lhsBatch(lhs.shape.begin(), lhs.shape.end() - 2);
  std::vector<int64_t> rhsBatch(rhs.shape.begin(), rhs.shape.end() - 2);
  std::optional<std::vector<int64_t>> shape = broadcastShapes(lhsBatch, rhsBatch);
  if (!shape) {
    ctx.error(op.loc, fmt::format("matmul - batch dims are not broadcast-compatible: "
                                  "{} vs {}",
                                  formatList(lhsBatch), formatList(rhsBatch)));
    return std::nullopt;
  }
  shape->push_back(lhs.shape[lhs.rank() - 2]);
  shape->push_back(rhs.shape[rhs.rank() - 1]);
  return TensorType{*shape, lhs.dtype};
}

class EinsumChecker {
public:
  EinsumChecker(Op &op, InferContext &ctx, const Attribute &attr)
      : op_(op), ctx_(ctx), text_(attr.s), loc_(attr.loc) {
    // Point into the string only when the token is the plain quoted text.
    precise_ = loc_.known() && loc_.length == static_cast<int>(text_.size()) + 2;
  }

  std::optional<TensorType> run() {
    support::EinsumParse parsed = support::parseEinsum(text_);
    if (!parsed.ok()) {
      bool whole = parsed.error == support::EinsumParse::Error::MissingArrow;
      error(whole ? kWhole : parsed.errorOffset,
            "einsum - " + parsed.message(text_) + (whole ? ": \"" + text_ + "\"" : ""));
      return std::nullopt;
    }
    const support::EinsumEquation *eq = &parsed.equation;
    if (eq->inputs.size() != op_.operands.size()) {
      error(kWhole, fmt::format("einsum - number of terms doesn't match operands: {} != {}",
                                eq->inputs.size(), op_.operands.size()));
      return std::nullopt;
    }
    if (!checkOperandDTypes(op_, ctx_))
      return std::nullopt;
    std::map<char, int64_t> sizes;
    for (size_t i = 0; i < eq->inputs.size(); ++i) {
      const std::string &term = eq->inputs[i].labels;
      const TensorType &type = op_.operands[i]->type;
      if (term.size() != type.rank()) {
        error(eq->inputs[i].offset,
              fmt::format("einsum - operand {} rank doesn't match term \"{}\": {} != {}", i, term,
                          type.rank(), term.size()),
              term.size());
        return std::nullopt;
      }
      for (size_t d = 0; d < term.size(); ++d) {
        char label = term[d];
        if (term.find(label) != d) {
          error(eq->inputs[i].offset + d,
                fmt::format("einsum - label repeated in term \"{}\": {}", term, label));
          return std::nullopt;
        }
        auto [it, inserted] = sizes.emplace(label, type.shape[d]);
        if (!inserted && it->second != type.shape[d]) {
          error(eq->inputs[i].offset + d,
                fmt::format("einsum - label {} has inconsistent sizes: {} != {}", label, it->second,
                            type.shape[d]));
          return std::nullopt;
        }
      }
    }
    std::vector<int64_t> shape;
    const std::string &output = eq->output.labels;
    for (size_t d = 0; d < output.size(); ++d) {
      char label = output[d];
      if (output.find(label) != d) {
        error(eq->output.offset + d, fmt::format("einsum - output label repeated: {}", label));
        return std::nullopt;
      }
      auto it = sizes.find(label);
      if (it == sizes.end()) {
        error(eq->output.offset + d,
              fmt::format("einsum - output label not in any input: {}", label));
        return std::nullopt;
      }
      shape.push_back(it->second);
    }
    return TensorType{shape, op_.operands[0]->type.dtype};
  }

private:
  static constexpr size_t kWhole = std::string::npos;

  /// Points at `length` characters from `offset` in the equation, or at the
  /// whole string for kWhole.
  void error(size_t offset, std::string message, size_t length = 1) {
    Loc loc = loc_.known() ? loc_ : op_.loc;
    if (precise_ && offset != kWhole)
      loc =
          loc_.shifted(1 + static_cast<int>(offset), static_cast<int>(std::max<size_t>(length, 1)));
    ctx_.error(loc, std::move(message));
  }

  Op &op_;
  InferContext &ctx_;
  const std::string &text_;
  Loc loc_;
  bool precise_ = false;
};

} // namespace

std::optional<TensorType> inferContraction(Op &op, InferContext &ctx) {
  if (op.kind == OpKind::Matmul)
    return inferMatmul(op, ctx);
  const Attribute *equation = requireAttr(op, ctx, attrs::equation, Attribute::Kind::String);
  if (!equation)
    return std::nullopt;
  return EinsumChecker(op, ctx, *equation).run();
}

std::optional<TensorType> inferReduction(Op &op, InferContext &ctx) {
  const TensorType &input = op.operands[0]->type;
  std::optional<std::vector<int64_t>> dims = requireIntList(op, ctx, attrs::dims);
  if (!dims)
    return std::nullopt;
  bool keepDims = false;
  if (op.attr(attrs::keepDims)) {
    const Attribute *attr = requireAttr(op, ctx, attrs::keepDims, Attribute::Kind::Bool);
    if (!attr)
      return std::nullopt;
    keepDims = attr->b;
  }
  // An integer mean truncates (ONNX ReduceMean on integers, numpy's mean
  // then astype); i1 has no sum.
  if (!checkElementType(op, ctx, operandLoc(op, 0), input.dtype, isNumeric(input.dtype),
                        "integer or float"))
    return std::nullopt;

  std::set<int64_t> reduced;
  for (size_t i = 0; i < dims->size(); ++i) {
    int64_t dim = (*dims)[i];
    if (dim < 0 || dim >= static_cast<int64_t>(input.rank())) {
      ctx.error(
          attrElementLoc(op, attrs::dims, i),
          fmt::format("{} - dims out of range: {} for rank {}", op.name(), dim, input.rank()));
      return std::nullopt;
    }
    if (!reduced.insert(dim).second) {
      ctx.error(attrElementLoc(op, attrs::dims, i),
                fmt::format("{} - dims repeated: {}", op.name(), dim));
      return std::nullopt;
    }
  }
  TensorType result{{}, input.dtype};
  for (size_t d = 0; d < input.rank(); ++d) {
    if (!reduced.count(static_cast<int64_t>(d)))
      result.shape.push_back(input.shape[d]);
    else if (keepDims)
      result.shape.push_back(1);
  }
  return result;
}

} // namespace shardc::infer_types
