// Slice chains (SliceChain.h): which consecutive ops of a block run slice by
// slice, and their shadow block on one slice's types.
//
// A run starts at an op whose result has rank R >= 2; its axes are the
// result's first R - 1 dims. It takes the ops after it while each is an
// einsum, an elementwise op or a reduction whose result has those leading
// dims, that reduces none of them, and whose operands each carry an axis
// (if at all) in the same place in every slice: an einsum operand through
// the output's label, an elementwise operand through numpy's alignment from
// the right (a dim of size 1 is broadcast, not sliced), a reduction's
// operand positionally. A value the chain defines is read with its axes
// leading (its natural layout). A value defined before the chain must be in
// memory, or be a fused rank-0 constant (copied into the shadow). A value
// the chain defines and anything after it reads must be in memory; the run
// is cut before the op that defines one that is not.
//
// The slice: extent 1 along every axis but the last, and a tile of the last
// axis (its size halved until the slice fits). A chain runs sliced when
//   - it calls at least two kernels (a chain of one gains nothing), and
//     materializes, of its own, a value bigger than kSliceBytes in all
//     (what does fit in cache gains nothing from slicing),
//   - a slice's bytes (its views and its own materialized values) fit in
//     kSliceBytes, with at least two slices, and are at least
//     kMinSliceBytes (a slice costs a call per kernel), and
//   - every view is one contiguous block of its value's buffer (a row-major
//     sub-block whose dims before the last sliced one have extent 1).
// A weight read whole by every slice (an MLP's) makes the slice too big:
// the chain is left alone, and its GEMMs keep their full size.
#include "backend/llvm/SliceChain.h"

#include "ir/ContractionPlan.h"
#include "support/Einsum.h"

#include <algorithm>
#include <set>

