// Which node each rank runs on (MPI_COMM_TYPE_SHARED: the ranks that can
// share memory) and which mesh axes therefore cross node boundaries, for
// --help and --profile under a launcher. A collective over an axis that
// crosses nodes goes over the network; one within a node does not.
#include "runtime/Context.h"

#include "support/NodeMap.h"

#include <algorithm>
#include <set>

namespace shardrt {

std::vector<int64_t> nodeOfEveryRank(shardrt_context *ctx, MPI_Comm comm) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  MPI_Comm local = MPI_COMM_NULL;
  checkMpi(ctx, MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local),
           "MPI_Comm_split_type");
  // A node's id: the lowest rank on it.
  int64_t mine = rank, node = rank;
  MPI_Request request;
  checkMpi(ctx, MPI_Iallreduce(&mine, &node, 1, MPI_INT64_T, MPI_MIN, local, &request),
           "MPI_Iallreduce");
  waitAll(ctx, 1, &request, "MPI_Iallreduce");
  MPI_Comm_free(&local);
  std::vector<int64_t> nodes(static_cast<size_t>(ranks));
  checkMpi(ctx, MPI_Iallgather(&node, 1, MPI_INT64_T, nodes.data(), 1, MPI_INT64_T, comm, &request),
           "MPI_Iallgather");
  waitAll(ctx, 1, &request, "MPI_Iallgather");
  return nodes;
}

std::string nodesText(const shardrt_program &program, const std::vector<int64_t> &nodeOfRank) {
  std::set<int64_t> distinct(nodeOfRank.begin(), nodeOfRank.end());
  std::string perNode;
  std::set<long long> counts;
  for (int64_t node : distinct) {
    long long count = std::count(nodeOfRank.begin(), nodeOfRank.end(), node);
    perNode += format("%s%lld", perNode.empty() ? "" : ", ", count);
    counts.insert(count);
  }
  if (counts.size() == 1) // the usual launch: say it once
    perNode = std::to_string(*counts.begin());
  size_t ranks = nodeOfRank.size();
  std::string text =
      format("nodes: %zu rank%s on %zu node%s (ranks per node: %s)\n", ranks, ranks == 1 ? "" : "s",
             distinct.size(), distinct.size() == 1 ? "" : "s", perNode.c_str());
  for (int64_t m = 0; m < program.num_meshes; ++m) {
    const shardrt_mesh &mesh = program.meshes[m];
    if (!*mesh.name || mesh.num_axes == 0)
      continue;
    std::vector<int64_t> sizes(mesh.axis_sizes, mesh.axis_sizes + mesh.num_axes), devices;
    if (mesh.device_ids)
      devices.assign(mesh.device_ids, mesh.device_ids + meshDevices(mesh));
    std::vector<bool> crossing = shardc::support::axesCrossingNodes(sizes, devices, nodeOfRank);
    std::string across, within;
    for (int64_t a = 0; a < mesh.num_axes; ++a) {
      std::string &list = crossing[static_cast<size_t>(a)] ? across : within;
      list += format("%s\"%s\"", list.empty() ? "" : ", ", mesh.axis_names[a]);
    }
    text +=
        format("  @%s: crossing nodes: %s; within a node: %s\n", mesh.name,
               across.empty() ? "none" : across.c_str(), within.empty() ? "none" : within.c_str());
  }
  return text;
}

} // namespace shardrt
