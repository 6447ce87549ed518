// The pass table behind `shardc --list-passes`, in pipeline order.
#include "passes/Passes.h"

namespace shardc {

const std::vector<PassInfo> &allPasses() {
  static const std::vector<PassInfo> passes = {
      {"parse", "parse .shd source and build the IR",
       "ANTLR grammar (grammar/Shd.g4) and IR builder: resolves values and "
       "meshes, decodes types, shardings and attributes"},
      {"infer-types", "infer and check every op's result type",
       "numpy/ONNX broadcasting, matmul and einsum dims, reductions, reshape "
       "element count, transpose perm, concat, slice and pad bounds, dtypes; "
       "a written result type must equal the inferred one",
       inferTypes},
      {"verify-shardings", "check every sharding invariant",
       "meshes, axis references, sub-axes, priorities, replicated axes, "
       "device counts and manual_computation rules, in Shardy's order",
       verifyShardings},
      {"propagate-shardings", "complete every value's sharding (Shardy propagation)",
       "factor rules per op, user priorities then op priorities, aggressive "
       "conflict resolution (the larger tensor wins); open dims grow, closed dims "
       "and explicitly replicated axes block, never across meshes; closes every "
       "sharding at the end",
       propagateShardings},
      {"explicit-shardings", "with --explicit: JAX sharding in types",
       "every result's sharding from its op's rule; unannotated parameters "
       "replicated; open dims, ambiguous and illegal results are errors whose "
       "notes give the out_sharding or reshard that resolves them",
       inferExplicitShardings, "propagate-shardings"},
      {"export", "close every sharding before partitioning",
       "open dims closed, priorities dropped, values without a sharding replicated "
       "on the program's only mesh",
       exportShardings},
      {"partition", "rewrite into the per-device (SPMD) program",
       "per mesh run a manual_computation over all axes: local padded shapes, "
       "collectives from the reshard planner (least bytes per device), partial "
       "sums reduced by all_reduce or reduce_scatter, padding masked before "
       "reductions and contractions",
       static_cast<PassFn>(partitionModule)},
  };
  return passes;
}

} // namespace shardc