namespace shardc::llvmgen {
namespace {

/// The bytes one slice may touch: its views and its own values. Half the
/// 2 MiB second level cache of the machines measured (bench/RESULTS.md),
/// leaving room for what BLAS packs. The bench's attention (512 query rows
/// per head) ran as fast with 2 MiB (tiles of 256 rows) and slower with
/// 512 KiB (32 rows: the scores GEMM took 1.5x as long).
constexpr int64_t kSliceBytes = int64_t(1) << 20;

/// The fewest bytes a slice must touch: each slice costs the driver a call
/// per kernel, and thousands of tiny slices (a batch of small matrices)
/// would spend more in calls than cache saves.
constexpr int64_t kMinSliceBytes = int64_t(64) << 10;

/// For each dim of operand `i` of `op`, the axis it carries, or -1; nullopt
/// when the operand cannot be sliced with the result.
std::optional<std::vector<int>> operandAxes(const Op &op, size_t i,
                                            const std::vector<int64_t> &axes) {
  const Value &x = *op.operands[i];
  const std::vector<int64_t> &shape = x.type.shape;
  const int A = static_cast<int>(axes.size());
  std::vector<int> carried(shape.size(), -1);
  OpGroup group = opInfo(op.kind).group;
  if (op.kind == OpKind::Einsum) {
    std::optional<std::string> text = op.get(attrs::equation);
    if (!text)
      return std::nullopt;
    support::EinsumParse parsed = support::parseEinsum(*text);
    if (!parsed.ok() || i >= parsed.equation.inputs.size())
      return std::nullopt;
    const std::string &term = parsed.equation.inputs[i].labels;
    const std::string &out = parsed.equation.output.labels;
    if (term.size() != shape.size())
      return std::nullopt;
    for (size_t d = 0; d < term.size(); ++d) {
      size_t at = out.find(term[d]);
      if (at != std::string::npos && static_cast<int>(at) < A) {
        if (std::count(term.begin(), term.end(), term[d]) != 1)
          return std::nullopt; // a diagonal along an axis
        if (shape[d] == axes[at])
          carried[d] = static_cast<int>(at);
        else if (shape[d] != 1)
          return std::nullopt; // (a size-1 dim is broadcast along the axis)
      }
    }
  } else if (group == OpGroup::Unary || group == OpGroup::Binary || group == OpGroup::Convert) {
    const size_t R = op.result()->type.rank();
    for (size_t d = 0; d < shape.size(); ++d) {
      size_t r = d + R - shape.size();
      if (static_cast<int>(r) < A && shape[d] == axes[r])
        carried[d] = static_cast<int>(r);
      else if (static_cast<int>(r) < A && shape[d] != 1)
        return std::nullopt;
    }
  } else if (group == OpGroup::Reduction) {
    std::optional<std::vector<int64_t>> dims = op.get(attrs::dims);
    if (!dims)
      return std::nullopt;
    for (int64_t d : *dims)
      if (d < A)
        return std::nullopt; // the reduction crosses slices
    for (int d = 0; d < A && d < static_cast<int>(shape.size()); ++d)
      carried[d] = d;
  } else {
    return std::nullopt;
  }
  // Axes of size 1 are never sliced: whether a dim "carries" one is moot.
  for (int &a : carried)
    if (a >= 0 && axes[a] == 1)
      a = -1;
  return carried;
}

bool isMember(const Op &op, const std::vector<int64_t> &axes) {
  OpGroup group = opInfo(op.kind).group;
  bool kind = op.kind == OpKind::Einsum || group == OpGroup::Unary || group == OpGroup::Binary ||
              group == OpGroup::Convert || group == OpGroup::Reduction;
  if (!kind || op.results.size() != 1 || op.regions().size() > 0)
    return false;
  const std::vector<int64_t> &shape = op.result()->type.shape;
  return shape.size() >= axes.size() && std::equal(axes.begin(), axes.end(), shape.begin());
}

/// A fused rank-0 constant: copied into the shadow instead of read.
bool isCopiedLeaf(const Value &v, const FusionPlan &fusion) {
  return v.definingOp && v.definingOp->kind == OpKind::Constant && v.type.rank() == 0 &&
         !fusion.isMaterialized(&v);
}

class ChainBuilder {
public:
  ChainBuilder(const Block &block, const FusionPlan &fusion) : block_(block), fusion_(fusion) {
    for (const auto &op : block.ops)
      for (const Value *operand : op->operands)
        users_[operand].push_back(op.get());
    for (const Value *v : block.returned)
      returned_.insert(v);
  }

  std::vector<std::unique_ptr<SliceChain>> plan() {
    std::vector<std::unique_ptr<SliceChain>> chains;
    size_t i = 0;
    while (i < block_.ops.size()) {
      std::vector<const Op *> run = takeRun(i);
      std::unique_ptr<SliceChain> chain = run.size() >= 2 ? best(run) : nullptr;
      if (!chain) {
        ++i;
        continue;
      }
      i = indexOf(chain->ops.back()) + 1;
      chains.push_back(std::move(chain));
    }
    return chains;
  }

private:
  const Block &block_;
  const FusionPlan &fusion_;
  std::map<const Value *, std::vector<const Op *>> users_;
  std::set<const Value *> returned_;

  size_t indexOf(const Op *op) const {
    size_t i = 0;
    while (block_.ops[i].get() != op)
      ++i;
    return i;
  }

  /// The ops from `start` that can be sliced along the axes of its result
  /// (fused rank-0 constants between them are skipped, not members).
  std::vector<const Op *> takeRun(size_t start) {
    const Op &first = *block_.ops[start];
    if (first.results.size() != 1 || first.result()->type.rank() < 2)
      return {};
    std::vector<int64_t> axes(first.result()->type.shape.begin(),
                              first.result()->type.shape.end() - 1);
    std::set<const Value *> defined;
    std::vector<const Op *> run;
    for (size_t i = start; i < block_.ops.size(); ++i) {
      const Op &op = *block_.ops[i];
      if (op.results.size() == 1 && isCopiedLeaf(*op.result(), fusion_))
        continue;
      if (!isMember(op, axes) || !operandsFit(op, axes, defined))
        break;
      run.push_back(&op);
      defined.insert(op.result());
    }
    return run;
  }

