// One MPI communicator per collective group (a mesh and a list of its axes
// or sub-axes), made on first use and cached for the rest of the run.
#pragma once

#include "runtime/Context.h"

#include <map>
#include <vector>

namespace shardrt {

/// This rank's group for one shardrt_group: the communicator (MPI_COMM_NULL
/// for a group of one), its size and this rank's index in it (= its rank in
/// the communicator).
struct Group {
  MPI_Comm comm = MPI_COMM_NULL;
  int64_t size = 1;
  int64_t index = 0;
};

/// Where this rank sits in a group, computed locally (no communication):
/// the group's size, this rank's index in it, and the colour shared by the
/// group's members. Checks the group (internalError on a bad one).
struct GroupPlace {
  int64_t size = 1;
  int64_t index = 0;
  int64_t colour = 0;
};
GroupPlace placeInGroup(shardrt_context *ctx, const shardrt_group &group);

class Communicators {
public:
  explicit Communicators(shardrt_context *ctx) : ctx_(ctx) {}
  ~Communicators();
  Communicators(const Communicators &) = delete;
  Communicators &operator=(const Communicators &) = delete;

  /// The group of this rank for `group`. The first call for a group is
  /// collective over every rank (MPI_Comm_split); in an SPMD program every
  /// rank reaches every collective of a full mesh, so all of them make it.
  const Group &get(const shardrt_group &group);

private:
  Group create(const shardrt_group &group);

  shardrt_context *ctx_;
  /// Key: mesh, then (axis, pre_size, size) per listed axis.
  std::map<std::vector<int64_t>, Group> cache_;
};

} // namespace shardrt
