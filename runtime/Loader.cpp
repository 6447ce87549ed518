// libshardrt.a: the MPI-free loader that executables link. Every function of
// shardrt.h is a trampoline through a table filled from libshardrt-mpich.so
// or libshardrt-openmpi.so, chosen at start-up by SHARDRT_MPI or the launcher.
#include "runtime/shardrt.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

// Every function of shardrt.h: X(return type, name, (parameters), (arguments));
// the entries (written out below) and the calls made after them.
#define SHARDRT_FUNCTIONS(X) SHARDRT_ENTRIES(X) SHARDRT_CALLS(X)
#define SHARDRT_ENTRIES(X)                                                                         \
  X(int, shardrt_main, (const shardrt_program *p, shardrt_kernel k, int argc, char **argv),        \
    (p, k, argc, argv))                                                                            \
  X(shardrt_context *, shardrt_init, (const shardrt_program *p, int argc, char **argv),            \
    (p, argc, argv))                                                                               \
  X(void, shardrt_free, (void *buffer), (buffer))
#define SHARDRT_CALLS(X)                                                                           \
  X(void, shardrt_finalize, (shardrt_context * c), (c))                                            \
  X(void *, shardrt_read_input, (shardrt_context * c, int64_t i), (c, i))                          \
  X(void *, shardrt_alloc_output, (shardrt_context * c, int64_t i), (c, i))                        \
  X(void, shardrt_write_outputs, (shardrt_context * c, const void *const *o), (c, o))              \
  X(void, shardrt_print_profile, (shardrt_context * c), (c))                                       \
  X(int64_t, shardrt_repeat_count, (const shardrt_context *c), (c))                                \
  X(int64_t, shardrt_rank, (const shardrt_context *c), (c))                                        \
  X(int64_t, shardrt_mesh_position, (const shardrt_context *c, int64_t m), (c, m))                 \
  X(int64_t, shardrt_local_elements, (const shardrt_context *c, const shardrt_tensor *t), (c, t))  \
  X(int64_t, shardrt_group_size, (shardrt_context * c, const shardrt_group *g), (c, g))            \
  X(int64_t, shardrt_group_index, (shardrt_context * c, const shardrt_group *g), (c, g))           \
  X(void *, shardrt_alloc, (shardrt_context * c, int64_t bytes), (c, bytes))                       \
  X(void, shardrt_fail, (shardrt_context * c, const char *message), (c, message))                  \
  X(void, shardrt_op_begin, (shardrt_context * c, int64_t op), (c, op))                            \
  X(void, shardrt_op_end, (shardrt_context * c, int64_t op), (c, op))                              \
  X(void, shardrt_all_gather,                                                                      \
    (shardrt_context * c, int64_t op, const shardrt_group *g, int64_t dtype, int64_t ndims,        \
     const int64_t *shape, int64_t dim, const void *in, void *out),                                \
    (c, op, g, dtype, ndims, shape, dim, in, out))                                                 \
  X(void, shardrt_all_reduce,                                                                      \
    (shardrt_context * c, int64_t op, const shardrt_group *g, int64_t dtype, int64_t count,        \
     int64_t kind, const void *in, void *out),                                                     \
    (c, op, g, dtype, count, kind, in, out))                                                       \
  X(void, shardrt_reduce_scatter,                                                                  \
    (shardrt_context * c, int64_t op, const shardrt_group *g, int64_t dtype, int64_t ndims,        \
     const int64_t *shape, int64_t dim, const void *in, void *out),                                \
    (c, op, g, dtype, ndims, shape, dim, in, out))                                                 \
  X(void, shardrt_all_to_all,                                                                      \
    (shardrt_context * c, int64_t op, const shardrt_group *g, int64_t dtype, int64_t ndims,        \
     const int64_t *shape, int64_t split, int64_t concat, const void *in, void *out),              \
    (c, op, g, dtype, ndims, shape, split, concat, in, out))                                       \
  X(void, shardrt_all_slice,                                                                       \
    (shardrt_context * c, int64_t op, const shardrt_group *g, int64_t dtype, int64_t ndims,        \
     const int64_t *shape, int64_t dim, const void *in, void *out),                                \
    (c, op, g, dtype, ndims, shape, dim, in, out))                                                 \
  X(void, shardrt_collective_permute,                                                              \
    (shardrt_context * c, int64_t op, int64_t mesh, int64_t num_pairs, const int64_t *pairs,       \
     int64_t dtype, int64_t count, const void *in, void *out),                                     \
    (c, op, mesh, num_pairs, pairs, dtype, count, in, out))                                        \
  X(int64_t, shardrt_gather_start,                                                                 \
    (shardrt_context * c, int64_t op, const shardrt_group *g, int64_t dtype, int64_t count,        \
     const void *in, void *out),                                                                   \
    (c, op, g, dtype, count, in, out))                                                             \
  X(void, shardrt_gather_progress, (shardrt_context * c), (c))                                     \
  X(void, shardrt_gather_wait, (shardrt_context * c, int64_t member), (c, member))                 \
  X(void, shardrt_gather_finish, (shardrt_context * c), (c))                                       \
  X(void, shardrt_redistribute,                                                                    \
    (shardrt_context * c, int64_t op, const shardrt_tensor *from, const shardrt_tensor *to,        \
     const void *in, void *out),                                                                   \
    (c, op, from, to, in, out))                                                                    \
  X(int32_t, shardrt_axis_index,                                                                   \
    (shardrt_context * c, int64_t mesh, const shardrt_axis_ref *axis), (c, mesh, axis))

