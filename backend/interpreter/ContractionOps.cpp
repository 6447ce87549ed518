// Contractions: matmul (2-D and batched N-D, batch dims broadcast as numpy
// does) and einsum (any letters, any number of operands; a label missing
// from the output is summed over, a label in several inputs and the output
// is a batch dim). Floats accumulate in double and round once at the end;
// integers accumulate in uint64 and wrap.
#include "backend/interpreter/InterpreterInternal.h"
#include "support/Einsum.h"

#include <algorithm>
#include <map>
#include <utility>

namespace shardc::interp::detail {
namespace {

/// Where batch `index` starts in each operand.
std::pair<int64_t, int64_t> offsetsOf(const std::vector<int64_t> &index,
                                      const std::vector<int64_t> &lStride,
                                      const std::vector<int64_t> &rStride) {
  int64_t lOff = 0, rOff = 0;
  for (size_t i = 0; i < index.size(); ++i) {
    lOff += index[i] * lStride[i];
    rOff += index[i] * rStride[i];
  }
  return {lOff, rOff};
}

/// One batch's m x n product of row-major lhs (m x k) and rhs (k x n) read
/// from `offsets`, in `Acc` (double for floats, wrapping uint64 for
/// integers); `store(at, sum)` writes output element `at` of batch `b`.
template <typename Acc, typename Element, typename Store>
void accumulateRows(const std::vector<Element> &lhs, const std::vector<Element> &rhs,
                    std::pair<int64_t, int64_t> offsets, int64_t b, int64_t m, int64_t k, int64_t n,
                    Store store) {
  std::vector<Acc> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), Acc(0));
    for (int64_t p = 0; p < k; ++p) {
      const Acc a = static_cast<Acc>(lhs[static_cast<size_t>(offsets.first + i * k + p)]);
      const Element *r = rhs.data() + offsets.second + p * n;
      for (int64_t j = 0; j < n; ++j)
        row[static_cast<size_t>(j)] += a * static_cast<Acc>(r[j]);
    }
    for (int64_t j = 0; j < n; ++j)
      store((b * m + i) * n + j, row[static_cast<size_t>(j)]);
  }
}

Tensor matmul(const Op &op, const Tensor &lhs, const Tensor &rhs) {
  if (lhs.rank() < 2 || rhs.rank() < 2)
    fail(op, "operands must have rank 2 or more");
  const int64_t m = lhs.shape()[lhs.rank() - 2], k = lhs.shape().back();
  const int64_t n = rhs.shape().back();
  if (rhs.shape()[rhs.rank() - 2] != k)
    fail(op, "contracting dims don't match");
  // Batch dims, aligned from the right; a size-1 batch dim is read with
  // stride 0 (broadcast).
  size_t lb = lhs.rank() - 2, rb = rhs.rank() - 2, batchRank = std::max(lb, rb);
  std::vector<int64_t> batch(batchRank, 1), lStride(batchRank, 0), rStride(batchRank, 0);
  std::vector<int64_t> lOwn = stridesOf(lhs.shape()), rOwn = stridesOf(rhs.shape());
  for (size_t i = 0; i < batchRank; ++i) {
    int64_t ls = 1, rs = 1;
    if (i + lb >= batchRank) {
      size_t d = i + lb - batchRank;
      ls = lhs.shape()[d];
      lStride[i] = ls == 1 ? 0 : lOwn[d];
    }
    if (i + rb >= batchRank) {
      size_t d = i + rb - batchRank;
      rs = rhs.shape()[d];
      rStride[i] = rs == 1 ? 0 : rOwn[d];
    }
    if (ls != rs && ls != 1 && rs != 1)
      fail(op, "batch dims are not broadcast-compatible");
    batch[i] = ls == 1 ? rs : ls;
  }
  std::vector<int64_t> shape = batch;
  shape.push_back(m);
  shape.push_back(n);
  Tensor out(TensorType{shape, lhs.dtype()});
  // Row by row: out[i, :] accumulates lhs[i, p] * rhs[p, :] for p in order,
  // so each element sums the same products in the same order as a dot
  // product would, while rhs is read along its rows (a column walk made
  // large operands miss the cache on every product).
  if (lhs.holdsFloats())
    forEachIndex(batch, [&](const std::vector<int64_t> &index, int64_t b) {
      accumulateRows<double>(lhs.floats(), rhs.floats(), offsetsOf(index, lStride, rStride), b, m,
                             k, n, [&](int64_t at, double v) { out.setFloat(at, v); });
    });
  else
    forEachIndex(batch, [&](const std::vector<int64_t> &index, int64_t b) {
      accumulateRows<uint64_t>(lhs.ints(), rhs.ints(), offsetsOf(index, lStride, rStride), b, m, k,
                               n, [&](int64_t at, uint64_t v) { out.setInt(at, v); });
    });
  return out;
}

/// `"bij,bjk->bik"`: one term per input, and the output's.
support::EinsumEquation parseEquation(const Op &op) {
  const Attribute *attr = op.attr(attrs::equation);
  if (!attr || attr->kind != Attribute::Kind::String)
    fail(op, "missing attribute: equation");
  support::EinsumParse parsed = support::parseEinsum(attr->s);
  if (!parsed.ok())
    fail(op, parsed.message(attr->s));
  return parsed.equation;
}

/// Row-major steps through the index space `shape` of the labels from
/// `first` on, moving each operand's element offset by its stride for the
/// label that turns.
class Odometer {
public:
  Odometer(const std::vector<int64_t> &shape, const std::vector<std::vector<int64_t>> &strides,
           size_t first)
      : shape_(shape), strides_(strides), first_(first), index_(shape.size(), 0) {}

