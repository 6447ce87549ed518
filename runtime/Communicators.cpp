// Communicators per collective group. Colour = the mesh coordinates the
// group's axes don't cover (so the members of one group share it); key = the
// group index, mixed-radix over the listed axes, the first listed major.
// Example: mesh <["x"=2, "y"=4]>, axes {"y":(2)2}: "y" has digits
// [pre 2][size 2][stride 1]; device (x=1, y=3) covers digit 3/1%2 = 1, so its
// index is 1 and its colour is the position of (1, 3 - 1*1) = (1, 2).
#include "runtime/Communicators.h"

namespace shardrt {

Communicators::~Communicators() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    return;
  for (auto &entry : cache_)
    if (entry.second.comm != MPI_COMM_NULL)
      MPI_Comm_free(&entry.second.comm);
}

const Group &Communicators::get(const shardrt_group &group) {
  std::vector<int64_t> key{group.mesh};
  for (int64_t i = 0; i < group.num_axes; ++i)
    key.insert(key.end(), {group.axes[i].axis, group.axes[i].pre_size, group.axes[i].size});
  auto found = cache_.find(key);
  if (found != cache_.end())
    return found->second;
  return cache_.emplace(key, create(group)).first->second;
}

GroupPlace placeInGroup(shardrt_context *ctx, const shardrt_group &group) {
  const shardrt_program &program = *ctx->program;
  if (group.mesh < 0 || group.mesh >= program.num_meshes || group.num_axes < 0)
    internalError(ctx, format("collective group on mesh %lld of %lld",
                              static_cast<long long>(group.mesh),
                              static_cast<long long>(program.num_meshes)));
  std::string problem = axisRefsProblem(program, group.mesh, group.axes, group.num_axes);
  if (!problem.empty())
    internalError(ctx, "collective group - " + problem);

  const shardrt_mesh &mesh = program.meshes[group.mesh];
  GroupPlace place;
  for (int64_t i = 0; i < group.num_axes; ++i)
    place.size *= group.axes[i].size;
  if (place.size == 1)
    return place;
  if (ctx->positions[group.mesh] < 0)
    internalError(ctx, format("collective over mesh @%s, which doesn't hold this rank", mesh.name));
  std::vector<int64_t> uncovered = ctx->coords[group.mesh];
  for (int64_t i = 0; i < group.num_axes; ++i) {
    const shardrt_axis_ref &axis = group.axes[i];
    // Pieces never overlap, so removing one piece's digit leaves the others'.
    int64_t digit = axisDigit(mesh, axis, uncovered[axis.axis]);
    place.index = place.index * axis.size + digit;
    uncovered[axis.axis] -= digit * axisStride(mesh, axis);
  }
  for (int64_t a = 0; a < mesh.num_axes; ++a)
    place.colour = place.colour * mesh.axis_sizes[a] + uncovered[a];
  return place;
}

Group Communicators::create(const shardrt_group &group) {
  GroupPlace place = placeInGroup(ctx_, group);
  Group result;
  result.size = place.size;
  result.index = place.index;
  if (place.size == 1)
    return result;
  // MPI_Comm_split blocks, and a blocked MPICH rank busy-polls; meeting in
  // a nonblocking barrier first (waitAll yields) keeps that spin short.
  MPI_Request arrived;
  checkMpi(ctx_, MPI_Ibarrier(ctx_->world, &arrived), "MPI_Ibarrier");
  waitAll(ctx_, 1, &arrived, "MPI_Ibarrier");
  checkMpi(ctx_,
           MPI_Comm_split(ctx_->world, static_cast<int>(place.colour),
                          static_cast<int>(place.index), &result.comm),
           "MPI_Comm_split");
  int size = 0, rank = 0;
  MPI_Comm_size(result.comm, &size);
  MPI_Comm_rank(result.comm, &rank);
  if (size != result.size || rank != result.index)
    internalError(ctx_, format("collective group on mesh @%s has %d members (expected %lld)",
                               ctx_->program->meshes[group.mesh].name, size,
                               static_cast<long long>(result.size)));
  return result;
}

} // namespace shardrt

extern "C" {

int64_t shardrt_group_size(shardrt_context *ctx, const shardrt_group *group) {
  return shardrt::placeInGroup(ctx, *group).size;
}

int64_t shardrt_group_index(shardrt_context *ctx, const shardrt_group *group) {
  return shardrt::placeInGroup(ctx, *group).index;
}

} // extern "C"
