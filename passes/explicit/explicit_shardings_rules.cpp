// --explicit mode: the result sharding of one op from its operands' (JAX
// sharding in types, seeds/jax_explicit_sharding.md; validity per op group
// from seeds/onnx_sharding_formalism.md).
//
// Every op but reshape reads its factor rule (ShardingRules.h), which says
// for each operand and result dim which factor (batch, free, contracting,
// reduced, concatenated...) it is. Per factor:
//   1. pass-through (elementwise, batch, free dims): the consensus of the
//      operand dims that carry it: unsharded when all are, the one non-empty
//      sharding when there is one, else ambiguous (an out_sharding decides);
//   2. reduction: a reduced dim of reduce_* (or an einsum label summed on one
//      operand) may be sharded: the result is reduced across those axes and
//      replicated along them. A contracting dim of matmul/einsum (JAX's
//      dot_general): sharded on one side only is legal (the result takes the
//      batch and free dims; the partitioner gathers); sharded on both sides
//      is ambiguous and needs an out_sharding, which is accepted as given.
//      Batch dims sharded differently (one side unsharded too) are an error;
//   3. permutation (concat's dim, sliced or padded dims): like pass-through,
//      as in JAX. A sliced or padded dim keeps the operand's axes over the
//      new size, also where they don't divide it (JAX rejects that; shardc
//      pads and masks the blocks, LANGUAGE.md 6); a slice or pad whose
//      result dims are all size 1 is replicated, as in JAX.
// Where JAX wants operands sharded alike rather than a consensus, so does
// this rule: dot_general's batch dims, concatenate's operands, select's
// cases and non-scalar predicate when nothing broadcasts.
// An operand dim without a factor (size 1, broadcast) must be replicated
// (ONNX), unless its axes have size 1 (JAX then passes them on). The result takes its dims'
// factors' shardings; naming an axis twice is ambiguous too. Example: add [{"x"}, {}] + [1x16, {}]
// -> [{"x"}, {}].
#include "ir/AxisAlgebra.h"
#include "ir/Printer.h"
#include "passes/explicit/ExplicitShardingsInternal.h"
#include "passes/rules/ShardingRules.h"

#include <fmt/format.h>

namespace shardc::explicit_shardings {
namespace {

/// One operand dim that carries a factor.
struct FactorUse {
  size_t operand;
  size_t dim;
  const DimSharding *sharding;
};

class FactorInference {
public:
  FactorInference(const Op &op, const ShardingRule &rule, const Mesh *mesh, DiagnosticEngine &diags)
      : op_(op), rule_(rule), mesh_(mesh), diags_(diags),
        written_(op.result()->sharding.has_value()) {}

  std::optional<Sharding> run() {
    const std::string &mesh = operandSharding(0).meshName;
    for (size_t i = 1; i < op_.operands.size(); ++i)
      if (operandSharding(i).meshName != mesh) {
        diags_
            .error(op_.loc, fmt::format("{} - operands on different meshes: {}, {}", op_.name(),
                                        printSharding(operandSharding(0)),
                                        printSharding(operandSharding(i))))
            .note(Loc{}, reshardNote(*op_.operands[i],
                                     Sharding::replicatedOn(mesh, op_.operands[i]->type.rank())));
        return std::nullopt;
      }
    checkBroadcastDims();
    if (!written_ && !failed_ && !checkAlikeOperands())
      return std::nullopt;
    std::vector<DimSharding> factorShardings(rule_.numFactors());
    for (size_t f = 0; f < rule_.numFactors(); ++f)
      factorShardings[f] = decideFactor(f);
    if (failed_)
      return std::nullopt;

    std::vector<DimSharding> dims;
    for (const DimFactors &factors : rule_.results.at(0))
      dims.push_back(factors.size() == 1 ? factorShardings[factors[0]] : closedDim());
    Sharding result = makeSharding(mesh, std::move(dims));
    if (written_)
      return op_.result()->sharding;
    // JAX's slice and pad: a result of size-1 dims only is replicated.
    if (op_.kind == OpKind::Slice || op_.kind == OpKind::Pad) {
      bool allOnes = true;
      for (int64_t size : op_.result()->type.shape)
        allOnes &= size == 1;
      if (allOnes)
        result = makeSharding(mesh, std::vector<DimSharding>(result.dims.size(), closedDim()));
    }
    if (ambiguous_) {
      reportAmbiguity(result);
      return std::nullopt;
    }
    if (std::optional<AxisRef> axis = duplicateAxis(result)) {
      diags_
          .error(op_.loc, fmt::format("{} - result would name axis \"{}\" twice: {}", op_.name(),
                                      axis->name, printSharding(result)))
          .note(Loc{}, outShardingNote(op_, withoutDuplicateAxes(result)));
      return std::nullopt;
    }
    return result;
  }

private:
  const Sharding &operandSharding(size_t i) const { return *op_.operands[i]->sharding; }

