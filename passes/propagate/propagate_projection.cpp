// propagate-shardings, part 1: axis arithmetic and the projection of a
// tensor's dim shardings onto an op's factors and back (Shardy's
// ShardingProjection).
//
// Worked example, reshape tensor<8> -> tensor<2x4> on @m = <["x"=4]>, rule
// ([ij]) -> ([i], [j]) with i=2, j=4:
//   1. operand dim 0 = {"x"} over factors i, j. i is not minor-most: gcd(2, 4)
//      = 2, so i takes "x":(1)2 and is full; what is left of "x" is (2)2.
//   2. j is the minor-most factor: it takes "x":(2)2.
//   3. the result's dims are [i], [j]; once propagation has given them the
//      operand's factor axes, projecting back gives [{"x":(1)2}, {"x":(2)2}].
//   4. the other way round, dim [ij] gets "x":(1)2 then "x":(2)2, which merge
//      back into {"x"}.
#include "passes/propagate/PropagateInternal.h"

#include <numeric>

namespace shardc::propagation {

// ---- projection ------------------------------------------------------------------

namespace {

/// The axes of one dim as a queue of (name, pre, size) pieces: a factor may
/// take the front piece whole or split off its major part.
class AxisQueue {
public:
  AxisQueue(const std::vector<AxisRef> &axes, const Mesh &mesh) : axes_(axes), mesh_(mesh) {
    load();
  }

  bool empty() const { return index_ >= axes_.size(); }
  int64_t frontSize() const { return size_; }

  /// Takes the front piece whole.
  AxisRef takeFront() {
    AxisRef out = makeAxis(axes_[index_].name, pre_, size_, mesh_);
    ++index_;
    load();
    return out;
  }

  /// Takes the major `part` of the front piece (`part` divides its size).
  AxisRef splitFront(int64_t part) {
    AxisRef out = makeAxis(axes_[index_].name, pre_, part, mesh_);
    pre_ *= part;
    size_ /= part;
    return out;
  }

private:
  void load() {
    if (empty())
      return;
    pre_ = preSizeOf(axes_[index_]);
    size_ = sizeOf(axes_[index_], mesh_);
  }

  const std::vector<AxisRef> &axes_;
  const Mesh &mesh_;
  size_t index_ = 0;
  int64_t pre_ = 1, size_ = 1;
};

} // namespace

TensorProjection projectTensor(const Sharding *sharding, const TensorFactors &dims,
                               const ShardingRule &rule, const Mesh &mesh,
                               const std::vector<AxisRef> &forbidden) {
  TensorProjection t;
  projectTensor(t, sharding, dims, rule, mesh, forbidden);
  return t;
}

void projectTensor(TensorProjection &t, const Sharding *sharding, const TensorFactors &dims,
                   const ShardingRule &rule, const Mesh &mesh,
                   const std::vector<AxisRef> &forbidden) {
  // Reset `t`, keeping the capacity of its vectors: propagation projects
  // every tensor of every op it visits, and allocation would dominate.
  t.present = true;
  t.elements = 1;
  t.blocked.clear();
  t.factors.resize(rule.numFactors());
  for (FactorSharding &fs : t.factors) {
    fs.present = fs.closed = fs.minorMost = false;
    fs.axes.clear();
    fs.overflow.clear();
    fs.majors.clear();
  }
  static const std::vector<AxisRef> kNoAxes;
  for (size_t d = 0; d < dims.size(); ++d) {
    const std::vector<AxisRef> &axes =
        sharding && d < sharding->dims.size() ? sharding->dims[d].axes : kNoAxes;
    bool closed = sharding && d < sharding->dims.size() && !sharding->dims[d].open;
    const DimFactors &factors = dims[d];
    if (factors.empty()) {
      // A dim without factors (size 1) keeps its axes; nobody else may use them.
      t.blocked.insert(t.blocked.end(), axes.begin(), axes.end());
      continue;
    }
    AxisQueue queue(axes, mesh);
    bool afterOverflow = false;
    for (size_t k = 0; k < factors.size(); ++k) {
      FactorSharding &fs = t.factors[factors[k]];
      fs.present = true;
      fs.minorMost = k + 1 == factors.size();
      fs.majors.assign(factors.begin(), factors.begin() + k);
      fs.closed = closed || afterOverflow;
      if (afterOverflow)
        continue;
      if (fs.minorMost) {
        // Everything left, even when it does not divide the factor (padding).
        while (!queue.empty())
          appendMerging(fs.axes, queue.takeFront(), mesh);
        break;
      }
      int64_t remaining = rule.factorSizes[factors[k]];
      while (!queue.empty()) {
        int64_t piece = queue.frontSize();
        if (piece == 1) {
          fs.axes.push_back(queue.takeFront());
          continue;
        }
        int64_t g = std::gcd(remaining, piece);
        if (g == 1)
          break;
        fs.axes.push_back(g < piece ? queue.splitFront(g) : queue.takeFront());
        remaining /= g;
      }
      if (remaining > 1 && !queue.empty()) {
        // The factor and the next axis are coprime: the rest of the dim's
        // axes cannot be split along factors. Keep them as overflow, and
        // close the later factors of this dim.
        while (!queue.empty())
          appendMerging(fs.overflow, queue.takeFront(), mesh);
        afterOverflow = true;
      }
    }
  }
  if (sharding)
    t.blocked.insert(t.blocked.end(), sharding->replicated.begin(), sharding->replicated.end());
  t.blocked.insert(t.blocked.end(), forbidden.begin(), forbidden.end());
}

std::vector<std::vector<AxisRef>> projectBack(const TensorProjection &tensor,
                                              const TensorFactors &dims, const ShardingRule &rule,
                                              const Mesh &mesh,
                                              const std::vector<DimSharding> *oldDims) {
  std::vector<std::vector<AxisRef>> out(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d].empty()) {
      if (oldDims && d < oldDims->size())
        out[d] = (*oldDims)[d].axes;
      continue;
    }
    for (int f : dims[d]) {
      const FactorSharding &fs = tensor.factors[f];
      for (const AxisRef &a : fs.axes)
        appendMerging(out[d], a, mesh);
      if (!fs.overflow.empty()) {
        for (const AxisRef &a : fs.overflow)
          appendMerging(out[d], a, mesh);
        break;
      }
      if (productOf(fs.axes, mesh) < rule.factorSizes[f])
        break;
    }
  }
  return out;
}

bool canGrow(const TensorProjection &tensor, int f, const ShardingRule &rule, const Mesh &mesh) {
  const FactorSharding &fs = tensor.factors[f];
  if (!tensor.present || !fs.present || fs.closed || !fs.overflow.empty())
    return false;
  for (int major : fs.majors)
    if (productOf(tensor.factors[major].axes, mesh) != rule.factorSizes[major])
      return false;
  return true;
}

} // namespace shardc::propagation