namespace {

struct Table {
#define SHARDRT_FIELD(R, name, params, args) R(*name) params = nullptr;
  SHARDRT_FUNCTIONS(SHARDRT_FIELD)
#undef SHARDRT_FIELD
};

Table table;
bool loaded = false;

[[noreturn]] void loadError(const char *program, const std::string &message) {
  std::fprintf(stderr, "%s: error: %s\n", program, message.c_str());
  std::fflush(nullptr);
  // Not exit(): the executable's destructors would call into the runtime.
  std::_Exit(1);
}

/// Which MPI this process was started under: "mpich" or "openmpi", and why.
const char *chooseMpi(const char *program, std::string &reason) {
  const char *forced = std::getenv("SHARDRT_MPI");
  if (forced && *forced) {
    reason = std::string("SHARDRT_MPI=") + forced;
    if (std::strcmp(forced, "mpich") == 0 || std::strcmp(forced, "openmpi") == 0)
      return forced;
    loadError(program, std::string("SHARDRT_MPI - expected mpich or openmpi: ") + forced);
  }
  // MPICH's hydra sets PMI_RANK/PMI_SIZE in every rank, Open MPI's mpirun
  // OMPI_COMM_WORLD_*; with neither, a singleton run (MPICH, the default).
  bool hydra = std::getenv("PMI_RANK") || std::getenv("PMI_SIZE");
  bool openMpi = std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("OMPI_COMM_WORLD_RANK");
  if (openMpi && !hydra) {
    reason = "SHARDRT_MPI unset, OMPI_COMM_WORLD_SIZE set by Open MPI's launcher";
    return "openmpi";
  }
  reason = hydra ? "SHARDRT_MPI unset, PMI_RANK set by MPICH's launcher"
                 : "SHARDRT_MPI unset, no launcher: a single process";
  return "mpich";
}

/// Loads the implementation (found through the executable's RUNPATH).
void load(const char *program) {
  if (loaded)
    return;
  std::string reason;
  std::string file = std::string("libshardrt-") + chooseMpi(program, reason) + ".so";
  // RTLD_GLOBAL: Open MPI's plugins resolve MPI's own symbols globally.
  void *library = dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!library) {
    const char *why = dlerror();
    loadError(program, "cannot load the MPI runtime " + file + " (" + reason +
                           "; SHARDRT_MPI=mpich|openmpi chooses): " + (why ? why : "unknown"));
  }
#define SHARDRT_RESOLVE(R, name, params, args)                                                     \
  table.name = reinterpret_cast<R(*) params>(dlsym(library, #name));                               \
  if (!table.name)                                                                                 \
    loadError(program, file + " - no symbol: " #name);
  SHARDRT_FUNCTIONS(SHARDRT_RESOLVE)
#undef SHARDRT_RESOLVE
  loaded = true;
}

const char *programName(int argc, char **argv) {
  return argc > 0 && argv && argv[0] ? argv[0] : "program";
}

} // namespace

extern "C" {

int shardrt_main(const shardrt_program *p, shardrt_kernel k, int argc, char **argv) {
  load(programName(argc, argv));
  return table.shardrt_main(p, k, argc, argv);
}

shardrt_context *shardrt_init(const shardrt_program *p, int argc, char **argv) {
  load(programName(argc, argv));
  return table.shardrt_init(p, argc, argv);
}

// Freeing nothing needs no runtime (the generated code's destructors do it).
void shardrt_free(void *buffer) {
  if (!buffer)
    return;
  load("program");
  table.shardrt_free(buffer);
}

// The rest: the table is loaded by shardrt_main or shardrt_init (loading
// here too keeps a call made out of order from jumping through null).
#define SHARDRT_TRAMPOLINE(R, name, params, args)                                                  \
  R name params {                                                                                  \
    load("program");                                                                               \
    return table.name args;                                                                        \
  }
SHARDRT_CALLS(SHARDRT_TRAMPOLINE)
#undef SHARDRT_TRAMPOLINE

} // extern "C"
