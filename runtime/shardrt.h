/* libshardrt: the runtime of the SPMD executables that shardc builds.
 *
 * One MPI rank runs one device of the program's meshes and holds only its
 * shards. The generated code describes the program once (shardrt_program:
 * plain structs of arrays, emitted as constants) and hands its per-device
 * computation to shardrt_main, which does start-up (MPI, command line, rank
 * check), reads each rank's shard of every input, runs the computation
 * (--repeat K times), writes every output once, prints the profile and shuts
 * down. Inside the computation it calls the collectives below; they follow
 * ../notes/SPMD_CONTRACT.md section 2 (groups over mesh axes and sub-axes,
 * group index mixed-radix over the listed axes, first listed = major).
 *
 * Conventions:
 *   - Every field of the description structs is an int64_t or a pointer, so
 *     they have no padding and an LLVM constant of {i64/ptr, ...} matches.
 *   - Buffers are local, padded, row-major: a dim of global size D sharded
 *     n ways holds ceil(D/n) elements on every device, the tail past D zero.
 *   - i1 elements are one byte each, 0 or 1.
 *   - A device is a rank: device id d runs on MPI rank d of MPI_COMM_WORLD.
 *     Mesh position p (row-major over the mesh axes) is device device_ids[p].
 *   - Errors never return: any failure on any rank prints one message naming
 *     the rank and ends the whole job (exit status 1 for bad data or usage of
 *     the machine, 2 for a bad command line, 3 for an internal error). */
#ifndef SHARDRT_H
#define SHARDRT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- element types, reductions ------------------------------------------ */

enum {
  SHARDRT_F32 = 0,
  SHARDRT_F64 = 1,
  SHARDRT_I32 = 2,
  SHARDRT_I64 = 3,
  SHARDRT_I1 = 4 /* one byte per element, 0 or 1 */
};

enum { SHARDRT_SUM = 0, SHARDRT_MAX = 1, SHARDRT_MIN = 2 };

/* ---- the program description (constant data of the generated code) ------ */

/** A mesh axis or sub-axis: "x" is {x, 1, size(x)}; "x":(2)4 is {x, 2, 4}. */
typedef struct shardrt_axis_ref {
  int64_t axis;     /* index into the mesh's axes */
  int64_t pre_size; /* product of the sizes of the axis' more major pieces */
  int64_t size;     /* how many devices this piece spans */
} shardrt_axis_ref;

/** A mesh: a row-major reshape of its device ids. A maximal mesh has no
 *  axes and one device id; an empty mesh has no axes and device_ids NULL, and
 *  stands for every device of the program (each holds the whole value). */
typedef struct shardrt_mesh {
  const char *name; /* without '@' */
  int64_t num_axes;
  const char *const *axis_names;
  const int64_t *axis_sizes;
  /* product(axis_sizes) device ids, one per mesh position; NULL = 0, 1, ... */
  const int64_t *device_ids;
} shardrt_mesh;

/** An input (a parameter of @main) or an output (a result of @main): global
 *  type and closed sharding. dim_axes lists, dim after dim, the axes that
 *  shard each dim, major to minor; dim_num_axes[d] says how many are dim d's. */
typedef struct shardrt_tensor {
  const char *name; /* parameter name without '%'; NULL for results */
  int64_t dtype;    /* SHARDRT_F32 ... */
  int64_t ndims;
  const int64_t *shape; /* global shape, ndims entries */
  int64_t mesh;         /* index into shardrt_program.meshes */
  const int64_t *dim_num_axes;
  const shardrt_axis_ref *dim_axes;
} shardrt_tensor;

/** The devices a collective works among: every device that agrees on all
 *  coordinates of `mesh` that the listed axes do not cover. A device's index
 *  in its group is the mixed-radix number of its coordinates along the
 *  listed axes, the first listed most significant. */
typedef struct shardrt_group {
  int64_t mesh;
  int64_t num_axes;
  const shardrt_axis_ref *axes;
} shardrt_group;

/** What the generated code tells the runtime at start-up. */
typedef struct shardrt_program {
  const char *name;    /* e.g. the source file, shown by --help */
  int64_t num_devices; /* the device count: mpirun -n num_devices */
  int64_t num_meshes;
  const shardrt_mesh *meshes;
  int64_t num_inputs;
  const shardrt_tensor *inputs;
  int64_t num_outputs;
  const shardrt_tensor *outputs;
  /* The collective groups the program uses: their communicators are made
   * at start-up, outside the timed runs (a group not listed is made on its
   * first use). */
  int64_t num_groups;
  const shardrt_group *groups;
  int64_t num_ops;             /* profiling labels: op ids index op_names */
  const char *const *op_names; /* e.g. "%h = matmul (mlp.shd:7:8)" */
  /* Nonzero: every collective frees its scratch buffers when it returns, so
   * the peak is what the compiler planned (programs built under
   * --memory-budget); zero: they are kept for the next collective. */
  int64_t release_scratch;
} shardrt_program;