  /// ONNX: a broadcast dim of size 1 must be replicated. On axes of size 1
  /// only (legal in JAX, which needs the axes to divide the dim) it is a use
  /// of the result dim it broadcasts to, as in JAX's broadcasting rule.
  void checkBroadcastDims() {
    for (size_t i = 0; i < op_.operands.size(); ++i) {
      const Sharding &s = operandSharding(i);
      for (size_t d = 0; d < s.dims.size() && d < rule_.operands[i].size(); ++d) {
        if (!rule_.operands[i][d].empty() || s.dims[d].axes.empty())
          continue;
        int target = broadcastTarget(i, d);
        if (target >= 0 && mesh_ && productOf(s.dims[d].axes, *mesh_) == 1) {
          unitUses_.push_back({{i, d, &s.dims[d]}, target});
          continue;
        }
        diags_
            .error(op_.loc,
                   fmt::format("{} - operand {} dim {} has size 1 and broadcasts, so it must be "
                               "replicated: {}",
                               op_.name(), i, d, printSharding(s)))
            .note(Loc{}, reshardNote(*op_.operands[i], withDim(s, d, closedDim())));
        failed_ = true;
      }
    }
  }

  /// JAX's rules that want operands sharded alike rather than a consensus:
  /// dot_general's batch dims (a factor of matmul/einsum kept in the result
  /// from both operands: sharded on one side only is an error too),
  /// concatenate's operands, and select's cases and non-scalar predicate
  /// when nothing broadcasts (lax.select; jnp.where reaches it then).
  /// Reports the first difference; false on error.
  bool checkAlikeOperands() {
    if (op_.kind == OpKind::Matmul || op_.kind == OpKind::Einsum)
      return checkBatchDims();
    if (op_.kind == OpKind::Concat) {
      for (size_t i = 1; i < op_.operands.size(); ++i)
        if (!alike(0, i)) {
          reportUnlike(0, i, "operands");
          return false;
        }
      return true;
    }
    if (op_.kind == OpKind::Select && op_.operands.size() == 3) {
      const TensorType &pred = op_.operands[0]->type;
      const TensorType &onTrue = op_.operands[1]->type;
      const TensorType &onFalse = op_.operands[2]->type;
      if (onTrue.shape != onFalse.shape || (pred.rank() != 0 && pred.shape != onTrue.shape))
        return true; // broadcasting: the consensus decides (jnp.where)
      if (!alike(1, 2)) {
        reportUnlike(1, 2, "cases");
        return false;
      }
      if (pred.rank() != 0 && !alike(1, 0)) {
        reportUnlike(1, 0, "predicate and cases");
        return false;
      }
    }
    return true;
  }

  bool alike(size_t a, size_t b) const {
    const Sharding &sa = operandSharding(a);
    const Sharding &sb = operandSharding(b);
    if (sa.dims.size() != sb.dims.size())
      return false;
    for (size_t d = 0; d < sa.dims.size(); ++d)
      if (!sameDim(sa.dims[d], sb.dims[d]))
        return false;
    return true;
  }

  void reportUnlike(size_t a, size_t b, const char *what) {
    const Sharding &sa = operandSharding(a);
    Sharding want = sa;
    want.replicated.clear();
    diags_
        .error(op_.loc, fmt::format("{} - {} must be sharded alike: operand {} {}, operand {} {}",
                                    op_.name(), what, a, printSharding(sa), b,
                                    printSharding(operandSharding(b))))
        .note(Loc{}, reshardNote(*op_.operands[b], want))
        .note(Loc{}, "or " + outShardingNote(op_, suggestedResult()));
  }