  bool operandsFit(const Op &op, const std::vector<int64_t> &axes,
                   const std::set<const Value *> &defined) const {
    for (size_t i = 0; i < op.operands.size(); ++i) {
      const Value *x = op.operands[i];
      std::optional<std::vector<int>> carried = operandAxes(op, i, axes);
      if (!carried)
        return false;
      if (defined.count(x)) { // natural: axis a in dim a
        for (size_t a = 0; a < axes.size(); ++a)
          if (axes[a] > 1 && (a >= carried->size() || (*carried)[a] != static_cast<int>(a)))
            return false;
      } else if (!fusion_.isMaterialized(x) && !isCopiedLeaf(*x, fusion_)) {
        return false; // computed in the loop of its consumer from values not in memory
      }
    }
    return true;
  }

  /// The longest prefix of `run` whose values read after it are in memory,
  /// sliced with the largest tile that fits; null when none is worth it.
  std::unique_ptr<SliceChain> best(std::vector<const Op *> run) {
    for (;;) {
      std::set<const Op *> members(run.begin(), run.end());
      size_t cut = run.size();
      for (size_t i = 0; i < run.size(); ++i)
        if (readAfter(*run[i]->result(), members) && !fusion_.isMaterialized(run[i]->result()))
          cut = std::min(cut, i);
      if (cut == run.size())
        break;
      run.resize(cut);
    }
    if (run.size() < 2)
      return nullptr;
    const std::vector<int64_t> &shape = run.front()->result()->type.shape;
    std::vector<int64_t> axes(shape.begin(), shape.end() - 1);
    for (int64_t tile = axes.back(); tile >= 1; tile /= 2) {
      if (axes.back() % tile != 0)
        continue;
      std::unique_ptr<SliceChain> chain = build(run, axes, tile);
      if (!chain)
        return nullptr;
      int64_t slices = 1;
      for (int64_t n : chain->sliceCounts())
        slices *= n;
      if (slices < 2)
        continue;
      int64_t bytes = 0, ownBytes = 0, kernels = 0;
      for (const auto &arg : chain->shadow.args)
        bytes += arg->type.bytes();
      std::set<const Value *> outputs(chain->shadow.returned.begin(), chain->shadow.returned.end());
      for (const auto &op : chain->shadow.ops) {
        const Value *v = op->result();
        bool stored = chain->fusion.isMaterialized(v);
        kernels += stored || !isElementalOp(op->kind);
        if (!stored)
          continue;
        bytes += v->type.bytes();
        if (!outputs.count(v))
          ownBytes = std::max(ownBytes, v->type.bytes() * slices);
      }
      if (kernels < 2 || ownBytes <= kSliceBytes)
        return nullptr; // no slice size changes that
      if (bytes < kMinSliceBytes)
        return nullptr; // (smaller tiles would be smaller still)
      if (bytes <= kSliceBytes && contiguous(*chain))
        return chain;
    }
    return nullptr;
  }

  bool readAfter(const Value &v, const std::set<const Op *> &members) const {
    if (returned_.count(&v))
      return true;
    auto it = users_.find(&v);
    if (it != users_.end())
      for (const Op *user : it->second)
        if (!members.count(user))
          return true;
    return false;
  }

