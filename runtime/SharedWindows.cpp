// SharedWindows: which all_to_all exchange a group takes (a shared window
// when all its members are on one node, else point to point) and the life of
// the windows: made on first use, grown when a larger exchange comes, freed
// before MPI_Finalize. The exchange itself is SharedAllToAll.cpp.
#include "runtime/SharedWindows.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

#include <sys/uio.h>
#include <unistd.h>

namespace shardrt {

namespace {

/// Collective steps below block, and a blocked MPICH rank busy-polls the
/// core that a rank still on its way needs (8 ranks on 2 cores): meeting in a
/// nonblocking barrier first (waitAll yields) keeps that spin short.
void meet(shardrt_context *ctx, MPI_Comm comm) {
  MPI_Request arrived;
  checkMpi(ctx, MPI_Ibarrier(comm, &arrived), "MPI_Ibarrier");
  waitAll(ctx, 1, &arrived, "MPI_Ibarrier");
}

constexpr int64_t kPage = 4096;

} // namespace

SharedWindows::SharedWindows(shardrt_context *ctx) : ctx_(ctx) {
  // Open MPI's and MPICH's launchers say how many ranks share this node.
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
    if (const char *count = std::getenv(name))
      ranksOnNode_ = std::max<int64_t>(ranksOnNode_, std::atoll(count));
  cores_ = std::max<long>(1, sysconf(_SC_NPROCESSORS_ONLN));
  if (const char *forced = std::getenv("SHARDRT_A2A"); forced && *forced) {
    if (std::strcmp(forced, "messages") == 0)
      mode_ = AllToAllPath::Messages;
    else if (std::strcmp(forced, "packed") == 0)
      mode_ = AllToAllPath::Packed;
    else if (std::strcmp(forced, "direct") == 0)
      mode_ = AllToAllPath::Direct;
    else
      fail(ctx, std::string("SHARDRT_A2A=") + forced +
                    " - expected messages, packed or direct (how all_to_all moves strided blocks)");
  }
  if (const char *forced = std::getenv("SHARDRT_COLLECTIVES"); forced && *forced) {
    if (std::strcmp(forced, "messages") == 0)
      collectiveMode_ = CollectivePath::Messages;
    else if (std::strcmp(forced, "direct") == 0)
      collectiveMode_ = CollectivePath::Direct;
    else
      fail(ctx, std::string("SHARDRT_COLLECTIVES=") + forced +
                    " - expected messages or direct (how all_reduce, reduce_scatter and "
                    "all_gather travel)");
  }
}

SharedWindows::~SharedWindows() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    return;
  for (auto &window : windows_)
    free(*window);
}

SharedWindow *SharedWindows::get(MPI_Comm comm, int64_t members) {
  if (mode_ == AllToAllPath::Messages)
    return nullptr;
  auto found = byComm_.find(comm);
  if (found == byComm_.end()) {
    SharedWindow *made = nullptr;
    if (onOneNode(comm, members)) {
      windows_.push_back(std::make_unique<SharedWindow>(comm, members));
      made = windows_.back().get();
    } else if (mode_ != AllToAllPath::Auto) {
      cannotShare(comm, "its members are on more than one node");
    }
    found = byComm_.emplace(comm, made).first;
  }
  SharedWindow *window = found->second;
  if (window && window->win_ == MPI_WIN_NULL && !allocate(*window, 0))
    window = found->second = nullptr;
  if (!window && mode_ != AllToAllPath::Auto)
    cannotShare(comm, "MPI_Win_allocate_shared failed");
  if (window && mode_ == AllToAllPath::Direct && !window->direct_)
    cannotShare(comm, "the kernel refused to copy between its processes (process_vm_readv)");
  return window;
}

void SharedWindow::finishDirect(int64_t me, int64_t epoch) {
  SegmentHeader &mine = header(me);
  directExchanges = epoch;
  waitUntil(
      [&] { return mine.accessed.load(std::memory_order_acquire) >= epoch * (members_ - 1); });
  finishedExchanges += 1;
  mine.finished.store(finishedExchanges, std::memory_order_release);
}