  /// JAX's dot_general: lhs and rhs batch dims must have the same sharding.
  bool checkBatchDims() {
    for (size_t f = 0; f < rule_.numFactors(); ++f) {
      if (rule_.factorKinds[f] != FactorKind::PassThrough)
        continue;
      std::vector<FactorUse> uses = usesOf(f);
      for (const FactorUse &use : uses) {
        const FactorUse &first = uses.front();
        if (use.operand == first.operand || sameDim(*use.sharding, *first.sharding))
          continue;
        // Suggest the sharded side's axes for the other operand.
        const FactorUse &from = first.sharding->axes.empty() ? use : first;
        const FactorUse &to = first.sharding->axes.empty() ? first : use;
        const Sharding &st = operandSharding(to.operand);
        diags_
            .error(op_.loc, fmt::format("{} - batch dims sharded differently (result dim {}): "
                                        "operand {} dim {} {}, operand {} dim {} {}",
                                        op_.name(), resultDimOf(f), first.operand, first.dim,
                                        printSharding(operandSharding(first.operand)), use.operand,
                                        use.dim, printSharding(operandSharding(use.operand))))
            .note(Loc{},
                  reshardNote(*op_.operands[to.operand], withDim(st, to.dim, *from.sharding)))
            .note(Loc{}, "or " + outShardingNote(op_, suggestedResult()));
        return false;
      }
    }
    return true;
  }

  /// The result dim that operand `i`'s dim `d` broadcasts to: numpy
  /// alignment from the right for the elementwise ops, `dims` for
  /// broadcast; -1 for other ops.
  int broadcastTarget(size_t i, size_t d) const {
    size_t resultRank = op_.result()->type.rank();
    size_t rank = op_.operands[i]->type.rank();
    if (opInfo(op_.kind).group == OpGroup::Binary && rank <= resultRank)
      return static_cast<int>(d + resultRank - rank);
    if (op_.kind == OpKind::Broadcast) {
      std::vector<int64_t> dims = op_.get(attrs::dims, std::vector<int64_t>{});
      if (d < dims.size())
        return static_cast<int>(dims[d]);
    }
    return -1;
  }

  std::vector<FactorUse> usesOf(size_t f) const {
    std::vector<FactorUse> uses;
    for (const auto &[use, resultDim] : unitUses_) {
      const DimFactors &factors = rule_.results.at(0).at(resultDim);
      if (factors.size() == 1 && factors[0] == static_cast<int>(f))
        uses.push_back(use);
    }
    for (size_t i = 0; i < op_.operands.size(); ++i) {
      const Sharding &s = operandSharding(i);
      for (size_t d = 0; d < s.dims.size() && d < rule_.operands[i].size(); ++d)
        if (rule_.operands[i][d].size() == 1 && rule_.operands[i][d][0] == static_cast<int>(f))
          uses.push_back({i, d, &s.dims[d]});
    }
    return uses;
  }

  /// The result dim that carries factor `f` (for messages), or -1.
  int resultDimOf(size_t f) const {
    const TensorFactors &result = rule_.results.at(0);
    for (size_t d = 0; d < result.size(); ++d)
      if (result[d].size() == 1 && result[d][0] == static_cast<int>(f))
        return static_cast<int>(d);
    return -1;
  }

  /// `operand 0 sharding<...>, operand 1 sharding<...>` for these uses.
  std::string describe(const std::vector<FactorUse> &uses) const {
    std::string text;
    for (const FactorUse &use : uses)
      text += fmt::format("{}operand {} dim {} {}", text.empty() ? "" : ", ", use.operand, use.dim,
                          printSharding(operandSharding(use.operand)));
    return text;
  }

