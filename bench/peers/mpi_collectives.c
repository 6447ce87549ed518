/* One raw MPI collective on the byte counts of a shardc reshard benchmark, as
 * hand-written MPI would call it (blocking, separate send and receive buffers),
 * the reference for shardc's collective time.
 *   mpiexec -n R bench-mpi-collectives KIND BYTES REPEATS
 * KIND: all_gather (BYTES = the gathered result), all_to_all, all_reduce,
 * reduce_scatter (BYTES = the operand), collective_permute (BYTES sent to the
 * next rank, received from the previous). f32 elements.
 * all_to_all_by_hand is the resharding [{"x"}, {}] -> [{}, {"x"}] of a
 * rows x 256 local block written by hand: each destination's columns packed
 * into a contiguous block, then MPI_Alltoall. */
#include "common.h"
#include "mpi_timing.h"

int main(int argc, char **argv) {
  const char *program = "bench-mpi-collectives";
  MPI_Init(&argc, &argv);
  int ranks = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 4) {
    fprintf(stderr, "usage: %s KIND BYTES REPEATS\n", program);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char *kind = argv[1];
  long bytes = peer_positive(program, "BYTES", argv[2]);
  long repeats = peer_positive(program, "REPEATS", argv[3]);
  long count = bytes / (long)sizeof(float);
  if (count % (256 * ranks) != 0) {
    fprintf(stderr, "%s: %ld f32 elements are not rows of 256 that split over %d ranks\n", program,
            count, ranks);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  float *in = peer_alloc(program, (size_t)count * sizeof(float));
  float *out = peer_alloc(program, (size_t)count * sizeof(float));
  float *packed = peer_alloc(program, (size_t)count * sizeof(float));
  for (long i = 0; i < count; ++i) {
    in[i] = (float)peer_value((size_t)i);
    out[i] = 0;
    packed[i] = 0;
  }
  int block = (int)(count / ranks);
  for (long run = 0; run < repeats; ++run) {
    double start = peer_run_start();
    if (strcmp(kind, "all_gather") == 0) {
      MPI_Allgather(in, block, MPI_FLOAT, out, block, MPI_FLOAT, MPI_COMM_WORLD);
    } else if (strcmp(kind, "all_to_all") == 0) {
      MPI_Alltoall(in, block, MPI_FLOAT, out, block, MPI_FLOAT, MPI_COMM_WORLD);
    } else if (strcmp(kind, "all_to_all_by_hand") == 0) {
      long cols = 256, rows = count / cols, piece = cols / ranks;
      for (int j = 0; j < ranks; ++j)
        for (long r = 0; r < rows; ++r)
          memcpy(packed + (size_t)j * block + (size_t)(r * piece), in + r * cols + j * piece,
                 (size_t)piece * sizeof(float));
      MPI_Alltoall(packed, block, MPI_FLOAT, out, block, MPI_FLOAT, MPI_COMM_WORLD);
    } else if (strcmp(kind, "all_reduce") == 0) {
      MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    } else if (strcmp(kind, "reduce_scatter") == 0) {
      MPI_Reduce_scatter_block(in, out, block, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    } else if (strcmp(kind, "collective_permute") == 0) {
      MPI_Sendrecv(in, (int)count, MPI_FLOAT, (rank + 1) % ranks, 0, out, (int)count, MPI_FLOAT,
                   (rank + ranks - 1) % ranks, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      if (rank == 0)
        fprintf(stderr, "%s: unknown kind '%s'\n", program, kind);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    peer_run_end(start);
  }
  free(in);
  free(out);
  free(packed);
  MPI_Finalize();
  return 0;
}