  /// The chain of `run` with the last axis in tiles of `tile`.
  std::unique_ptr<SliceChain> build(const std::vector<const Op *> &run,
                                    const std::vector<int64_t> &axes, int64_t tile) {
    auto chain = std::make_unique<SliceChain>();
    chain->ops = run;
    chain->axes = axes;
    chain->tile.assign(axes.size(), 1);
    chain->tile.back() = tile;
    std::set<const Op *> members(run.begin(), run.end());
    std::map<const Value *, Value *> natural; // chain value -> its shadow
    std::map<std::pair<const Value *, std::vector<int>>, Value *> viewArgs;
    auto sliceShape = [&](const std::vector<int64_t> &shape, const std::vector<int> &carried) {
      std::vector<int64_t> s = shape;
      for (size_t d = 0; d < s.size(); ++d)
        if (carried[d] >= 0)
          s[d] = chain->tile[carried[d]];
      return s;
    };
    auto strides = [&](const std::vector<int64_t> &shape, const std::vector<int> &carried) {
      std::vector<int64_t> own = rowMajorStrides(shape), perAxis(axes.size(), 0);
      for (size_t d = 0; d < shape.size(); ++d)
        if (carried[d] >= 0)
          perAxis[carried[d]] = own[d];
      return perAxis;
    };
    for (const Op *op : run) {
      auto copy = std::make_unique<Op>();
      copy->kind = op->kind;
      copy->loc = op->loc;
      copy->attrs = op->attrs;
      for (size_t i = 0; i < op->operands.size(); ++i) {
        const Value *x = op->operands[i];
        if (natural.count(x)) {
          copy->operands.push_back(natural.at(x));
          continue;
        }
        if (isCopiedLeaf(*x, fusion_)) {
          auto leaf = std::make_unique<Op>();
          leaf->kind = x->definingOp->kind;
          leaf->loc = x->definingOp->loc;
          leaf->attrs = x->definingOp->attrs;
          leaf->results.push_back(std::make_unique<Value>());
          Value &v = *leaf->results.back();
          v.name = x->name;
          v.type = x->type;
          v.loc = x->loc;
          v.definingOp = leaf.get();
          copy->operands.push_back(&v);
          chain->shadow.ops.push_back(std::move(leaf));
          continue;
        }
        std::vector<int> carried = *operandAxes(*op, i, axes);
        Value *&arg = viewArgs[{x, carried}];
        if (!arg) {
          chain->shadow.args.push_back(std::make_unique<Value>());
          arg = chain->shadow.args.back().get();
          arg->name = x->name;
          arg->type = TensorType{sliceShape(x->type.shape, carried), x->type.dtype};
          arg->loc = x->loc;
          chain->views.push_back({arg, {x, strides(x->type.shape, carried)}});
        }
        copy->operands.push_back(arg);
      }
      copy->operandLocs = op->operandLocs;
      const Value &result = *op->result();
      std::vector<int> carried(result.type.rank(), -1);
      for (size_t a = 0; a < axes.size(); ++a)
        carried[a] = axes[a] > 1 ? static_cast<int>(a) : -1;
      copy->results.push_back(std::make_unique<Value>());
      Value &v = *copy->results.back();
      v.name = result.name;
      v.type = TensorType{sliceShape(result.type.shape, carried), result.type.dtype};
      v.loc = result.loc;
      v.definingOp = copy.get();
      natural[&result] = &v;
      if (readAfter(result, members)) {
        chain->shadow.returned.push_back(&v);
        chain->views.push_back({&v, {&result, strides(result.type.shape, carried)}});
      }
      chain->shadow.ops.push_back(std::move(copy));
    }
    chain->fusion = planFusion(chain->shadow);
    return chain;
  }

  /// True when every view is one block of its value's row-major buffer.
  static bool contiguous(const SliceChain &chain) {
    for (const auto &[shadow, view] : chain.views) {
      const std::vector<int64_t> &full = view.original->type.shape;
      const std::vector<int64_t> &part = shadow->type.shape;
      size_t d = 0;
      while (d < full.size() && part[d] == 1)
        ++d;
      for (++d; d < full.size(); ++d)
        if (part[d] != full[d])
          return false;
    }
    return true;
  }
};

} // namespace

std::vector<int64_t> SliceChain::sliceCounts() const {
  std::vector<int64_t> counts;
  for (size_t a = 0; a < axes.size(); ++a)
    counts.push_back(axes[a] / tile[a]);
  return counts;
}

std::vector<std::unique_ptr<SliceChain>> planSliceChains(const Block &block,
                                                         const FusionPlan &fusion) {
  return ChainBuilder(block, fusion).plan();
}

} // namespace shardc::llvmgen