  DimSharding decideFactor(size_t f) {
    std::vector<FactorUse> uses = usesOf(f);
    const FactorUse *first = nullptr; // the first sharded use
    const FactorUse *other = nullptr; // the first use sharded differently
    size_t sharded = 0;
    for (const FactorUse &use : uses) {
      if (use.sharding->axes.empty())
        continue;
      ++sharded;
      if (!first)
        first = &use;
      else if (!other && !sameDim(*first->sharding, *use.sharding))
        other = &use;
    }
    if (!first)
      return closedDim();

    switch (rule_.factorKinds[f]) {
    case FactorKind::PassThrough:
    case FactorKind::NeedReplication:
    case FactorKind::Permutation:
      // Concatenated, sliced and padded dims too (as JAX; uneven blocks,
      // which JAX rejects, are padded and masked by the partitioner).
      if (other && !ambiguous_) {
        ambiguous_ = true;
        conflict_[0] = *first;
        conflict_[1] = *other;
        conflictDim_ = resultDimOf(f);
      }
      return *first->sharding;
    case FactorKind::Reduction:
      break;
    }

    // A reduced dim (reduce_*, or an einsum label summed on one operand only).
    // A contracting dim (JAX's dot_general rule): sharded on one operand only
    // it is legal, the result takes the batch and free dims and the
    // partitioner gathers; sharded on both (alike or not) the result is
    // ambiguous without an out_sharding, which is taken as given.
    bool contraction = op_.kind == OpKind::Matmul || op_.kind == OpKind::Einsum;
    if (!contraction || uses.size() < 2 || written_)
      return closedDim();
    if (sharded < 2)
      return closedDim();
    const Sharding &s = operandSharding(first->operand);
    auto error = diags_.error(
        op_.loc, fmt::format("{} - contracting dims sharded on both operands{}, the result "
                             "sharding is ambiguous and needs an out_sharding: {}",
                             op_.name(), other ? " (differently)" : "", describe(uses)));
    error.note(Loc{}, outShardingNote(op_, suggestedResult()));
    error.note(Loc{}, "or " + reshardNote(*op_.operands[first->operand],
                                          withDim(s, first->dim, closedDim())));
    failed_ = true;
    return closedDim();
  }

  /// The result with every conflict settled for the first operand and every
  /// axis used once: the out_sharding a hint proposes.
  Sharding suggestedResult() const {
    std::vector<DimSharding> dims;
    for (const DimFactors &factors : rule_.results.at(0)) {
      DimSharding dim = closedDim();
      if (factors.size() == 1)
        for (const FactorUse &use : usesOf(factors[0]))
          if (!use.sharding->axes.empty()) {
            dim = closedDim(use.sharding->axes);
            break;
          }
      dims.push_back(dim);
    }
    return withoutDuplicateAxes(makeSharding(operandSharding(0).meshName, std::move(dims)));
  }

  void reportAmbiguity(const Sharding &) {
    const FactorUse &a = conflict_[0];
    const FactorUse &b = conflict_[1];
    const Sharding &sb = operandSharding(b.operand);
    auto error = diags_.error(op_.loc, fmt::format("{} - conflicting shardings for result dim {}: "
                                                   "operand {} {}, operand {} {}",
                                                   op_.name(), conflictDim_, a.operand,
                                                   printSharding(operandSharding(a.operand)),
                                                   b.operand, printSharding(sb)));
    error.note(Loc{}, reshardNote(*op_.operands[b.operand], withDim(sb, b.dim, *a.sharding)));
    error.note(Loc{}, "or " + outShardingNote(op_, suggestedResult()));
  }

  const Op &op_;
  const ShardingRule &rule_;
  const Mesh *mesh_;
  DiagnosticEngine &diags_;
  /// Size-1 broadcast dims sharded on axes of size 1, with their result dim.
  std::vector<std::pair<FactorUse, int>> unitUses_;
  bool written_;
  bool failed_ = false;
  bool ambiguous_ = false;
  FactorUse conflict_[2] = {};
  int conflictDim_ = -1;
};

} // namespace

std::optional<Sharding> inferFactorOp(const Op &op, const Module &module, DiagnosticEngine &diags) {
  std::optional<ShardingRule> rule = getShardingRule(op);
  if (!rule)
    return std::nullopt; // infer-types reported why
  const Mesh *mesh = module.findMesh(op.operands.at(0)->sharding->meshName);
  return FactorInference(op, *rule, mesh, diags).run();
}

} // namespace shardc::explicit_shardings