SharedWindow *SharedWindows::forDirect(MPI_Comm comm, int64_t members) {
  // SHARDRT_A2A, which forces all_to_all's way for tests, leaves the other
  // collectives to messages unless SHARDRT_COLLECTIVES says otherwise. While
  // an overlapped all_gather holds a window's next epoch (GatherOverlap.cpp;
  // the backend calls nothing else before its finish), messages.
  if (ctx_->gather.active || collectiveMode_ == CollectivePath::Messages ||
      (collectiveMode_ == CollectivePath::Auto && mode_ != AllToAllPath::Auto))
    return nullptr;
  SharedWindow *window = get(comm, members); // nullptr under SHARDRT_A2A=messages
  if (collectiveMode_ == CollectivePath::Direct && !(window && window->direct_))
    cannotShare(comm,
                window ? "the kernel refused to copy between its processes (process_vm_readv)"
                       : "its members do not share a window",
                "SHARDRT_COLLECTIVES");
  if (collectiveMode_ == CollectivePath::Auto && !(window && window->direct_ && !crowded(*window)))
    return nullptr;
  return window;
}

namespace {

/// Fails a collective whose kernel copy from member k moved nothing.
[[noreturn]] void readFailed(shardrt_context *ctx, const char *what, int64_t k, ssize_t moved) {
  fail(ctx, format("%s: process_vm_readv from member %lld failed: %s", what,
                   static_cast<long long>(k), moved < 0 ? std::strerror(errno) : "no bytes"));
}

} // namespace

void readFar(shardrt_context *ctx, pid_t pid, void *near, uint64_t far, int64_t bytes,
             const char *what, int64_t k) {
  for (int64_t done = 0; done < bytes;) {
    iovec local{static_cast<char *>(near) + done, static_cast<size_t>(bytes - done)};
    iovec remote{reinterpret_cast<void *>(far + static_cast<uint64_t>(done)), local.iov_len};
    ssize_t moved = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (moved <= 0)
      readFailed(ctx, what, k, moved);
    done += moved;
  }
}

void readFarRows(shardrt_context *ctx, pid_t pid, char *near, int64_t stride, int64_t rows,
                 int64_t rowBytes, uint64_t far, const char *what, int64_t k) {
  if (rows == 1 || stride == rowBytes) {
    readFar(ctx, pid, near, far, rows * rowBytes, what, k);
    return;
  }
  constexpr int64_t kRowsPerCall = 1024; // the kernel's IOV_MAX
  iovec local[kRowsPerCall];
  for (int64_t first = 0; first < rows; first += kRowsPerCall) {
    int64_t count = std::min(kRowsPerCall, rows - first), bytes = count * rowBytes;
    for (int64_t r = 0; r < count; ++r)
      local[r] = {near + (first + r) * stride, static_cast<size_t>(rowBytes)};
    uint64_t from = far + static_cast<uint64_t>(first * rowBytes);
    iovec remote{reinterpret_cast<void *>(from), static_cast<size_t>(bytes)};
    ssize_t moved = process_vm_readv(pid, local, static_cast<unsigned long>(count), &remote, 1, 0);
    if (moved <= 0)
      readFailed(ctx, what, k, moved);
    // A short transfer: the rest row by row.
    for (int64_t done = moved; done < bytes;) {
      int64_t r = done / rowBytes, at = done % rowBytes;
      readFar(ctx, pid, near + (first + r) * stride + at, from + static_cast<uint64_t>(done),
              rowBytes - at, what, k);
      done += rowBytes - at;
    }
  }
}

bool SharedWindows::reserve(SharedWindow &window, int64_t bytes) {
  if (window.capacity_ >= bytes)
    return true;
  free(window);
  if (allocate(window, bytes))
    return true;
  if (mode_ != AllToAllPath::Auto)
    cannotShare(window.comm_, "MPI_Win_allocate_shared failed");
  byComm_[window.comm_] = nullptr; // point to point from now on
  return false;
}

bool SharedWindows::crowded(const SharedWindow &window) const {
  return std::max(ranksOnNode_, window.members_) > cores_;
}

void SharedWindows::releaseAfterUse(SharedWindow &window) {
  // A window of headers only costs a page per member: kept.
  if (ctx_->program && ctx_->program->release_scratch && window.capacity_ > 0)
    free(window);
}

bool SharedWindows::onOneNode(MPI_Comm comm, int64_t members) {
  meet(ctx_, comm);
  MPI_Comm node = MPI_COMM_NULL;
  checkMpi(ctx_, MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
           "MPI_Comm_split_type");
  int size = 0;
  MPI_Comm_size(node, &size);
  MPI_Comm_free(&node);
  return size == members;
}

namespace {

constexpr uintptr_t kAlignment = 64; // SegmentHeader's

/// `p` rounded up to kAlignment.
char *aligned(char *p) {
  uintptr_t address = reinterpret_cast<uintptr_t>(p);
  return p + ((kAlignment - address % kAlignment) % kAlignment);
}

} // namespace

