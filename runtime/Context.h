// The runtime's state (shardrt_context) and the helpers its files share:
// error reporting, MPI return-code checks, element sizes and the per-rank
// view of the program's meshes. Internal: generated code sees only shardrt.h.
#pragma once

#include "runtime/shardrt.h"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace shardrt {

/// The command line of an executable (--help lists it).
struct Options {
  std::vector<std::string> inputFiles; // per input; "" = not given
  bool randomInputs = false;           // --random-inputs SEED: inputs not given
  uint64_t randomSeed = 0;             // get interp::randomTensor's values
  std::string outputDir;               // "" = print a summary
  bool profile = false;
  std::string tracePath; // --trace FILE.json; "" = no timeline
  int64_t repeat = 1;
};

/// The collective kinds, for the profile's per-kind table.
enum class Collective {
  AllGather,
  AllReduce,
  ReduceScatter,
  AllToAll,
  AllSlice,
  Permute,
  Redistribute,
  Count
};
const char *collectiveName(Collective kind);

/// Per-op (and per collective kind) totals on this rank.
struct OpStats {
  int64_t calls = 0;
  double seconds = 0;
  std::vector<double> callSeconds; // each call's time, for the median
  double bytes = 0;                // bytes moved per device (the DESIGN.md cost model)
  double startTime = -1;           // of the op now running (shardrt_op_begin)
};

/// One span of the --trace timeline on this rank, in MPI_Wtime seconds.
/// kind: a Collective, or kTraceOp (op `op`), or kTraceRun / kTraceInputs /
/// kTraceOutputs (the phases of shardrt_main).
struct TraceEvent {
  int64_t op;
  int64_t kind;
  double start, end;
  double bytes;
};
constexpr int64_t kTraceOp = -1, kTraceRun = -2, kTraceInputs = -3, kTraceOutputs = -4;

class Communicators;
class SharedWindows;
class SharedWindow;

/// The all_gather a contraction is consuming block by block
/// (shardrt_gather_start ... _finish, GatherOverlap.cpp).
struct GatherInFlight {
  bool active = false;
  int64_t op = -1;
  int64_t members = 1, me = 0;
  double start = 0, waited = 0, bytes = 0;
  /// Messages: receives[k] is member k's block (MPI_REQUEST_NULL for this
  /// member); then the sends.
  std::vector<MPI_Request> receives, sends;
  /// Direct reads (the group's node-shared window, kernel copies): the
  /// window, this exchange's epoch there, where the blocks land and their
  /// bytes, and per member whether its block has been read.
  SharedWindow *window = nullptr;
  int64_t epoch = 0, blockBytes = 0;
  char *result = nullptr;
  std::vector<bool> read;
};

} // namespace shardrt

struct shardrt_context {
  const shardrt_program *program = nullptr;
  std::string programName; // argv[0], for messages
  int rank = 0;
  int ranks = 1;
  bool startedMpi = false;
  shardrt::Options options;
  /// positions[m]: this rank's position on mesh m (-1: not on it);
  /// coords[m]: its row-major coordinates there.
  std::vector<int64_t> positions;
  std::vector<std::vector<int64_t>> coords;
  std::unique_ptr<shardrt::Communicators> comms;
  /// The all_to_all's node-shared windows, freed before the communicators.
  std::unique_ptr<shardrt::SharedWindows> windows;
  /// A private duplicate of MPI_COMM_WORLD for point-to-point permutes and
  /// the runtime's own agreement steps.
  MPI_Comm world = MPI_COMM_NULL;
  /// NaN-propagating max and min for f32/f64 (MPI_MAX leaves NaN to chance).
  MPI_Op floatMax = MPI_OP_NULL, floatMin = MPI_OP_NULL;
  std::vector<shardrt::OpStats> opStats; // per op id
  std::array<shardrt::OpStats, static_cast<size_t>(shardrt::Collective::Count)> collectiveStats;
  std::vector<double> runSeconds;         // per --repeat run
  std::vector<int64_t> nodeOfRank;        // --profile: nodeOfEveryRank
  std::vector<shardrt::TraceEvent> trace; // --trace: every span, in order of ending
  /// Grow-only buffers for packing around collectives (scratchBuffer()).
  char *scratch[2] = {nullptr, nullptr};
  int64_t scratchBytes[2] = {0, 0};
  shardrt::GatherInFlight gather;
};