  /// Steps to the next index, updating `offsets`; false (offsets back at
  /// the start) after the last one, and at once for an empty space.
  bool advance(std::vector<int64_t> &offsets) {
    for (size_t d = shape_.size(); d-- > 0;) {
      const size_t label = first_ + d;
      if (++index_[d] < shape_[d]) {
        for (size_t i = 0; i < offsets.size(); ++i)
          offsets[i] += strides_[i][label];
        return true;
      }
      for (size_t i = 0; i < offsets.size(); ++i)
        offsets[i] -= strides_[i][label] * (index_[d] - 1);
      index_[d] = 0;
    }
    return false;
  }

private:
  const std::vector<int64_t> &shape_;
  const std::vector<std::vector<int64_t>> &strides_;
  size_t first_;
  std::vector<int64_t> index_;
};

Tensor einsum(const Op &op, const std::vector<const Tensor *> &operands) {
  support::EinsumEquation eq = parseEquation(op);
  if (eq.inputs.size() != operands.size())
    fail(op, "number of terms doesn't match operands");
  std::vector<std::string> inputs;
  for (const support::EinsumTerm &term : eq.inputs)
    inputs.push_back(term.labels);
  const std::string &output = eq.output.labels;
  // Every label gets a position in one combined index: the output's labels
  // first, then the summed ones.
  std::string labels = eq.labelsOutputFirst();
  std::map<char, int64_t> sizes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].size() != operands[i]->rank())
      fail(op, "operand rank doesn't match its term");
    for (size_t d = 0; d < inputs[i].size(); ++d) {
      char c = inputs[i][d];
      auto [it, inserted] = sizes.emplace(c, operands[i]->shape()[d]);
      if (!inserted && it->second != operands[i]->shape()[d])
        fail(op, std::string("label has inconsistent sizes: ") + c);
    }
  }
  std::vector<int64_t> outShape, sumShape;
  for (size_t p = 0; p < labels.size(); ++p)
    (p < output.size() ? outShape : sumShape).push_back(sizes.at(labels[p]));
  // Per operand, the stride each combined-index position moves it by.
  std::vector<std::vector<int64_t>> strides;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<int64_t> own = stridesOf(operands[i]->shape());
    std::vector<int64_t> s(labels.size(), 0);
    for (size_t d = 0; d < inputs[i].size(); ++d)
      s[labels.find(inputs[i][d])] += own[d];
    strides.push_back(s);
  }
  bool floats = operands[0]->holdsFloats();
  Tensor out(TensorType{outShape, operands[0]->dtype()});
  // Odometers over the output's labels, then the summed ones, each operand's
  // offset kept up to date as they turn (no index vectors per element).
  std::vector<int64_t> base(operands.size(), 0);
  std::vector<const double *> floatData;
  std::vector<const int64_t *> intData;
  for (const Tensor *operand : operands)
    if (floats)
      floatData.push_back(operand->floats().data());
    else
      intData.push_back(operand->ints().data());
  // The last summed label runs as a plain loop inside the odometer over the
  // other summed labels (a turn of the odometer per product was 80% of the
  // time): the same products, summed in the same order.
  std::vector<int64_t> outerSum = sumShape;
  int64_t run = 1;
  std::vector<int64_t> runStride(operands.size(), 0);
  if (!sumShape.empty()) {
    run = sumShape.back();
    outerSum.pop_back();
    for (size_t i = 0; i < operands.size(); ++i)
      runStride[i] = strides[i][labels.size() - 1];
  }
  Odometer outer(outShape, strides, 0);
  const int64_t outputs = out.size();
  const bool emptySum =
      std::any_of(sumShape.begin(), sumShape.end(), [](int64_t n) { return n == 0; });
  // Both are back at their start after each output element.
  std::vector<int64_t> at = base;
  Odometer inner(outerSum, strides, outShape.size());
  for (int64_t linear = 0; linear < outputs; ++linear) {
    double fsum = 0;
    uint64_t isum = 0;
    at = base;
    do {
      if (emptySum)
        break; // a sum over nothing: zero
      // A product of two operands, the common case, on plain pointers.
      if (floats && floatData.size() == 2) {
        const double *x = floatData[0] + at[0], *y = floatData[1] + at[1];
        const int64_t xStride = runStride[0], yStride = runStride[1];
        for (int64_t r = 0; r < run; ++r)
          fsum += x[r * xStride] * y[r * yStride];
      } else if (floats) {
        for (int64_t r = 0; r < run; ++r) {
          double fprod = 1;
          for (size_t i = 0; i < floatData.size(); ++i)
            fprod *= floatData[i][at[i] + r * runStride[i]];
          fsum += fprod;
        }
      } else {
        for (int64_t r = 0; r < run; ++r) {
          uint64_t iprod = 1;
          for (size_t i = 0; i < intData.size(); ++i)
            iprod *= static_cast<uint64_t>(intData[i][at[i] + r * runStride[i]]);
          isum += iprod;
        }
      }
    } while (inner.advance(at));
    if (floats)
      out.setFloat(linear, fsum);
    else
      out.setInt(linear, isum);
    outer.advance(base);
  }
  return out;
}

} // namespace

Tensor evalContraction(const Op &op, const std::vector<const Tensor *> &operands) {
  if (op.kind == OpKind::Matmul)
    return matmul(op, *operands[0], *operands[1]);
  return einsum(op, operands);
}

} // namespace shardc::interp::detail