bool SharedWindows::allocate(SharedWindow &window, int64_t bytes) {
  int64_t capacity = (bytes + kPage - 1) / kPage * kPage;
  // Each member's segment in pages of its own (first touched by its owner).
  MPI_Info info;
  checkMpi(ctx_, MPI_Info_create(&info), "MPI_Info_create");
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  meet(ctx_, window.comm_);
  char *mine = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  // Open MPI's segments are aligned to 8 bytes only: each is asked for 64
  // bytes more and starts at its first 64-byte boundary (the same offset in
  // every process: the shared mapping is page aligned in each).
  int made = MPI_Win_allocate_shared(
                 static_cast<MPI_Aint>(kAlignment + SharedWindow::kDataOffset + capacity), 1, info,
                 window.comm_, &mine, &win) == MPI_SUCCESS;
  MPI_Info_free(&info);
  int everywhere = 0;
  MPI_Request request;
  checkMpi(ctx_, MPI_Iallreduce(&made, &everywhere, 1, MPI_INT, MPI_MIN, window.comm_, &request),
           "MPI_Iallreduce");
  waitAll(ctx_, 1, &request, "MPI_Iallreduce");
  if (!everywhere)
    // A member without the window cannot take part in freeing it (a
    // collective call), so a member that made one keeps it unfreed.
    return false;
  // A passive epoch on every member for the window's life: MPI_Win_sync
  // below orders this member's header stores before the others' loads (the
  // exchanges order theirs with C++ acquire/release on the counts).
  checkMpi(ctx_, MPI_Win_lock_all(MPI_MODE_NOCHECK, win), "MPI_Win_lock_all");
  window.win_ = win;
  window.capacity_ = capacity;
  window.segments_.assign(static_cast<size_t>(window.members_), nullptr);
  for (int64_t k = 0; k < window.members_; ++k) {
    MPI_Aint size = 0;
    int unit = 0;
    void *base = nullptr;
    checkMpi(ctx_, MPI_Win_shared_query(win, static_cast<int>(k), &size, &unit, &base),
             "MPI_Win_shared_query");
    window.segments_[static_cast<size_t>(k)] = aligned(static_cast<char *>(base));
  }
  mine = aligned(mine);
  auto *header = new (mine) SegmentHeader;
  header->pid = getpid();
  header->self = reinterpret_cast<uint64_t>(mine);
  for (auto *count : {&header->posted, &header->packed, &header->finished, &header->accessed})
    count->store(0);
  header->reduced.store(0);
  window.packedChunks = 0;
  window.finishedExchanges = 0;
  window.directExchanges = 0;
  checkMpi(ctx_, MPI_Win_sync(win), "MPI_Win_sync");
  meet(ctx_, window.comm_); // every header is set before any member reads one
  checkMpi(ctx_, MPI_Win_sync(win), "MPI_Win_sync");
  window.direct_ = kernelCopiesWork(window);
  return true;
}

bool SharedWindows::kernelCopiesWork(SharedWindow &window) {
  int works = 1, me = 0;
  MPI_Comm_rank(window.comm_, &me);
  for (int64_t k = 0; k < window.members_ && works; ++k) {
    if (k == me)
      continue;
    const SegmentHeader &peer = window.header(k);
    int64_t pid = 0;
    iovec local{&pid, sizeof pid},
        remote{reinterpret_cast<void *>(peer.self + offsetof(SegmentHeader, pid)), sizeof pid};
    works = process_vm_readv(static_cast<pid_t>(peer.pid), &local, 1, &remote, 1, 0) ==
                static_cast<ssize_t>(sizeof pid) &&
            pid == peer.pid;
  }
  int everywhere = 0;
  MPI_Request request;
  checkMpi(ctx_, MPI_Iallreduce(&works, &everywhere, 1, MPI_INT, MPI_MIN, window.comm_, &request),
           "MPI_Iallreduce");
  waitAll(ctx_, 1, &request, "MPI_Iallreduce");
  return everywhere != 0;
}

void SharedWindows::free(SharedWindow &window) {
  if (window.win_ == MPI_WIN_NULL)
    return;
  // A member arrives here after its last exchange, so once all have met no
  // one reads a segment any more.
  meet(ctx_, window.comm_);
  checkMpi(ctx_, MPI_Win_unlock_all(window.win_), "MPI_Win_unlock_all");
  checkMpi(ctx_, MPI_Win_free(&window.win_), "MPI_Win_free");
  window.capacity_ = 0;
  window.segments_.clear();
}

void SharedWindows::cannotShare(MPI_Comm comm, const char *why, const char *forcedBy) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  fail(ctx_, format("%s=%s, but a group of %d members cannot exchange through a shared "
                    "window: %s",
                    forcedBy, std::getenv(forcedBy), size, why));
}

} // namespace shardrt
