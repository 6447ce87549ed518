/* C = A * B for square N x N matrices with ScaLAPACK's p?gemm, all three
 * distributed block-cyclically with NB x NB blocks over the most square
 * process grid of the ranks: the distributed-memory peer of shardc's matmul.
 *   mpiexec -n R bench-scalapack-gemm f32|f64 N NB REPEATS -> "time S" per run */
#include "common.h"
#include "mpi_timing.h"

/* BLACS and ScaLAPACK have no C header in Debian's package: their C and
 * Fortran entry points, as libscalapack-mpich exports them. */
void Cblacs_get(int context, int what, int *value);
void Cblacs_gridinit(int *context, const char *order, int rows, int cols);
void Cblacs_gridinfo(int context, int *rows, int *cols, int *row, int *col);
void Cblacs_gridexit(int context);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *context, const int *lld, int *info);
void psgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const float *alpha, const float *a, const int *ia, const int *ja, const int *desca,
             const float *b, const int *ib, const int *jb, const int *descb, const float *beta,
             float *c, const int *ic, const int *jc, const int *descc);
void pdgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc);

int main(int argc, char **argv) {
  const char *program = "bench-scalapack-gemm";
  MPI_Init(&argc, &argv);
  if (argc != 5) {
    fprintf(stderr, "usage: %s f32|f64 N NB REPEATS\n", program);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int f64 = peer_is_f64(program, argv[1]);
  int n = (int)peer_positive(program, "N", argv[2]);
  int nb = (int)peer_positive(program, "NB", argv[3]);
  long repeats = peer_positive(program, "REPEATS", argv[4]);
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int prow = 1;
  for (int p = 1; p * p <= ranks; ++p)
    if (ranks % p == 0)
      prow = p;
  int pcol = ranks / prow;

  int context = 0;
  Cblacs_get(-1, 0, &context);
  Cblacs_gridinit(&context, "Row", prow, pcol);
  int rows = 0, cols = 0, myrow = 0, mycol = 0;
  Cblacs_gridinfo(context, &rows, &cols, &myrow, &mycol);
  int zero = 0, one = 1, info = 0;
  int localRows = numroc_(&n, &nb, &myrow, &zero, &prow);
  int localCols = numroc_(&n, &nb, &mycol, &zero, &pcol);
  int lld = localRows > 1 ? localRows : 1;
  int desc[9];
  descinit_(desc, &n, &n, &nb, &nb, &zero, &zero, &context, &lld, &info);
  if (info != 0) {
    fprintf(stderr, "%s: descinit failed (info %d)\n", program, info);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  void *a = NULL, *b = NULL, *c = NULL;
  peer_gemm_operands(program, (size_t)localRows * (size_t)localCols, f64, &a, &b, &c);

  for (long run = 0; run < repeats; ++run) {
    double start = peer_run_start();
    if (f64) {
      double alpha = 1, beta = 0;
      pdgemm_("N", "N", &n, &n, &n, &alpha, a, &one, &one, desc, b, &one, &one, desc, &beta, c,
              &one, &one, desc);
    } else {
      float alpha = 1, beta = 0;
      psgemm_("N", "N", &n, &n, &n, &alpha, a, &one, &one, desc, b, &one, &one, desc, &beta, c,
              &one, &one, desc);
    }
    peer_run_end(start);
  }
  free(a);
  free(b);
  free(c);
  Cblacs_gridexit(context);
  MPI_Finalize();
  return 0;
}
