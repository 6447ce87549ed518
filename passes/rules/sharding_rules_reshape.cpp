// The reshape rule: a common factorization of two shapes with the same
// element count, such that every dim is a contiguous run of factors and a
// factor shared by both sides covers the same elements in both.
//
// Points. Read a shape major to minor; the "point" after a prefix of it is
// the product of the sizes in that prefix (1 before the first dim, the
// element count after the last). A factor of size f that starts at point p
// ends at point p*f, and covers the elements whose row-major index, divided
// by count/(p*f), is congruent modulo f. A factor can be shared by the two
// sides exactly when both sides cut at its start and at its end. Each side
// can cut at point v only inside one of its dims: P[k] | v | P[k+1], with
// P[k] the point before dim k.
//
// Algorithm (size-1 dims dropped first; they map to no factor):
//   1. Start at point p = 1, in the first dim of each side.
//   2. With restIn = P[i+1] / p and restOut = Q[j+1] / p the parts of the
//      current dims after p: if g = gcd(restIn, restOut) > 1, add a factor g
//      shared by in dim i and out dim j, and move to p * g.
//   3. Otherwise the sides diverge. Find the next point v where both can cut:
//      the least v = lcm(P[k], Q[l], p) over later dim pairs (k, l) with
//      v | P[k+1] and v | Q[l+1] (the last pair always qualifies, at the
//      element count). Each side cuts [p, v] at its own dim boundaries and
//      gets one factor per piece, mapped on that side only; the pieces of
//      both sides become factors in order of their start (in before out).
//      Move to v.
//   4. Step into the next dim on each side whose end p has reached; repeat
//      from 2 until p is the element count.
// Every factor created is > 1, each dim's factors multiply to its size, and
// the result agrees with Shardy's registry on its reshape tests.
//
// Worked example, 6x4 -> 4x6 (points of in: 1 6 24, of out: 1 4 24):
//   p=1:  rest 6 and 4, gcd 2: shared factor i=2, p=2.
//   p=2:  rest 3 and 2, gcd 1: diverge. Pairs (in dim, out dim): (0, 1)
//         gives lcm(1, 4, 2)=4, which doesn't divide 6; (1, 0) gives 6, which
//         doesn't divide 4; (1, 1) gives 12, dividing 24 and 24: v=12. In
//         cuts [2, 12] at 6: pieces 3@2, 2@6; out cuts it at 4: 2@2, 3@4.
//         In start order: j=3 (in), k=2 (out), l=3 (out), m=2 (in). p=12.
//   p=12: rest 2 and 2: shared factor n=2, p=24, done.
//   Rule: ([ij, mn])->([ik, ln]) {i=2, j=3, k=2, l=3, m=2, n=2}.
#include "passes/rules/ShardingRules.h"

#include <algorithm>
#include <numeric>

namespace shardc {
namespace {

/// One side of a reshape: its dims of size > 1 and the points between them.
struct Side {
  std::vector<size_t> dims;    // index in the shape of each dim of size > 1
  std::vector<int64_t> points; // points[k]: the product of the dims before dims[k]
};

std::optional<Side> makeSide(const std::vector<int64_t> &shape) {
  Side side;
  side.points.push_back(1);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 1)
      return std::nullopt; // negative, or no elements at all
    if (shape[d] == 1)
      continue;
    int64_t next;
    if (__builtin_mul_overflow(side.points.back(), shape[d], &next))
      return std::nullopt;
    side.dims.push_back(d);
    side.points.push_back(next);
  }
  return side;
}

/// A factor of one side between two common points: where it starts, its
/// size, and the shape dim it belongs to.
struct Piece {
  int64_t start;
  int64_t size;
  size_t dim;
};

/// Cuts [from, to] at the dim boundaries of `side`, `from` lying in its k-th
/// dim of size > 1 (step 3).
std::vector<Piece> cutSide(const Side &side, size_t k, int64_t from, int64_t to) {
  std::vector<Piece> pieces;
  for (int64_t point = from; point < to; ++k) {
    int64_t end = std::min(side.points[k + 1], to);
    pieces.push_back({point, end / point, side.dims[k]});
    point = end;
  }
  return pieces;
}

