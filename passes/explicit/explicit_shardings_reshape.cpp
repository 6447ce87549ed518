// --explicit mode: the result sharding of a reshape, by JAX's rule
// (jax/_src/lax/lax.py _reshape_sharding_rule): size-1 dims stripped, then
// one split or one merge whose axes fit the result dims. The other ops'
// rules are factor based (explicit_shardings_rules.cpp).
#include "ir/Printer.h"
#include "passes/explicit/ExplicitShardingsInternal.h"

#include <fmt/format.h>

namespace shardc::explicit_shardings {

namespace {

/// JAX's split_partitions: hands `axes` (major to minor) to result dims of
/// `sizes`, each dim taking axes while it has a factor left that the next
/// axis divides. nullopt when an axis doesn't divide what is left of its dim,
/// or axes are left over.
std::optional<std::vector<DimSharding>> distributeAxes(const std::vector<AxisRef> &axes,
                                                       const std::vector<int64_t> &sizes,
                                                       const Mesh &mesh) {
  std::vector<DimSharding> dims;
  size_t next = 0;
  for (int64_t left : sizes) {
    std::vector<AxisRef> taken;
    while (left > 1 && next < axes.size()) {
      const MeshAxis *full = mesh.findAxis(axes[next].name);
      int64_t size = full ? axes[next].effectiveSize(full->size) : 0;
      if (size < 1 || left % size != 0)
        return std::nullopt;
      left /= size;
      taken.push_back(axes[next++]);
    }
    dims.push_back(closedDim(std::move(taken)));
  }
  if (next != axes.size())
    return std::nullopt;
  return dims;
}

} // namespace

// reshape, as JAX's sharding rule: an unsharded operand gives an unsharded
// result. Otherwise strip the size-1 dims (a size-1 result dim is unsharded,
// or keeps the sharding of a size-1 operand dim at the same index), then
// compare what is left. Equal shapes pass every dim through. One operand
// dim split into adjacent result dims hands its axes, major to minor, to the
// result dims that they divide (8 [{"x"}] -> 2x4 gives [{"x"}, {}] when x=2).
// Adjacent operand dims merged into one flatten their axes onto it, when no
// unsharded merged dim comes before a sharded one and the axes divide the
// merged size (4x6 [{"x"}, {}] -> 24 gives [{"x"}]). The dims outside the
// split/merge keep their shardings. Anything else needs an out_sharding.
std::optional<Sharding> inferReshape(const Op &op, const Module &module, DiagnosticEngine &diags) {
  const Value &in = *op.operands[0];
  const Value &out = *op.result();
  const Sharding &s = *in.sharding;
  if (out.sharding)
    return out.sharding;
  std::vector<DimSharding> dims(out.type.shape.size(), closedDim());
  bool sharded = false;
  for (const DimSharding &dim : s.dims)
    sharded |= !dim.axes.empty();
  const Mesh *mesh = module.findMesh(s.meshName);
  if (!sharded || !mesh)
    return makeSharding(s.meshName, std::move(dims));

  std::vector<size_t> inDims, outDims;
  for (size_t d = 0; d < in.type.shape.size(); ++d)
    if (in.type.shape[d] != 1)
      inDims.push_back(d);
  for (size_t d = 0; d < out.type.shape.size(); ++d) {
    if (out.type.shape[d] != 1)
      outDims.push_back(d);
    else if (d < in.type.shape.size() && in.type.shape[d] == 1)
      dims[d] = closedDim(s.dims[d].axes);
  }
  auto inSize = [&](size_t k) { return in.type.shape[inDims[k]]; };
  auto outSize = [&](size_t k) { return out.type.shape[outDims[k]]; };
  size_t prefix = 0;
  while (prefix < inDims.size() && prefix < outDims.size() && inSize(prefix) == outSize(prefix))
    ++prefix;
  size_t suffix = 0;
  while (suffix < inDims.size() - prefix && suffix < outDims.size() - prefix &&
         inSize(inDims.size() - 1 - suffix) == outSize(outDims.size() - 1 - suffix))
    ++suffix;
  size_t inMiddle = inDims.size() - prefix - suffix;
  size_t outMiddle = outDims.size() - prefix - suffix;

  // The dims outside the split/merge keep their shardings.
  for (size_t k = 0; k < prefix; ++k)
    dims[outDims[k]] = closedDim(s.dims[inDims[k]].axes);
  for (size_t k = 0; k < suffix; ++k)
    dims[outDims[outDims.size() - 1 - k]] = closedDim(s.dims[inDims[inDims.size() - 1 - k]].axes);
  Sharding result = makeSharding(s.meshName, dims);

  bool split = inMiddle == 1 && outMiddle >= 2;
  bool merge = inMiddle >= 2 && outMiddle == 1;
  if (!split && !merge && (inMiddle != 0 || outMiddle != 0)) {
    diags
        .error(op.loc, fmt::format("reshape - neither a single split nor a single merge of "
                                   "dims, the result sharding needs an out_sharding: {} to {}, "
                                   "operand {}",
                                   printType(in.type), printType(out.type), printSharding(s)))
        .note(Loc{}, outShardingNote(op, result));
    return std::nullopt;
  }
  if (!split && !merge)
    return result;

  // The merged (or split) operand dims' axes, major to minor; a sharded dim
  // after an unsharded one can't be flattened onto one dim.
  std::vector<AxisRef> axes;
  bool gap = false, fits = true;
  for (size_t k = prefix; k < prefix + inMiddle; ++k) {
    const std::vector<AxisRef> &dimAxes = s.dims[inDims[k]].axes;
    fits &= !(gap && !dimAxes.empty());
    gap |= dimAxes.empty();
    axes.insert(axes.end(), dimAxes.begin(), dimAxes.end());
  }
  std::vector<int64_t> sizes;
  for (size_t k = prefix; k < prefix + outMiddle; ++k)
    sizes.push_back(outSize(k));
  std::optional<std::vector<DimSharding>> middle =
      fits ? distributeAxes(axes, sizes, *mesh) : std::nullopt;
  if (middle) {
    for (size_t k = 0; k < outMiddle; ++k)
      result.dims[outDims[prefix + k]] = (*middle)[k];
    return result;
  }
  size_t firstSharded = prefix;
  while (s.dims[inDims[firstSharded]].axes.empty())
    ++firstSharded;
  auto error = diags.error(
      op.loc, fmt::format("reshape - {} dim {} is sharded and its axes don't fit the result "
                          "dims, the result sharding needs an out_sharding: {} to {}, operand {}",
                          split ? "split" : "merged", inDims[firstSharded], printType(in.type),
                          printType(out.type), printSharding(s)));
  error.note(Loc{}, outShardingNote(op, result));
  Sharding unsharded = s;
  for (size_t k = prefix; k < prefix + inMiddle; ++k)
    unsharded.dims[inDims[k]].axes.clear();
  unsharded.replicated.clear();
  error.note(Loc{}, "or " + reshardNote(in, unsharded));
  return std::nullopt;
}

} // namespace shardc::explicit_shardings
