// --trace FILE.json: the run as a timeline in the Chrome trace-event format
// (Perfetto, chrome://tracing). Each rank keeps the spans that --profile's
// brackets measure (ops, collectives, the phases of shardrt_main); at the end
// rank 0 measures every rank's clock offset, gathers the spans and writes one
// file: a process track per rank, a complete ("X") event per span.
#include "runtime/Layout.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace shardrt {
namespace {

constexpr int kClockTag = 0x7ace;  // the offset exchange's messages on ctx->world
constexpr int kClockRounds = 8;    // round trips per rank; the fastest one counts
constexpr size_t kEventFields = 5; // op, kind, start ns, end ns, bytes

/// This rank's clock minus rank 0's (Cristian's algorithm: the round trip to
/// rank 0 that took least time, assuming its two halves equal), and half that
/// round trip: the most the estimate can be off. Collective over ctx->world.
std::pair<double, double> clockOffset(shardrt_context *ctx) {
  double best = 0, bestRoundTrip = INFINITY;
  for (int peer = 1; peer < ctx->ranks; ++peer) {
    if (ctx->rank != 0 && ctx->rank != peer)
      continue;
    for (int round = 0; round < kClockRounds; ++round) {
      double ping = 0, rootTime = 0;
      MPI_Request request;
      if (ctx->rank == 0) {
        checkMpi(ctx, MPI_Irecv(&ping, 1, MPI_DOUBLE, peer, kClockTag, ctx->world, &request),
                 "MPI_Irecv");
        waitAll(ctx, 1, &request, "MPI_Irecv");
        rootTime = now();
        checkMpi(ctx, MPI_Isend(&rootTime, 1, MPI_DOUBLE, peer, kClockTag, ctx->world, &request),
                 "MPI_Isend");
        waitAll(ctx, 1, &request, "MPI_Isend");
        continue;
      }
      MPI_Request requests[2];
      double sent = now();
      checkMpi(ctx, MPI_Irecv(&rootTime, 1, MPI_DOUBLE, 0, kClockTag, ctx->world, &requests[0]),
               "MPI_Irecv");
      checkMpi(ctx, MPI_Isend(&sent, 1, MPI_DOUBLE, 0, kClockTag, ctx->world, &requests[1]),
               "MPI_Isend");
      waitAll(ctx, 2, requests, "MPI_Isend");
      double received = now();
      if (received - sent < bestRoundTrip) {
        bestRoundTrip = received - sent;
        best = (sent + received) / 2 - rootTime;
      }
    }
  }
  return {best, ctx->rank == 0 ? 0 : bestRoundTrip / 2};
}

std::string jsonString(const std::string &text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\')
      out += '\\', out += static_cast<char>(c);
    else if (c < 0x20)
      out += format("\\u%04x", c);
    else
      out += static_cast<char>(c);
  }
  return out + "\"";
}

/// Splits an op label "%h = matmul (mlp.shd:7:5)" into its name and source.
void splitLabel(const std::string &label, std::string &name, std::string &source) {
  size_t open = label.rfind(" (");
  if (open != std::string::npos && label.back() == ')') {
    name = label.substr(0, open);
    source = label.substr(open + 2, label.size() - open - 3);
  } else {
    name = label;
    source.clear();
  }
}

/// "rank 3 (@mesh x=1, y=1)": the rank and its place on the first named mesh.
std::string processName(const shardrt_program &program, int rank) {
  std::string name = format("rank %d", rank);
  for (int64_t m = 0; m < program.num_meshes; ++m) {
    const shardrt_mesh &mesh = program.meshes[m];
    int64_t position = positionOfRank(mesh, rank);
    if (!*mesh.name || position < 0)
      continue;
    std::vector<int64_t> coords = coordinatesOf(mesh, position);
    name += format(" (@%s", mesh.name);
    for (int64_t a = 0; a < mesh.num_axes; ++a)
      name += format("%s%s=%lld", a ? ", " : " ", mesh.axis_names[a],
                     static_cast<long long>(coords[static_cast<size_t>(a)]));
    return name + ")";
  }
  return name;
}

/// One complete event; times in integer nanoseconds since the trace's start,
/// written as microseconds, so that nesting survives the formatting exactly.
std::string eventJson(const shardrt_program &program, int rank, const int64_t *e, int64_t origin) {
  int64_t op = e[0], kind = e[1], start = e[2] - origin, duration = e[3] - e[2];
  std::string name, source, category, args;
  if (op >= 0 && op < program.num_ops)
    splitLabel(program.op_names[op], name, source);
  if (kind >= 0) {
    category = "collective";
    const char *collective = collectiveName(static_cast<Collective>(kind));
    if (name.empty())
      name = collective;
    args = format("\"collective\":\"%s\",\"bytes\":%lld", collective, static_cast<long long>(e[4]));
  } else if (kind == kTraceOp) {
    category = "op";
  } else {
    category = "phase";
    name = kind == kTraceRun ? "run" : kind == kTraceInputs ? "read inputs" : "write outputs";
  }
  if (!source.empty())
    args += std::string(args.empty() ? "" : ",") + "\"source\":" + jsonString(source);
  return format("{\"name\":%s,\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":0,"
                "\"ts\":%lld.%03lld,\"dur\":%lld.%03lld,\"args\":{%s}}",
                jsonString(name).c_str(), category.c_str(), rank,
                static_cast<long long>(start / 1000), static_cast<long long>(start % 1000),
                static_cast<long long>(duration / 1000), static_cast<long long>(duration % 1000),
                args.c_str());
}