namespace shardrt {

// Exit statuses (LANGUAGE.md section 8).
constexpr int kExitBadData = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInternal = 3;

/// Prints "PROG: rank R: error: MESSAGE" and ends every rank with `status`.
[[noreturn]] void fail(shardrt_context *ctx, const std::string &message, int status = kExitBadData);
/// fail() for a broken program description or a broken call from generated
/// code: a compiler bug, not the user's.
[[noreturn]] void internalError(shardrt_context *ctx, const std::string &message);
/// Checks an MPI return code (the runtime sets MPI_ERRORS_RETURN).
void checkMpi(shardrt_context *ctx, int code, const char *call);
/// printf into a std::string.
std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/// Whether a file can be created at `probe` (created, then removed): "" when
/// it can, else "FLAG SHOWN - cannot write there: REASON".
std::string probeWritable(const std::string &probe, const char *flag, const std::string &shown);

/// Bytes per element of a dtype (i1: 1); 0 for an unknown one.
int64_t dtypeSize(int64_t dtype);
/// dtypeSize, with internalError on an unknown dtype.
int64_t elementSize(shardrt_context *ctx, int64_t dtype);
/// "f32", "i1", ...; the MPI datatype used to move its elements.
const char *dtypeName(int64_t dtype);
MPI_Datatype mpiType(int64_t dtype);

/// Product of shape[begin, end).
int64_t product(const int64_t *shape, int64_t begin, int64_t end);

/// Mesh facts: device count, device id at a position.
int64_t meshDevices(const shardrt_mesh &mesh);
int64_t meshDeviceAt(const shardrt_mesh &mesh, int64_t position);
/// The digit of mesh coordinate `coord` that `axis` covers, and the stride
/// of that digit within the axis (n / (pre_size * size)).
int64_t axisDigit(const shardrt_mesh &mesh, const shardrt_axis_ref &axis, int64_t coord);
int64_t axisStride(const shardrt_mesh &mesh, const shardrt_axis_ref &axis);

/// What is wrong with `count` axis refs of mesh `mesh` used together (one
/// dim's sharding, or one collective's axes): index out of range, a piece
/// that doesn't divide its axis, two pieces that overlap; "" when nothing.
std::string axisRefsProblem(const shardrt_program &program, int64_t mesh,
                            const shardrt_axis_ref *axes, int64_t count);

/// Checks the program description (meshes, tensors, shardings) and the
/// device mapping; internalError on anything a correct compiler never emits.
void validateProgram(shardrt_context *ctx);

/// Waits for `count` requests, yielding the core between polls: with more
/// ranks than cores MPICH's blocking waits busy-poll and starve the rank
/// that would make progress (DESIGN.md: 30-60 ms -> 55-90 us per collective).
void waitAll(shardrt_context *ctx, int count, MPI_Request *requests, const char *call);

/// The runtime's agreement step: every rank says whether it failed (with a
/// message); if any did, the lowest failing rank prints its message and all
/// ranks return true (the caller cleans up and calls exitAll). Collective.
bool anyRankFailed(shardrt_context *ctx, const std::string &myError);
/// Frees the runtime's MPI objects (windows, communicators, ops) and scratch
/// buffers; finalizes MPI when shardrt_init started it.
void releaseContext(shardrt_context *ctx);
/// Releases the context and exits every rank with `status` (all ranks call
/// it; MPI is finalized even when the caller started it).
[[noreturn]] void exitAll(shardrt_context *ctx, int status);

/// Scratch buffer `slot` (0 or 1) of at least `bytes` bytes, reused
/// between calls.
char *scratchBuffer(shardrt_context *ctx, int slot, int64_t bytes);
/// Frees both scratch buffers (the next scratchBuffer() allocates again).
void releaseScratch(shardrt_context *ctx);
/// Adds one collective call, begun at `start` (now()) and ending now, to the
/// profile (op -1: to its kind only) and to the --trace timeline.
void recordCollective(shardrt_context *ctx, int64_t op, Collective kind, double start,
                      double bytes);
/// recordCollective of a collective that overlapped compute: its span on the
/// timeline is [start, end], but the profile counts `seconds` (its waits).
void recordOverlappedCollective(shardrt_context *ctx, int64_t op, Collective kind, double start,
                                double end, double seconds, double bytes);
/// Whether ops are timed: --profile or --trace.
inline bool timingOps(const shardrt_context *ctx) {
  return ctx->options.profile || !ctx->options.tracePath.empty();
}
/// Adds a span to the --trace timeline (nothing without --trace).
void traceSpan(shardrt_context *ctx, int64_t kind, int64_t op, double start, double end,
               double bytes = 0);
/// --trace: rank 0 checks that FILE can be written (exit 1 on every rank if not).
void checkTracePath(shardrt_context *ctx);
/// --trace: gathers every rank's spans to rank 0, aligned to rank 0's clock,
/// and writes the Chrome trace-event JSON file (complete files only). Collective.
void writeTrace(shardrt_context *ctx);
/// internalError unless 0 <= dim < ndims (a collective's dim operand).
void checkDim(shardrt_context *ctx, const char *what, int64_t ndims, int64_t dim);
/// `count` as an MPI count (an int); fails on larger messages.
int mpiCount(shardrt_context *ctx, int64_t count);

/// A run of elements cut into chunks of `chunkBytes` (the last one shorter),
/// the unit in which the pipelined collectives send and process data: chunk
/// c of a run of `length` elements is [start(c), start(c) + length(length, c)).
struct Chunks {
  Chunks(int64_t chunkBytes, int64_t elementBytes)
      : size(std::max<int64_t>(1, chunkBytes / elementBytes)) {}
  int64_t count(int64_t length) const { return (length + size - 1) / size; }
  int64_t start(int64_t c) const { return c * size; }
  int64_t length(int64_t length, int64_t c) const { return std::min(size, length - c * size); }
  int64_t size; ///< elements per chunk
};

/// The node of every rank of `comm` (its lowest rank sharing memory with
/// it: MPI_COMM_TYPE_SHARED). Collective over `comm`.
std::vector<int64_t> nodeOfEveryRank(shardrt_context *ctx, MPI_Comm comm);
/// "nodes: 8 ranks on 2 nodes (...)" and, per named mesh, its axes that cross
/// node boundaries and those within a node (support/NodeMap.h).
std::string nodesText(const shardrt_program &program, const std::vector<int64_t> &nodeOfRank);

/// Makes a signal that ends this rank print "PROG: rank R: error: killed by
/// signal ..." first, unless the launcher (the parent) sent it (Signals.cpp).
void installSignalHandlers(const shardrt_context *ctx);

/// Seconds since an arbitrary start (MPI_Wtime).
inline double now() { return MPI_Wtime(); }

/// The most bytes this process held at once in shardrt_alloc buffers (the
/// kernels' arena, inputs, outputs, collective scratch), for --profile.
int64_t peakAllocatedBytes();

/// The bytes of freed buffers kept for reuse by shardrt_alloc (Memory.cpp).
size_t cachedBufferBytes();

} // namespace shardrt