int64_t lcm(int64_t a, int64_t b) { return a / std::gcd(a, b) * b; }

/// The next point after `p` (in dims i and j) where both sides can cut.
int64_t nextCommonPoint(const Side &in, const Side &out, size_t i, size_t j, int64_t p) {
  int64_t best = in.points.back();
  for (size_t k = i; k < in.dims.size(); ++k) {
    for (size_t l = j; l < out.dims.size(); ++l) {
      if (k == i && l == j)
        continue; // step 2 found no cut in there
      // All points divide the element count, so neither lcm overflows.
      int64_t v = lcm(lcm(in.points[k], out.points[l]), p);
      if (in.points[k + 1] % v == 0 && out.points[l + 1] % v == 0)
        best = std::min(best, v);
    }
  }
  return best;
}

/// A reshape of a tensor without elements: nothing to propagate (Shardy's
/// registry gives it no factors), so every dim of size other than 1 gets a
/// need-replication factor of its own and the partitioner gathers it (which
/// moves no data). Nullopt when a side has elements or a negative dim.
std::optional<ShardingRule> zeroElementReshapeRule(const std::vector<int64_t> &from,
                                                   const std::vector<int64_t> &to) {
  auto hasZero = [](const std::vector<int64_t> &shape) {
    return std::find(shape.begin(), shape.end(), 0) != shape.end();
  };
  auto anyNegative = [](const std::vector<int64_t> &shape) {
    return std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; });
  };
  if (!hasZero(from) || !hasZero(to) || anyNegative(from) || anyNegative(to))
    return std::nullopt;
  ShardingRule rule;
  for (const std::vector<int64_t> *shape : {&from, &to}) {
    TensorFactors dims(shape->size());
    for (size_t d = 0; d < shape->size(); ++d)
      if ((*shape)[d] != 1)
        dims[d].push_back(rule.addFactor((*shape)[d], FactorKind::NeedReplication));
    (shape == &from ? rule.operands : rule.results).push_back(std::move(dims));
  }
  return rule;
}

} // namespace

std::optional<ShardingRule> reshapeRule(const std::vector<int64_t> &from,
                                        const std::vector<int64_t> &to) {
  if (std::optional<ShardingRule> empty = zeroElementReshapeRule(from, to))
    return empty;
  std::optional<Side> in = makeSide(from), out = makeSide(to);
  if (!in || !out || in->points.back() != out->points.back())
    return std::nullopt;
  ShardingRule rule;
  rule.operands.emplace_back(from.size());
  rule.results.emplace_back(to.size());
  TensorFactors &inDims = rule.operands[0], &outDims = rule.results[0];

  const int64_t count = in->points.back();
  size_t i = 0, j = 0; // the current dims (of size > 1) of each side
  int64_t p = 1;
  while (p < count) {
    int64_t restIn = in->points[i + 1] / p, restOut = out->points[j + 1] / p;
    int64_t g = std::gcd(restIn, restOut);
    if (g > 1) {
      int factor = rule.addFactor(g, FactorKind::PassThrough);
      inDims[in->dims[i]].push_back(factor);
      outDims[out->dims[j]].push_back(factor);
      p *= g;
    } else {
      int64_t v = nextCommonPoint(*in, *out, i, j, p);
      std::vector<Piece> inPieces = cutSide(*in, i, p, v), outPieces = cutSide(*out, j, p, v);
      size_t a = 0, b = 0;
      while (a < inPieces.size() || b < outPieces.size()) {
        bool takeIn = b == outPieces.size() ||
                      (a < inPieces.size() && inPieces[a].start <= outPieces[b].start);
        const Piece &piece = takeIn ? inPieces[a++] : outPieces[b++];
        int factor = rule.addFactor(piece.size, FactorKind::PassThrough);
        (takeIn ? inDims : outDims)[piece.dim].push_back(factor);
      }
      p = v;
    }
    while (i < in->dims.size() && in->points[i + 1] <= p)
      ++i;
    while (j < out->dims.size() && out->points[j + 1] <= p)
      ++j;
  }
  return rule;
}

} // namespace shardc