typedef struct shardrt_context shardrt_context;

/** The per-device computation: reads the inputs' local shards (never writes
 *  them: they are reused by --repeat) and fills the outputs' local shards
 *  (buffers of the padded local shape, zeroed before the first run). */
typedef void (*shardrt_kernel)(shardrt_context *ctx, const void *const *inputs,
                               void *const *outputs);

/* ---- the whole run ------------------------------------------------------- */

/** main() of a generated executable: init, read inputs, run `kernel`
 *  (--repeat K times), write outputs (or print a summary), print the profile,
 *  finalize. Returns 0; every failure exits inside. libshardrt.a (what
 *  executables link) first loads the implementation, libshardrt-mpich.so or
 *  libshardrt-openmpi.so, chosen by SHARDRT_MPI or the launcher (Loader.cpp). */
int shardrt_main(const shardrt_program *program, shardrt_kernel kernel, int argc, char **argv);

/* ---- the steps of shardrt_main, one by one -------------------------------- */

/** Starts MPI (unless already started), parses the command line
 *  (--input NAME=FILE.npy, --random-inputs SEED, --output-dir DIR, --profile,
 *  --trace FILE.json, --repeat K, --help),
 *  checks the rank count against program->num_devices and maps devices to
 *  ranks. Exits on --help (0), a bad command line (2), a wrong rank count (1). */
shardrt_context *shardrt_init(const shardrt_program *program, int argc, char **argv);
/** Frees the context; finalizes MPI when shardrt_init started it. */
void shardrt_finalize(shardrt_context *ctx);

/** The local shard of input `index`, freshly allocated (free with
 *  shardrt_free): read from its --input file, or, without one, the values
 *  of shardc's interpreter for --random-inputs SEED (interp::randomTensor
 *  of the parameter's type, SEED and index `index`). Collective. */
void *shardrt_read_input(shardrt_context *ctx, int64_t index);
/** A zeroed buffer for the local shard of output `index`. */
void *shardrt_alloc_output(shardrt_context *ctx, int64_t index);
/** Writes every output, once per global array, to DIR/resultN.npy (complete
 *  files only: temporary names until all ranks are done), or without
 *  --output-dir prints a summary per output on rank 0. Collective. */
void shardrt_write_outputs(shardrt_context *ctx, const void *const *outputs);
/** Writes the --trace file and prints the --profile table on rank 0 (nothing
 *  without either). Collective. */
void shardrt_print_profile(shardrt_context *ctx);
/** --repeat K (1 by default). */
int64_t shardrt_repeat_count(const shardrt_context *ctx);

/* ---- facts about this rank ------------------------------------------------ */

int64_t shardrt_rank(const shardrt_context *ctx);
/** This rank's position on `mesh` (row-major), or -1 when it holds no place
 *  on it (a maximal mesh of another device). */
int64_t shardrt_mesh_position(const shardrt_context *ctx, int64_t mesh);
/** Number of elements of the local (padded) shard of `tensor`. */
int64_t shardrt_local_elements(const shardrt_context *ctx, const shardrt_tensor *tensor);
/** The size of `group` and this rank's index in it. */
int64_t shardrt_group_size(shardrt_context *ctx, const shardrt_group *group);
int64_t shardrt_group_index(shardrt_context *ctx, const shardrt_group *group);

/* ---- memory, errors, profiling -------------------------------------------- */

/** 64-byte aligned memory; failure ends the job with a message. */
void *shardrt_alloc(shardrt_context *ctx, int64_t bytes);
void shardrt_free(void *buffer);
/** Prints "PROG: rank R: error: MESSAGE" and aborts every rank (exit 1). */
void shardrt_fail(shardrt_context *ctx, const char *message);
/** Times op `op` (an index into op_names) under --profile and --trace; cheap
 *  otherwise.
 *  Collectives time themselves under the op id they are given (-1: none). */
void shardrt_op_begin(shardrt_context *ctx, int64_t op);
void shardrt_op_end(shardrt_context *ctx, int64_t op);

