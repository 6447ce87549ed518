/* The STREAM triad a[i] = b[i] + s * c[i] over N f32 per rank, every rank at
 * once (mpiexec -n R), as the bandwidth reference of the fused elementwise
 * benchmark. Counted bytes per rank: 3 * 4 * N, as STREAM counts them.
 *   mpiexec -n R bench-triad N REPEATS   -> one "time S" line per run */
#include "common.h"
#include "mpi_timing.h"

int main(int argc, char **argv) {
  const char *program = "bench-triad";
  MPI_Init(&argc, &argv);
  if (argc != 3) {
    fprintf(stderr, "usage: %s N REPEATS\n", program);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  long n = peer_positive(program, "N", argv[1]);
  long repeats = peer_positive(program, "REPEATS", argv[2]);
  float *a = peer_alloc(program, (size_t)n * sizeof(float));
  float *b = peer_alloc(program, (size_t)n * sizeof(float));
  float *c = peer_alloc(program, (size_t)n * sizeof(float));
  for (long i = 0; i < n; ++i) {
    a[i] = 0;
    b[i] = (float)peer_value((size_t)i);
    c[i] = (float)peer_value((size_t)i + 1);
  }
  const float s = 3.0f;
  for (long run = 0; run < repeats; ++run) {
    double start = peer_run_start();
    for (long i = 0; i < n; ++i)
      a[i] = b[i] + s * c[i];
    peer_run_end(start);
  }
  /* Keep the stores observable so the loop cannot be dropped. */
  volatile float sink = a[n / 2];
  (void)sink;
  free(a);
  free(b);
  free(c);
  MPI_Finalize();
  return 0;
}
