// shardrt_redistribute: a global tensor from one (mesh, sharding) layout to
// another, e.g. a `reshard` between two meshes of the same devices in
// different orders. Every rank computes the same plan from the program
// description: for each rank that needs a block under `to`, which rank sends
// it each part of it (the intersections with the distinct blocks under
// `from`, each from one of the replicas holding it: the receiver itself when
// it is one, else a replica picked by the receiver's rank so that replicas
// share the sending), then packs its boxes, exchanges them with Isend/Irecv
// on the runtime's communicator (waited for with MPI_Testall +
// sched_yield), and unpacks.
#include "runtime/Context.h"
#include "runtime/Layout.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace shardrt {
namespace {

/// A box of global indices (start inclusive, end exclusive per dim).
struct Box {
  std::vector<int64_t> start, end;
  bool empty() const {
    for (size_t d = 0; d < start.size(); ++d)
      if (start[d] >= end[d])
        return true;
    return false;
  }
  int64_t elements() const {
    int64_t n = 1;
    for (size_t d = 0; d < start.size(); ++d)
      n *= end[d] - start[d];
    return n;
  }
};

Box heldBox(const Block &b) {
  Box box;
  for (size_t d = 0; d < b.global.size(); ++d) {
    box.start.push_back(b.start[d]);
    box.end.push_back(b.start[d] + b.extent[d]);
  }
  return box;
}

Box intersect(const Box &a, const Box &b) {
  Box box;
  for (size_t d = 0; d < a.start.size(); ++d) {
    box.start.push_back(std::max(a.start[d], b.start[d]));
    box.end.push_back(std::min(a.end[d], b.end[d]));
  }
  return box;
}

/// Calls fn(localOffset, count) for each row (run along the last dim) of
/// `box` inside a local buffer holding `block`; rank 0: one element.
template <typename Fn> void forEachRow(const Box &box, const Block &block, Fn &&fn) {
  const size_t ndims = box.start.size();
  if (ndims == 0) {
    fn(int64_t(0), int64_t(1));
    return;
  }
  std::vector<int64_t> index = box.start;
  for (;;) {
    int64_t offset = 0;
    for (size_t d = 0; d < ndims; ++d)
      offset = offset * block.local[d] + (index[d] - block.start[d]);
    fn(offset, box.end[ndims - 1] - box.start[ndims - 1]);
    size_t d = ndims - 1;
    while (d-- > 0) {
      if (++index[d] < box.end[d])
        break;
      index[d] = box.start[d];
    }
    if (d == static_cast<size_t>(-1))
      return;
  }
}

struct Transfer {
  int64_t source, target;
  Box box;
};

/// Who sends what to whom: the same list on every rank.
std::vector<Transfer> planTransfers(shardrt_context *ctx, const shardrt_tensor &from,
                                    const shardrt_tensor &to) {
  const shardrt_program &program = *ctx->program;
  const int64_t ranks = program.num_devices;
  // The distinct blocks under `from`, each with the ranks holding it.
  std::map<std::vector<int64_t>, std::pair<Box, std::vector<int64_t>>> sources;
  for (int64_t r = 0; r < ranks; ++r) {
    Block b = blockAt(program, from, positionOfRank(program.meshes[from.mesh], r), r);
    if (!b.holds)
      continue;
    Box box = heldBox(b);
    if (box.empty())
      continue;
    auto &entry = sources[box.start];
    entry.first = box;
    entry.second.push_back(r);
  }
  std::vector<Transfer> transfers;
  for (int64_t r = 0; r < ranks; ++r) {
    Block b = blockAt(program, to, positionOfRank(program.meshes[to.mesh], r), r);
    if (!b.holds)
      continue;
    Box want = heldBox(b);
    for (const auto &[key, source] : sources) {
      Box part = intersect(want, source.first);
      if (part.empty())
        continue;
      const std::vector<int64_t> &holders = source.second;
      int64_t sender = std::find(holders.begin(), holders.end(), r) != holders.end()
                           ? r
                           : holders[static_cast<size_t>(r) % holders.size()];
      transfers.push_back({sender, r, part});
    }
  }
  return transfers;
}

} // namespace
} // namespace shardrt

