/* C = A * B for square N x N matrices in one process with OpenBLAS on T
 * threads: the single-node peer of the sharded matmul.
 *   bench-blas-gemm f32|f64 N THREADS REPEATS   -> one "time S" line per run */
#include "common.h"

#include <cblas.h>
#include <time.h>

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  const char *program = "bench-blas-gemm";
  if (argc != 5) {
    fprintf(stderr, "usage: %s f32|f64 N THREADS REPEATS\n", program);
    return 2;
  }
  int f64 = peer_is_f64(program, argv[1]);
  long n = peer_positive(program, "N", argv[2]);
  long threads = peer_positive(program, "THREADS", argv[3]);
  long repeats = peer_positive(program, "REPEATS", argv[4]);
  openblas_set_num_threads((int)threads);
  void *a = NULL, *b = NULL, *c = NULL;
  peer_gemm_operands(program, (size_t)n * (size_t)n, f64, &a, &b, &c);

  for (long run = 0; run < repeats; ++run) {
    double start = seconds();
    if (f64)
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, a, (int)n,
                  b, (int)n, 0.0, c, (int)n);
    else
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0f, a,
                  (int)n, b, (int)n, 0.0f, c, (int)n);
    printf("time %.9f\n", seconds() - start);
  }
  free(a);
  free(b);
  free(c);
  return 0;
}