/* ---- collectives (SPMD_CONTRACT.md section 2) ------------------------------
 * `op` is the op id for the profile (-1 for none); `shape` the operand's
 * local shape (ndims entries); `in` and `out` must not overlap except where
 * noted. Every member of the group must make the same call. */

/** Concatenates the group's operands along `dim` in group-index order:
 *  out has shape[dim] * n there. */
void shardrt_all_gather(shardrt_context *ctx, int64_t op, const shardrt_group *group, int64_t dtype,
                        int64_t ndims, const int64_t *shape, int64_t dim, const void *in,
                        void *out);
/** Elementwise sum / max / min over the group (`count` elements; in == out is
 *  allowed). Integers wrap; float max/min propagate NaN; i1 has max/min only. */
void shardrt_all_reduce(shardrt_context *ctx, int64_t op, const shardrt_group *group, int64_t dtype,
                        int64_t count, int64_t kind, const void *in, void *out);
/** Sum over the group, then keep block (group index) of `dim`:
 *  shape[dim] must be a multiple of n; out has shape[dim] / n there. */
void shardrt_reduce_scatter(shardrt_context *ctx, int64_t op, const shardrt_group *group,
                            int64_t dtype, int64_t ndims, const int64_t *shape, int64_t dim,
                            const void *in, void *out);
/** Splits `split_dim` into n blocks (a multiple of n), sends block j to
 *  member j and concatenates what arrives along `concat_dim` in sender order. */
void shardrt_all_to_all(shardrt_context *ctx, int64_t op, const shardrt_group *group, int64_t dtype,
                        int64_t ndims, const int64_t *shape, int64_t split_dim, int64_t concat_dim,
                        const void *in, void *out);
/** Keeps block (group index) of ceil(shape[dim] / n) elements of `dim`,
 *  zero past shape[dim]. Local: no communication. */
void shardrt_all_slice(shardrt_context *ctx, int64_t op, const shardrt_group *group, int64_t dtype,
                       int64_t ndims, const int64_t *shape, int64_t dim, const void *in, void *out);
/** pairs[2i] sends its `count` elements to pairs[2i+1]: positions on `mesh`,
 *  or device ids when mesh is -1. A device that is no target gets zeros. */
void shardrt_collective_permute(shardrt_context *ctx, int64_t op, int64_t mesh, int64_t num_pairs,
                                const int64_t *pairs, int64_t dtype, int64_t count, const void *in,
                                void *out);
/* ---- an all_gather consumed block by block (a collective matmul) ----------
 * The generated code of a contraction whose operand is an all_gather's
 * result starts the exchange, computes with its own block, and with each
 * other member's block once it has arrived, calling progress between pieces
 * of compute (MPI moves large messages only inside MPI calls). One such
 * gather is in flight at a time. */

/** Posts the exchange of `count` elements of `in` among `group` (nonblocking
 *  point-to-point): member k's block will be at out + k * count elements
 *  (block order, not concatenated along a dim; this member's own block is
 *  not copied). Returns this member's group index. */
int64_t shardrt_gather_start(shardrt_context *ctx, int64_t op, const shardrt_group *group,
                             int64_t dtype, int64_t count, const void *in, void *out);
/** Lets MPI move the exchange along; returns at once. */
void shardrt_gather_progress(shardrt_context *ctx);
/** Waits until member `member`'s block has arrived (yielding the core). */
void shardrt_gather_wait(shardrt_context *ctx, int64_t member);
/** Waits for the sends, then records the all_gather under its op: its bytes,
 *  and as its time the time spent waiting (what the compute did not hide). */
void shardrt_gather_finish(shardrt_context *ctx);
/** Moves a global tensor from one layout to another (a `reshard` between
 *  meshes): `from` and `to` describe the same global shape and dtype (names
 *  may be NULL), each with its mesh and sharding. Every rank calls it. `in`
 *  is this rank's local (padded) shard under `from` (ignored on a rank with
 *  no place on from's mesh); `out` receives its shard under `to`, padding
 *  zeroed (ignored on a rank with no place on to's mesh). Each element comes
 *  from one holder: the rank itself when it holds it (no message), else one
 *  replica chosen to spread the load. Point-to-point over MPI_COMM_WORLD. */
void shardrt_redistribute(shardrt_context *ctx, int64_t op, const shardrt_tensor *from,
                          const shardrt_tensor *to, const void *in, void *out);
/** This rank's coordinate along `axis` of `mesh` (a sub-axis: its digit). */
int32_t shardrt_axis_index(shardrt_context *ctx, int64_t mesh, const shardrt_axis_ref *axis);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SHARDRT_H */