/// The whole file, from every rank's events (kEventFields each).
std::string traceJson(shardrt_context *ctx, const std::vector<int64_t> &events,
                      const std::vector<int> &counts, double clockError) {
  const shardrt_program &program = *ctx->program;
  int64_t origin = INT64_MAX;
  for (size_t i = 0; i < events.size(); i += kEventFields)
    origin = std::min(origin, events[i + 2]);
  std::string text = "{\"displayTimeUnit\":\"ms\",\"otherData\":{";
  text += format("\"program\":%s,\"ranks\":%d,\"mpi\":\"%s\",\"clock_error_us\":%.3f},",
                 jsonString(program.name ? program.name : "?").c_str(), ctx->ranks,
                 SHARDRT_MPI_NAME, clockError * 1e6);
  text += "\"traceEvents\":[\n";
  for (int r = 0; r < ctx->ranks; ++r) {
    text += format("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                   "\"args\":{\"name\":%s}},\n",
                   r, jsonString(processName(program, r)).c_str());
    text += format("{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                   "\"args\":{\"sort_index\":%d}},\n",
                   r, r);
  }
  size_t next = 0;
  for (int r = 0; r < ctx->ranks; ++r)
    for (int i = 0; i < counts[static_cast<size_t>(r)]; i += static_cast<int>(kEventFields)) {
      text += eventJson(program, r, &events[next], origin);
      next += kEventFields;
      text += next < events.size() ? ",\n" : "\n";
    }
  return text + "]}\n";
}

/// Writes `text` to PATH.tmp and renames it to PATH; "" or the error.
std::string writeWhole(const std::string &path, const std::string &text) {
  std::string temporary = format("%s.tmp-%d", path.c_str(), static_cast<int>(getpid()));
  FILE *file = std::fopen(temporary.c_str(), "w");
  if (!file)
    return format("--trace %s - cannot write: %s", path.c_str(), std::strerror(errno));
  bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  int savedErrno = errno;
  written = (std::fclose(file) == 0) && written;
  if (written && std::rename(temporary.c_str(), path.c_str()) == 0)
    return "";
  savedErrno = errno ? errno : savedErrno;
  std::remove(temporary.c_str());
  return format("--trace %s - cannot write: %s", path.c_str(), std::strerror(savedErrno));
}

} // namespace

void traceSpan(shardrt_context *ctx, int64_t kind, int64_t op, double start, double end,
               double bytes) {
  if (!ctx->options.tracePath.empty())
    ctx->trace.push_back({op, kind, start, end, bytes});
}

void checkTracePath(shardrt_context *ctx) {
  const std::string &path = ctx->options.tracePath;
  std::string error;
  struct stat info;
  if (ctx->rank == 0 && stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
    error = format("--trace %s - is a directory", path.c_str());
  // Probe beside the file (the final one is created only at the end).
  if (ctx->rank == 0 && error.empty())
    error = probeWritable(format("%s.tmp-%d", path.c_str(), static_cast<int>(getpid())), "--trace",
                          path);
  if (anyRankFailed(ctx, error))
    exitAll(ctx, kExitBadData);
}

void writeTrace(shardrt_context *ctx) {
  auto [offset, clockError] = clockOffset(ctx);
  std::vector<int64_t> mine;
  for (const TraceEvent &e : ctx->trace)
    mine.insert(mine.end(), {e.op, e.kind, std::llround((e.start - offset) * 1e9),
                             std::llround((e.end - offset) * 1e9), std::llround(e.bytes)});
  int count = mpiCount(ctx, static_cast<int64_t>(mine.size()));
  std::vector<int> counts(static_cast<size_t>(ctx->ranks)), displacements(counts.size());
  MPI_Request request;
  checkMpi(ctx, MPI_Igather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, ctx->world, &request),
           "MPI_Igather");
  waitAll(ctx, 1, &request, "MPI_Igather");
  double worstError = 0;
  checkMpi(ctx,
           MPI_Ireduce(&clockError, &worstError, 1, MPI_DOUBLE, MPI_MAX, 0, ctx->world, &request),
           "MPI_Ireduce");
  waitAll(ctx, 1, &request, "MPI_Ireduce");
  int64_t total = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    displacements[r] = mpiCount(ctx, total);
    total += counts[r];
  }
  std::vector<int64_t> all(ctx->rank == 0 ? static_cast<size_t>(total) : 0);
  checkMpi(ctx,
           MPI_Igatherv(mine.data(), count, MPI_INT64_T, all.data(), counts.data(),
                        displacements.data(), MPI_INT64_T, 0, ctx->world, &request),
           "MPI_Igatherv");
  waitAll(ctx, 1, &request, "MPI_Igatherv");
  std::string error;
  if (ctx->rank == 0)
    error = writeWhole(ctx->options.tracePath, traceJson(ctx, all, counts, worstError));
  if (anyRankFailed(ctx, error))
    exitAll(ctx, kExitBadData);
}

} // namespace shardrt