using namespace shardrt;

extern "C" void shardrt_redistribute(shardrt_context *ctx, int64_t op, const shardrt_tensor *from,
                                     const shardrt_tensor *to, const void *in, void *out) {
  if (from->dtype != to->dtype || from->ndims != to->ndims ||
      !std::equal(from->shape, from->shape + from->ndims, to->shape))
    internalError(ctx, "redistribute between tensors of different types");
  double start = now();
  const int64_t size = elementSize(ctx, from->dtype);
  const Block mineFrom = blockOf(ctx, *from), mineTo = blockOf(ctx, *to);
  if (mineTo.holds)
    std::memset(out, 0, static_cast<size_t>(mineTo.localElements() * size));
  std::vector<Transfer> transfers = planTransfers(ctx, *from, *to);

  const int64_t me = ctx->rank;
  std::vector<std::vector<char>> packed;
  std::vector<std::pair<const Transfer *, std::vector<char>>> incoming;
  std::vector<MPI_Request> requests;
  double sentBytes = 0;
  const int tag = 2;
  const char *src = static_cast<const char *>(in);
  char *dst = static_cast<char *>(out);
  // Reserve first: the buffers handed to MPI must not move.
  size_t sends = 0, receives = 0;
  for (const Transfer &t : transfers) {
    sends += t.source == me && t.target != me;
    receives += t.target == me && t.source != me;
  }
  packed.reserve(sends);
  incoming.reserve(receives);
  for (const Transfer &t : transfers) {
    if (t.source == me && t.target == me) {
      std::vector<int64_t> dstOffsets;
      forEachRow(t.box, mineTo, [&](int64_t o, int64_t) { dstOffsets.push_back(o); });
      size_t row = 0;
      forEachRow(t.box, mineFrom, [&](int64_t o, int64_t n) {
        std::memcpy(dst + dstOffsets[row++] * size, src + o * size, static_cast<size_t>(n * size));
      });
    } else if (t.source == me) {
      std::vector<char> &buffer = packed.emplace_back(static_cast<size_t>(t.box.elements() * size));
      char *p = buffer.data();
      forEachRow(t.box, mineFrom, [&](int64_t o, int64_t n) {
        std::memcpy(p, src + o * size, static_cast<size_t>(n * size));
        p += n * size;
      });
      requests.emplace_back();
      checkMpi(ctx,
               MPI_Isend(buffer.data(), mpiCount(ctx, t.box.elements() * size), MPI_BYTE,
                         static_cast<int>(t.target), tag, ctx->world, &requests.back()),
               "MPI_Isend");
      sentBytes += static_cast<double>(buffer.size());
    } else if (t.target == me) {
      auto &[transfer, buffer] = incoming.emplace_back(
          &t, std::vector<char>(static_cast<size_t>(t.box.elements() * size)));
      requests.emplace_back();
      checkMpi(ctx,
               MPI_Irecv(buffer.data(), mpiCount(ctx, t.box.elements() * size), MPI_BYTE,
                         static_cast<int>(t.source), tag, ctx->world, &requests.back()),
               "MPI_Irecv");
    }
  }
  waitAll(ctx, static_cast<int>(requests.size()), requests.data(), "MPI_Isend/MPI_Irecv");
  for (const auto &[t, buffer] : incoming) {
    const char *p = buffer.data();
    forEachRow(t->box, mineTo, [&](int64_t o, int64_t n) {
      std::memcpy(dst + o * size, p, static_cast<size_t>(n * size));
      p += n * size;
    });
  }
  recordCollective(ctx, op, Collective::Redistribute, start, sentBytes);
}
